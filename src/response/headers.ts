import type { FastifyReply } from 'fastify';
import { repeatedContentType } from './content-type.js';
import { isProxyFamilyName, PROXY_FIRST } from '../request/proxy-name.js';
import { agentCookiePath, scopeSetCookies } from './set-cookie.js';

/**
 * Header policy, seller -> host. Hop-by-hop headers (RFC 9110 §7.6.1) never pass; framing
 * headers are the gateway's to set, because it may decode or rewrite the body
 * (ARCHITECTURE §5: "whenever a body is decoded or rewritten, drop Content-Encoding and
 * recompute Content-Length"); so are the proxy hop's (every `Proxy-*`: RFC 9110 §11.7; and `Proxy`, `Proxy_*`), the CORS response headers (every `Access-Control-*`)
 * and the other headers of the origin's cross-origin policy (`Cross-Origin-*`,
 * `Timing-Allow-Origin`), the gateway's policy as a browser sees it, not the seller's; the
 * gateway's own header names (`X-Max-Response-Bytes`, `X-Adcp-Gateway-Exchange`), which a
 * seller could forge; and the headers that point the host at another URL
 * (`Location`, `Content-Location`, `Refresh`), which its client could follow past the
 * gateway, and those that steer the host's client for the gateway's origin (`Alt-Svc`,
 * `Strict-Transport-Security`, `Clear-Site-Data`, `Link`, `NEL`, `Report-To`, `Reporting-Endpoints`). `Set-Cookie` passes scoped to the agent's route ({@link scopeSetCookies}).
 * The headers that describe the seller's exact bytes (digests, `ETag`: {@link SELLER_BYTES_HEADERS})
 * pass only when those bytes reach the host unchanged ({@link dropSellerBytesHeaders}).
 * Everything else (`Mcp-Session-Id`, even one MCP does not allow, which the host is refused
 * for sending back: request/session-id-header.ts; `Content-Type`, ...) passes; a `Content-Type` sent
 * as several lines naming the same media type passes as its first ({@link filterResponseHeaders}). Names are lowercase (as
 * undici gives them): one Set lookup per header, and a prefix check for the names starting
 * with `a`, `c` or `p` ({@link isStrippedResponseHeader}).
 */
export const STRIPPED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  // `Proxy-Connection` and `Proxy-Authenticate`: every `Proxy-*` name, `Proxy` and `Proxy_*` (isStrippedResponseHeader).
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
  // RFC 2965's `Set-Cookie2` (obsoleted by RFC 6265, which no browser reads): Java's
  // `java.net.CookieManager` still does, and stored a seller's `Set-Cookie2: evil=S; Path=/`
  // (passed as sent, while its `Set-Cookie` lines are rebuilt and scoped: set-cookie.ts) at
  // `/`, then sent it to every agent (hostile trial 31, M1:
  // test/regressions/seller-set-cookie2-reaches-host.test.ts). MCP sets no cookies of its own.
  'set-cookie2',
  // Every `Access-Control-*` and `Cross-Origin-*` name is stripped too, by prefix
  // (STRIPPED_RESPONSE_PREFIXES), and so is this one: the origin's cross-origin policy.
  // `Timing-Allow-Origin` lets the pages it names read the answer's detailed timings (a new
  // user's trial 9, F8: test/regressions/seller-cors-family-headers-pass.test.ts).
  'timing-allow-origin',
  // The gateway's own header names: `X-Max-Response-Bytes` is the host's per-call limit to
  // the gateway, never forwarded to a seller, and `X-Adcp-Gateway-Exchange` is reserved
  // (request/headers.ts EXCHANGE_HEADER; config/schema.ts refuses both as agent headers). A
  // seller's forged copy could mislead a host or proxy that reads them (trial 9, F8).
  'x-max-response-bytes',
  'x-adcp-gateway-exchange',
  // URLs the seller chooses for the host to go to: a redirect target (a 201's, or any
  // answer's), the body's own URL, a reload after a delay. The host's HTTP client (or a host
  // that acts on them) could follow one past the gateway, to a URL of the seller's choosing,
  // with whatever credentials the host adds, outside every bound. 3xx answers are refused
  // (`upstream_not_mcp`); these went out on every other answer (a reviewer:
  // test/regressions/seller-location-header-reaches-host.test.ts). MCP Streamable HTTP uses none.
  'location',
  'content-location',
  'refresh',
  // Headers that steer the host's HTTP client for the gateway's whole origin, not this answer:
  // `Alt-Svc` tells it to reach that origin at another host and port (`h2="evil.example:443"`,
  // remembered for `ma` seconds: the host's next requests, credentials included, go there,
  // past the gateway), and `Strict-Transport-Security` makes it refuse plain HTTP to the
  // gateway's host name (`localhost`: every local service) for `max-age`. The gateway's origin
  // is not the seller's to configure (a new user's trial, 2026-12-03:
  // test/regressions/seller-location-header-reaches-host.test.ts). MCP uses neither.
  'alt-svc',
  'strict-transport-security',
  // Same kind: `Clear-Site-Data: "cookies", "storage"` makes a browser host wipe what it keeps
  // for the gateway's origin, which every seller shares (one seller could clear the others'
  // cookies), and `Link` asks a client to preload or preconnect to URLs the seller names (a
  // new user's second trial, 2026-12-03: test/regressions/seller-location-header-reaches-host.test.ts).
  // MCP uses neither. `WWW-Authenticate` still passes: MCP authorization reads it on a 401.
  'clear-site-data',
  'link',
  // Same kind, persisted for the gateway's origin too (review 37, F5:
  // test/regressions/seller-reporting-headers-reach-host.test.ts): `NEL` (Network Error
  // Logging) with `Report-To` makes a browser host remember, for `max_age` seconds, to report
  // its requests to the gateway's origin (failed ones, and with `success_fraction` every one:
  // URL, status, timing, its address as seen) to an endpoint the seller names, whatever seller
  // they were for; `Reporting-Endpoints` names where the origin's CSP, COOP and deprecation
  // reports go. MCP uses none.
  'nel',
  'report-to',
  'reporting-endpoints',
]);

