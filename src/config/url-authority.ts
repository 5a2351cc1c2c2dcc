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
  return authoritySpan(text)?.authority;
}

/** {@link writtenAuthority}, and where it starts in the reduced text (0-based; -1 with `NO_SLASHES`). */
function authoritySpan(text: string): { authority: string | typeof NO_SLASHES; start: number } | undefined {
  const url = reduced(text);
  const scheme = HTTP_SCHEME.exec(url);
  if (scheme === null) return undefined;
  const rest = url.slice(scheme[0].length);
  if (!rest.startsWith('//')) return { authority: NO_SLASHES, start: -1 };
  return { authority: /^[^/\\?#]*/.exec(rest.slice(2))?.[0] ?? '', start: scheme[0].length + 2 };
}

/** The host of an authority as written: after the last `@`, before the port (an IPv6 literal with its brackets). */
function hostOf(authority: string): string {
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  return hostPort.startsWith('[') ? hostPort.slice(0, hostPort.indexOf(']') + 1) : (hostPort.split(':', 1)[0] ?? '');
}

/**
 * The host of an `http:`/`https:` url's text as written (reduced as in `urlAuthorityProblem`),
 * before any URL parser maps it; undefined for another scheme or a url without `//`.
 */
export function writtenHost(text: string): string | undefined {
  const authority = writtenAuthority(text);
  return authority === undefined || authority === NO_SLASHES ? undefined : hostOf(authority);
}

/**
 * The host a URL parser (WHATWG, as Node's `URL` and undici) reads in `text`, or undefined when
 * it does not parse or has none. Named in a problem to show what a written host turns into
 * (a host is no secret; a url's query or userinfo may be, and are never named).
 */
export function parsedHost(text: string): string | undefined {
  try {
    const host = new URL(text).hostname;
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

/**
 * Why an `http:`/`https:` url's text holds a `%` in its authority (between `//` and the next
 * `/`, `\`, `?` or `#`), or undefined when it holds none (or the scheme is another one).
 *
 * Why: WHATWG URL parsing percent-decodes a host before its IDNA mapping, so the ASCII-only
 * `http://exam%C2%ADple.com/mcp` (a soft hyphen, encoded) is read as `example.com`,
 * `http://EXAMPLE.com%E3%80%82evil.com/mcp` (an ideographic full stop) as
 * `example.com.evil.com`, and `http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1:9/mcp` (full-width
 * digits) as `127.0.0.1`: the url-characters.ts refusal of those characters written as such
 * was bypassed (review 31, finding 1:
 * test/regressions/agent-url-non-ascii-quietly-rewritten.test.ts). A host never needs a `%`
 * (a port cannot hold one; a userinfo is refused anyway), so any `%` there is refused.
 *
 * @param text the url as the config gives it, after `${VAR}` expansion, with no whitespace or
 *   control character (url-characters.ts refuses those first: the position counted is then
 *   the position in `text`).
 * @returns the first `%`'s 1-based position, how many more there are, the host the parser
 *   would read when the `%` is in the host, and what to write instead. Never echoes the url.
 */
export function urlAuthorityPercentProblem(text: string): string | undefined {
  const span = authoritySpan(text);
  if (span === undefined || span.authority === NO_SLASHES) return undefined;
  const { authority, start } = span;
  const first = authority.indexOf('%');
  if (first === -1) return undefined;
  const count = authority.split('%').length - 1;
  const hostStart = authority.lastIndexOf('@') + 1;
  const inHost = first >= hostStart && first < hostStart + hostOf(authority).length;
  const host = inHost ? parsedHost(text) : undefined;
  return (
    'must not contain `%` between `//` and the path: a URL parser decodes a host\'s percent-encoded bytes before mapping it (IDNA), ' +
    'so the requests could go to another host than the one written (`exam%C2%ADple.com` is read as `example.com`), and a host never needs one: ' +
    `\`%\` at character ${start + first + 1}${count > 1 ? `, and ${count - 1} more` : ''}` +
    `${host === undefined ? '' : `; a URL parser reads this host as ${host}`}; ` +
    'write the host itself, an internationalized one in its punycode form (xn--...)'
  );
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
  if (hostOf(authority) === '') {
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
