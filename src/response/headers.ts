/**
 * Header policy, seller -> host. Hop-by-hop headers (RFC 9110 §7.6.1) never pass; framing
 * headers are the gateway's to set, because it may decode or rewrite the body
 * (ARCHITECTURE §5: "whenever a body is decoded or rewritten, drop Content-Encoding and
 * recompute Content-Length"); so are the CORS response headers, the gateway's policy as a
 * browser sees it, not the seller's. Everything else (`Mcp-Session-Id`, `Content-Type`, ...) passes.
 */
export const STRIPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
  // A browser reads these as the gateway's own CORS policy: the seller's (`*`, credentials)
  // must not decide which pages may read the gateway's answers (a new user's trial; the
  // gateway serves no browser unless allowed_origins lists it, and answers no preflight).
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
]);

/**
 * The seller's response headers the host gets: all but {@link STRIPPED_RESPONSE_HEADERS} and
 * the header names the seller's `Connection` header lists (its connection options: hop-by-hop
 * too, RFC 9110 §7.6.1; they reached the host before, a new user's trial:
 * test/regressions/delete-body-and-connection-headers.test.ts). Names are lowercase, as
 * undici gives them. The usual `keep-alive` and `close` values are not parsed.
 */
export function filterResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  const connection = headers.connection;
  const named = connection === undefined || connection === 'keep-alive' || connection === 'close' ? undefined : connectionOptions(connection);
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in headers) {
    if (!STRIPPED_RESPONSE_HEADERS.has(name) && (named === undefined || !named.includes(name))) out[name] = headers[name];
  }
  return out;
}

/** The header names a `Connection` header value lists (comma-separated tokens, any case), lowercase. */
function connectionOptions(value: string | string[]): string[] {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.split(',').map((token) => token.trim().toLowerCase());
}