/**
 * The seller's response headers that describe its exact body bytes, lowercase: they reach the
 * host only with those bytes ({@link dropSellerBytesHeaders}). The policy, with its sources:
 *
 * - `content-digest` (RFC 9530 §2): a digest of the message content, the bytes as sent, after
 *   any content coding.
 * - `repr-digest` (RFC 9530 §3): a digest of the selected representation data, which RFC 9110
 *   §8.1 defines as `Content-Encoding(Content-Type(data))`: the coding is part of the
 *   representation (RFC 9530 Appendix B, examples: a `br` answer's Repr-Digest is of the br-coded
 *   bytes, not of the JSON in it). So it changes when the gateway only removes a content
 *   coding, as when it rewrites the JSON: no case where it survives a change of bytes.
 * - `digest` (RFC 3230, obsoleted by RFC 9530): a digest of the "instance", content coding
 *   included; RFC 9530 §1.3 notes implementations computed it over the content as sent where
 *   the representation data was meant: either changes with the bytes.
 * - `content-md5` (RFC 1864; RFC 2616 §14.15: computed on the entity-body "including any
 *   content-coding that has been applied"; removed from HTTP by RFC 7231 Appendix B): an MD5
 *   of the body as sent.
 * - `etag` (RFC 9110 §8.8.3): a strong entity tag names exact representation bytes, and a
 *   content-coded representation needs a tag distinct from the unencoded one (§8.8.3,
 *   "Content codings are a property of the representation data"); a weak tag (`W/"…"`)
 *   names a set of semantically equivalent representations of the seller's choosing (§8.8.1).
 *   Both go, not weakened: a rewrite (a deduped text, a lift, U+FFFD repairs) is the gateway's
 *   body, not one the seller vouched for, and it follows the gateway's config (a reload may
 *   rewrite the same seller bytes differently under one tag), so a weakened tag would tell a
 *   cache two different bodies are equivalent. (nginx's `sub_filter` clears ETag too; its
 *   `gzip`/`gunzip` filters, which only change the coding, weaken it.) No conditional
 *   request through the gateway relies on it: MCP uses none, and a seller's 304 (or any 3xx)
 *   is refused `upstream_not_mcp` (pipeline.ts), so a host's `If-None-Match` can never get a
 *   stale body reused; a `412` to a host's `If-Match` is a 4xx, passed through as sent.
 *
 * Kept: `Last-Modified` (a date of the seller's resource, not of the bytes; RFC 9110 §8.8.2
 * makes it at most a weak validator, and with no 304 through the gateway it validates
 * nothing here), `Want-Content-Digest` / `Want-Repr-Digest` (the seller's wish for digests on
 * the host's requests, not a claim about this body), `Content-Type` (set by the JSON stage:
 * json-stage.ts sendJsonAnswer), `Content-Length` and `Content-Encoding` (always the
 * gateway's: {@link STRIPPED_RESPONSE_HEADERS}).
 *
 * When the bytes differ (each caller names its case): a content coding the gateway decoded
 * (pipeline.ts: every coded answer, whatever its kind or status), a 2xx JSON answer whose body
 * is not the seller's (a rewrite, a dropped BOM, a UTF-8 repair: json-stage.ts
 * sendJsonAnswer), an acknowledgement body dropped for an empty 202 (json-stage.ts dropAckBody;
 * review 37, F2: test/regressions/dropped-ack-body-keeps-seller-digest-headers.test.ts), and every SSE stream (sse-stage.ts: its head goes out before any event, and
 * the stage re-encodes events, turns event ids into resume tokens, drops events that break a
 * bound, repairs UTF-8 and may end with its own error event). The seller's bytes passed
 * through unchanged (an uncoded JSON answer left as it was, a 4xx, a DELETE's answer) keep
 * every one, byte for byte.
 *
 * Reported failure (a new user's hostile trial 12, M4): a gzip answer the gateway decoded and
 * deduped reached the host with the seller's `content-digest` (`sha-256=:jl7B…:`, of the
 * gzip bytes) over a body whose digest was `sha-256=:XNn9…:`, and `repr-digest`,
 * `content-md5` and `etag` passed unchanged too
 * (test/regressions/digest-headers-describe-seller-bytes.test.ts).
 */
