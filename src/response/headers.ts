/**
 * Header policy, seller -> host. Hop-by-hop headers (RFC 9110 §7.6.1) never pass; framing
 * headers are the gateway's to set, because it may decode or rewrite the body
 * (ARCHITECTURE §5: "whenever a body is decoded or rewritten, drop Content-Encoding and
 * recompute Content-Length"). Everything else (`Mcp-Session-Id`, `Content-Type`, ...) passes.
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
]);

export function filterResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in headers) {
    if (!STRIPPED_RESPONSE_HEADERS.has(name)) out[name] = headers[name];
  }
  return out;
}
