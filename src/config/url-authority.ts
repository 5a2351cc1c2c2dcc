/**
 * The host of an agent `url` as written: an `http:`/`https:` url must spell `//` and a
 * non-empty host after its scheme, read from the text, before any URL parser normalizes it;
 * and whether the text writes a userinfo (`urlWritesUserinfo`: an empty one the parser drops).
 *
 * Why from the text: WHATWG URL parsing (Node's `URL`, undici) forgives a missing authority
 * for the special schemes. It skips any number of `/` and `\` after `https:`, so
 * `https:///adcp/mcp` parses as host `adcp`, path `/mcp`; `http:/127.0.0.1:3001/mcp` and
 * `http:127.0.0.1:3001/mcp` parse as `http://127.0.0.1:3001/mcp`. The first path segment
 * becomes the host, and the agent's configured headers (its credentials) go there. RFC 9110
 * §4.2.1: an http(s) URI with an empty host is invalid. Reported failure: a new user's trial 9,
 * F4 (`url: "https://${SELLER_HOST}/adcp/mcp"` with `SELLER_HOST` set but empty passed
 * `--check-config` and sent the agent's `Authorization` to `adcp`;
 * test/regressions/empty-env-var-url-host.test.ts).
 */

/** What WHATWG URL parsing removes anywhere: ASCII tab and newlines. */
const TAB_OR_NEWLINE = /[\t\n\r]/g;
const HTTP_SCHEME = /^https?:/i;

/** `text` as WHATWG URL parsing first reduces it: outer C0 controls and spaces (U+0000..U+0020) trimmed, tabs and newlines removed. */
function reduced(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end).replace(TAB_OR_NEWLINE, '');
}

/** `writtenAuthority`'s answer for an `http:`/`https:` url whose scheme is not followed by `//`. */
const NO_SLASHES: unique symbol = Symbol('no // after the scheme');

/**
 * The authority of an `http:`/`https:` url's text as written: what lies between `//` and the
 * next `/`, `\`, `?` or `#` (WHATWG URL's authority state ends there for the special schemes),
 * after the text is reduced as the parser reduces it; `NO_SLASHES` when the scheme is not
 * followed by `//`; undefined for another scheme.
 */
function writtenAuthority(text: string): string | typeof NO_SLASHES | undefined {
  const url = reduced(text);
  const scheme = HTTP_SCHEME.exec(url);
  if (scheme === null) return undefined;
  const rest = url.slice(scheme[0].length);
  if (!rest.startsWith('//')) return NO_SLASHES;
  return /^[^/\\?#]*/.exec(rest.slice(2))?.[0] ?? '';
}

/**
 * Why an `http:`/`https:` url's text does not name its host explicitly, or undefined when it
 * does (or the scheme is another one: the caller reports the scheme).
 *
 * @param text the url as the config gives it, after `${VAR}` expansion. It is first reduced
 *   as WHATWG URL parsing reduces it (outer C0 controls and spaces trimmed, tabs and newlines
 *   removed), so the check reads the same characters the parser reads.
 * @returns a phrase for a config problem (never echoing the url, which may hold a secret):
 *   - the scheme not followed by `//` (`http:/host/...`, `http:host/...`, `https:\\host/...`);
 *   - nothing, or only a port or `user@`, between `//` and the next `/`, `\`, `?` or `#`
 *     (`https:///adcp/mcp`, `https://:443/mcp`, `https://@/mcp`).
 *   Never throws.
 */
export function urlAuthorityProblem(text: string): string | undefined {
  const authority = writtenAuthority(text);
  if (authority === undefined) return undefined;
  if (authority === NO_SLASHES) return 'must be written scheme://host[:port]/path: `//` and the host must follow the scheme';
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  const host = hostPort.startsWith('[') ? hostPort.slice(0, hostPort.indexOf(']') + 1) : hostPort.split(':', 1)[0];
  if (host === undefined || host === '') {
    return 'has no host between `//` and the path (a URL parser would take the first path segment as the host, and the agent\'s headers would go there)';
  }
  return undefined;
}

/**
 * Whether an `http:`/`https:` url's text writes a userinfo: an `@` between `//` and the host,
 * even with nothing before it (`https://@seller.example/mcp`, `https://:@seller.example/mcp`).
 * WHATWG URL parsing drops an empty userinfo, so the parsed url's `username` and `password`
 * are empty and a check of them passes it. RFC 9110 §4.2.4: a sender MUST NOT generate the
 * userinfo subcomponent (and its `@` delimiter) of an http(s) URI, and a recipient SHOULD
 * treat its presence as an error (it serves to obscure the authority). Reported failure: a
 * hostile new user's trial (test/regressions/agent-url-empty-userinfo.test.ts).
 *
 * @param text the url as the config gives it, after `${VAR}` expansion (reduced as in
 *   `urlAuthorityProblem`). An `@` in the path, query or fragment does not count.
 * @returns false for another scheme or a url without `//` (reported otherwise). Never throws.
 */
export function urlWritesUserinfo(text: string): boolean {
  const authority = writtenAuthority(text);
  return authority !== undefined && authority !== NO_SLASHES && authority.includes('@');
}