export const SELLER_BYTES_HEADERS: readonly string[] = ['content-digest', 'repr-digest', 'digest', 'content-md5', 'etag'];

/**
 * Removes every {@link SELLER_BYTES_HEADERS} header from the reply: called whenever the body the
 * host gets is not the seller's bytes as sent (the cases are listed there), before the head is
 * written (a head written on the raw response drops them itself: {@link hijackAndWriteHead}).
 * Cost: five `removeHeader` calls, only on those answers.
 */
export function dropSellerBytesHeaders(reply: FastifyReply): void {
  for (const name of SELLER_BYTES_HEADERS) reply.removeHeader(name);
}

/**
 * Prefixes of header names stripped whatever follows (lowercase), beside
 * {@link STRIPPED_RESPONSE_HEADERS}:
 * - `access-control-`: the CORS response headers. A browser reads them as the gateway's own
 *   CORS policy: the seller's (`*`, credentials) must not decide which pages may read the
 *   gateway's answers (a new user's trial; the gateway serves no browser unless
 *   allowed_origins lists it, and answers no preflight). The six of the Fetch standard's
 *   CORS protocol were listed one by one, and `Access-Control-Allow-Private-Network`
 *   (Private Network Access) passed (a new user's trial 9, F8: "passes on no seller's CORS
 *   headers", the README said): every name of the family now, present and future.
 * - `cross-origin-`: `Cross-Origin-Resource-Policy` (which sites may embed the gateway's
 *   answers: `cross-origin` let any page load them with `no-cors`), `-Opener-Policy`,
 *   `-Embedder-Policy` and their `-Report-Only` forms: the gateway origin's isolation policy,
 *   which every seller shares, as `Alt-Svc` and `Clear-Site-Data` above (trial 9, F8).
 *
 * And the proxy family (request/proxy-name.ts isProxyFamilyName): every `Proxy-*` name, the
 * headers of the proxy hop, for the next client in the chain (the gateway), never the host:
 * `Proxy-Authenticate` (RFC 9110 §11.7.1), `Proxy-Authentication-Info` (§11.7.3),
 * `Proxy-Connection` (a pre-standard hop-by-hop header), and `Proxy-Status` (RFC 9209: what
 * the intermediaries between the gateway and the seller did, which the host would read as its
 * own proxies' word; the gateway is the host's origin). The host's client may act on any of
 * them for a proxy of its own. The family by prefix rather than by name: only
 * `Proxy-Authenticate` and `Proxy-Connection` were listed, and `Proxy-Authentication-Info`,
 * `Proxy-Status` and `Proxy-Foo` reached the host (hostile trial 28, L3 a:
 * test/regressions/proxy-authentication-info-reaches-host.test.ts). With it, `Proxy` and every
 * `Proxy_*` name, which CGI and WSGI read as `HTTP_PROXY` (httpoxy) and as the `Proxy-*` names:
 * a seller's `Proxy: c` and `Proxy_Foo: d` reached the host (hostile trial 30, L3:
 * test/regressions/proxy-lookalike-headers-pass.test.ts).
 */
export const STRIPPED_RESPONSE_PREFIXES: readonly string[] = ['access-control-', 'cross-origin-'];
const [ACCESS_CONTROL, CROSS_ORIGIN] = STRIPPED_RESPONSE_PREFIXES as [string, string];
/** `a`, `c`: their first letters, checked before any prefix (`p` for the proxy family: PROXY_FIRST). */
const A = ACCESS_CONTROL.charCodeAt(0);
const C = CROSS_ORIGIN.charCodeAt(0);

/**
 * True when the seller's response header `name` (lowercase) never reaches the host: one of
 * {@link STRIPPED_RESPONSE_HEADERS}, or a name with a {@link STRIPPED_RESPONSE_PREFIXES}
 * prefix, or a name of the proxy family (`Proxy-*`, `Proxy`, `Proxy_*`). Cost per header: one
 * Set lookup, up to three comparisons of its first letter, a prefix check only for names
 * starting `a`, `c` or `p`.
 */
