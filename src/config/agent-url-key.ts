/**
 * Whether two agent urls name the same resource: the one comparison the gateway makes between
 * an agent's old and new `url` (a reload's moved check, routing/open-streams.ts) and the text a
 * resume token is signed for (resume/token.ts), so that they agree.
 *
 * The url is parsed by the WHATWG URL parser (the config's `URL`), which already writes one
 * spelling for a host's case, IDNA, an IP address's forms, dot segments (`/a/../mcp`, `%2e%2e`
 * included) and a default port. On its serialization (`href`), the key then applies RFC 3986
 * §6.2.2's syntax-based normalization where the parser does not:
 * - an empty query (`/mcp?`) is no query (`URL.search` is `''` for both; `href` keeps the `?`);
 * - a percent-encoded unreserved character (ALPHA, DIGIT, `-`, `.`, `_`, `~`: §2.3, §6.2.2.2)
 *   is decoded, in the path, the query and the userinfo (`/m%63p` is `/mcp`, `%7e` is `~`);
 * - every other percent-encoding's hex is upper case (§6.2.2.1: `%2f` is `%2F`);
 * - a fragment is ignored: it is never sent to a server (RFC 9110 §4.2.4), so it cannot name
 *   another resource there (an agent's `url` may not have one anyway: config/load.ts).
 * Nothing else is equated: `+` and `%20`, `%2F` and `/`, a trailing slash, query parameter
 * order, `http` and `https` are different urls to a server, and stay different here.
 *
 * Reported failure (hostile trial 36, F5): a reload that only respelled an agent's url (`/mcp?`,
 * `/m%63p`) counted as a move: its open GET streams ended `agent_url_changed` and its resume
 * tokens were refused (test/regressions/reload-url-spelling-counts-as-moved.test.ts).
 */

/** A character RFC 3986 §2.3 calls unreserved: percent-encoding it changes nothing. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;
const PERCENT_ENCODED = /%([0-9A-Fa-f]{2})/g;

/** `text` with its percent-encoded unreserved characters decoded and every other percent-encoding's hex upper-cased. */
function normalizePercentEncoding(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(PERCENT_ENCODED, (_whole, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/**
 * The keys made for URL objects whose key is not their `href`, with the `href` each was made
 * from: resume/token.ts keys the agent's url on every mint and verify (and each previous url),
 * the same few URL objects every time. A URL is mutable: a key is used only while its object's
 * `href` is still the one it was made from.
 */
const madeKeys = new WeakMap<URL, { readonly href: string; readonly key: string }>();

/**
 * The text two urls share exactly when they name the same resource (module doc): the scheme,
 * the userinfo if any, the host and port as the URL parser writes them, then the path and the
 * query (none when empty) normalized. A string is parsed first (throws a `TypeError` when it is
 * no URL). A url with no `%`, no fragment and no empty query is its `href` (nothing else is
 * made: every token of a stream is signed for its agent's key); any other URL object's key is
 * made once and kept for it (a WeakMap) while its `href` stays the same.
 */
export function agentUrlKey(url: URL | string): string {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  const href = parsed.href;
  if (!href.includes('%') && !href.includes('#') && !href.endsWith('?')) return href;
  if (typeof url === 'string') return madeKey(parsed);
  const made = madeKeys.get(parsed);
  if (made !== undefined && made.href === href) return made.key;
  const key = madeKey(parsed);
  madeKeys.set(parsed, { href, key });
  return key;
}

/** {@link agentUrlKey} of a url whose key is not its `href`, made from its parts. */
function madeKey(parsed: URL): string {
  const user = normalizePercentEncoding(parsed.username);
  const password = normalizePercentEncoding(parsed.password);
  const userinfo = user === '' && password === '' ? '' : `${user}${password === '' ? '' : `:${password}`}@`;
  return `${parsed.protocol}//${userinfo}${parsed.host}${normalizePercentEncoding(parsed.pathname)}${normalizePercentEncoding(parsed.search)}`;
}

/** Whether `a` and `b` name the same resource ({@link agentUrlKey}). */
export function sameAgentUrl(a: URL | string, b: URL | string): boolean {
  return agentUrlKey(a) === agentUrlKey(b);
}

/** Where config/load.ts keeps an agent's {@link agentUrlKey}, made once when the agent is loaded. */
export const AGENT_URL_KEY: unique symbol = Symbol('agentUrlKey');

/**
 * The seller endpoint of `agent` as the gateway compares it ({@link agentUrlKey} of its `url`):
 * the key made at config load (config/load.ts, {@link AGENT_URL_KEY}), so a request reads it
 * and makes nothing; an agent made otherwise (tests) has its key made here. The scope of the
 * requests in flight and of the remembered cancellations (routing/in-flight-requests.ts,
 * routing/cancelled-requests.ts) as it is of resume tokens: two agents whose urls only respell
 * one endpoint (`/mcp?`, `/m%63p` for `/mcp`) share its ids and cancellations (hostile trial
 * 56, F2: they keyed on `url.href`, and a reused id through the respelled agent reached the
 * seller; test/regressions/respelled-agent-url-not-sharing-in-flight-ids.test.ts).
 */
export function agentKeyOf(agent: { readonly url: URL }): string {
  return (agent as { readonly [AGENT_URL_KEY]?: string })[AGENT_URL_KEY] ?? agentUrlKey(agent.url);
}