export function isStrippedResponseHeader(name: string): boolean {
  if (STRIPPED_RESPONSE_HEADERS.has(name)) return true;
  const first = name.charCodeAt(0);
  if (first === A) return name.startsWith(ACCESS_CONTROL);
  if (first === C) return name.startsWith(CROSS_ORIGIN);
  if (first === PROXY_FIRST) return isProxyFamilyName(name);
  return false;
}

/**
 * The seller's response headers the host gets: all but {@link STRIPPED_RESPONSE_HEADERS},
 * those with a {@link STRIPPED_RESPONSE_PREFIXES} prefix, the proxy family ({@link isStrippedResponseHeader}), and the header names the seller's `Connection` header lists (its connection options: hop-by-hop
 * too, RFC 9110 §7.6.1; they reached the host before, a new user's trial:
 * test/regressions/delete-body-and-connection-headers.test.ts). Names are lowercase, as
 * undici gives them. The usual `keep-alive` and `close` values are not parsed. A
 * `Content-Type` repeated with equivalent values (an array; RFC 9110 §8.3.1: content-type.ts
 * repeatedContentType) becomes its first value, as sent; one with differing values is left
 * an array, for the pipeline to refuse (`upstream_not_mcp`). Given `agentName`, the
 * `Set-Cookie` lines are rebuilt, scoped to its route (set-cookie.ts scopeSetCookies), and
 * how many were dropped (a cookie-pair not strict) is added to `counts.cookiesDropped` (the
 * exchange: its line's `cookies_dropped`), when any was. An object rather than a callback: no
 * closure made per response.
 */
export function filterResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
  agentName?: string,
  counts?: { cookiesDropped: number | undefined },
): Record<string, string | string[] | undefined> {
  const connection = headers.connection;
  const named = connection === undefined || connection === 'keep-alive' || connection === 'close' ? undefined : connectionOptions(connection);
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in headers) {
    if (!isStrippedResponseHeader(name) && (named === undefined || !named.includes(name))) out[name] = headers[name];
  }
  // A repeated Content-Type (an array from undici) goes out as its first value when its lines
  // name the same media type (RFC 9110 §8.3.1: `application/json` and `Application/JSON`
  // agree): Fastify cannot read an array and labelled the body application/octet-stream (a new
  // user's trial, 2026-12-03: test/regressions/seller-duplicate-content-type-octet-stream.test.ts).
  // Lines that differ stay an array: the pipeline answers upstream_not_mcp instead (pipeline.ts).
  const type = out['content-type'];
  if (type !== undefined && typeof type !== 'string') out['content-type'] = repeatedContentType(type) ?? type;
  const cookies = out['set-cookie'];
  if (cookies !== undefined && agentName !== undefined) {
    const scoped = scopeSetCookies(cookies, agentCookiePath(agentName));
    const dropped = (typeof cookies === 'string' ? 1 : cookies.length) - scoped.length;
    // No line at all when every cookie was dropped (Fastify would write an empty one).
    if (scoped.length > 0) out['set-cookie'] = scoped;
    else delete out['set-cookie'];
    if (dropped > 0 && counts !== undefined) counts.cookiesDropped = (counts.cookiesDropped ?? 0) + dropped;
  }
  return out;
}

/** The header names a `Connection` header value lists (comma-separated tokens, any case), lowercase. */
function connectionOptions(value: string | string[]): string[] {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.split(',').map((token) => token.trim().toLowerCase());
}

/**
 * Takes the response over from Fastify (`reply.hijack()`) and writes its head on the raw
 * response: `status`, the headers the reply holds (the seller's, filtered:
 * {@link filterResponseHeaders}; unset ones left out) with `extra` over them, and without
 * {@link SELLER_BYTES_HEADERS} unless `sellerBytes` (the body that follows is the seller's
 * bytes as sent). For an answer Fastify's `send` would label or frame itself: an SSE stream
 * (sse-stage.ts: never the seller's bytes) and a body the seller sent with no Content-Type
 * (json-stage.ts sendUnlabelled: the seller's bytes, or decoded ones whose headers the
 * pipeline dropped already).
 */
export function hijackAndWriteHead(reply: FastifyReply, status: number, extra: Readonly<Record<string, string>>, sellerBytes: boolean): void {
  reply.hijack();
  // Fastify's getHeaders() is a fresh shallow copy: written into, with no second copy.
  const headers = reply.getHeaders();
  for (const name in headers) if (headers[name] === undefined) delete headers[name];
  if (!sellerBytes) for (const name of SELLER_BYTES_HEADERS) delete headers[name];
  Object.assign(headers, extra);
  reply.raw.writeHead(status, headers as Record<string, string | string[] | number>);
}
