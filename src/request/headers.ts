/**
 * Header policy, host -> seller (ARCHITECTURE §5 "Headers").
 *
 * - End-to-end headers pass unchanged: `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
 *   `Mcp-Name`, `Mcp-Param-*`, `Authorization`, `Accept`, `Content-Type`, cookies, and the rest.
 * - Hop-by-hop headers (RFC 9110 §7.6.1) and those named in `Connection` are stripped
 *   (@fastify/reply-from strips `Connection` and its list; this strips the fixed set), and
 *   every `Proxy-*` field, by prefix, with `Proxy` and `Proxy_*` ({@link isStrippedRequestHeader}).
 * - A name holding `_` is judged as its `-` spelling (CGI, WSGI, PHP, Rack read them alike):
 *   `Last_Event_ID`, `X_Max_Response_Bytes` are stripped, and so are `Mcp_Session_Id` and
 *   `Mcp_Protocol_Version`, whose dash spellings the gateway judges ({@link isWithheld}).
 * - `X-Max-Response-Bytes` is the gateway's own and is never forwarded.
 * - `Origin` and `Referer` (a browser page's) are the gateway's to check, never forwarded.
 * - `Accept-Encoding` is the gateway's choice, never the host's: the gateway decodes, so it
 *   asks only for codings it can bound.
 * - A header set in the agent's config replaces the host's header of the same name, and its
 *   twins: the host's names that are that name when `_` is read as `-` ({@link configuredTwins}).
 * - `Last-Event-ID` carries a gateway resume token on the host side; the seller gets back
 *   its own event id from inside the verified token (ARCHITECTURE §4).
 * - `Host` is the seller's (set by @fastify/reply-from from the agent URL).
 * - `Via` is the host's with the gateway's own entry appended (RFC 9110 §7.6.3; request/via.ts):
 *   how the gateway recognizes a request that comes back to it (`request_loop`).
 * - A request forwarded without a body (a GET, a DELETE: {@link BODY_HEADERS}) carries none of
 *   the host's headers that describe one.
 */
import { dashSpelling } from '../config/owned-headers.js';
import type { AgentConfig } from '../config/types.js';
import { appendVia } from './via.js';
import { isProxyFamilyName, PROXY_FIRST } from './proxy-name.js';

/**
 * A header name reserved for the gateway (it once carried the exchange key to the upstream
 * dispatcher, which now gets the exchange's hooks with the header object itself:
 * routing/dispatcher.ts `withUpstreamHooks`): a host's header of that name is never forwarded.
 */
export const EXCHANGE_HEADER = 'x-adcp-gateway-exchange';

/** Request headers never forwarded to a seller, by name (lower-case); every `Proxy-*`, `Proxy` and `Proxy_*` name too ({@link isStrippedRequestHeader}). */
export const STRIPPED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // undici refuses to send `expect` (and Node already answered any 100-continue to the host).
  'expect',
  'x-max-response-bytes',
  'accept-encoding',
  // Translated, never forwarded as the host sent it: the host holds gateway resume tokens (ARCHITECTURE §4).
  'last-event-id',
  EXCHANGE_HEADER,
  // A browser page's, checked by the gateway (allowed_origins, loopback origins:
  // request/browser-guard.ts) and answered by it: the seller is not the server the page
  // talks to. Forwarded, `Origin: http://localhost:6274` made a seller that validates Origin
  // (MCP Streamable HTTP requires it) refuse the local tool the gateway serves, and told every
  // seller the buyer's local page (a new user's trial, 2026-12-03). An agent's configured
  // header of either name is still sent.
  'origin',
  'referer',
]);

/**
 * Request headers that describe a body (RFC 9110 §8.3 Content-Type, §8.4 Content-Encoding, §8.6
 * Content-Length), lower-case: not forwarded with a request the gateway sends without one. A
 * GET's body is never read (Fastify reads none for a bodyless method), and a DELETE's is read
 * but never forwarded: a DELETE ends the session (MCP Streamable HTTP, Session Management) and
 * carries no JSON-RPC message, so its 2xx answer is never judged as one (docs/errors.md). A
 * DELETE body forwarded as sent let a seller that routes on the body answer a `tools/call`
 * with its result outside the tool's limits and rewrite (a hostile new-user trial 16, L2:
 * test/regressions/delete-body-forwarded-escapes-limits.test.ts). Left, the host's
 * `Content-Length: 7` would announce bytes that never come, and its `Content-Type` a body
 * that is not there. `Transfer-Encoding` is hop-by-hop, never forwarded
 * ({@link STRIPPED_REQUEST_HEADERS}). An agent's configured header of these names is still sent
 * (none may be configured: config/owned-headers.ts).
 */

/**
 * True when the host's request header `name` (lower-case) is never forwarded: one of
 * {@link STRIPPED_REQUEST_HEADERS}, or a `Proxy-*` name, or `Proxy` or a `Proxy_*` one (names
 * CGI and WSGI read as `HTTP_PROXY`, httpoxy, and as the `Proxy-*` ones: proxy-name.ts; hostile
 * trial 30, L3: test/regressions/proxy-lookalike-headers-pass.test.ts), or the underscore twin
 * of one ({@link isWithheld}). The `Proxy-*` fields are for the
 * proxies between the host and the gateway, which is the host's origin (`Proxy-Authorization`,
 * RFC 9110 §11.7.2; `Proxy-Connection`, a pre-standard hop-by-hop field; `Proxy-Status`, RFC
 * 9209), never for a seller, as the seller's `Proxy-*` response fields are never the host's
 * (response/headers.ts). By prefix rather than by name: only `Proxy-Connection`,
 * `Proxy-Authorization` and `Proxy-Authenticate` were listed, and a host's `Proxy-Status` or
 * `Proxy-Foo` reached every seller while the README said none does (found fixing hostile trial
 * 28, L3 a: test/regressions/host-proxy-headers-forwarded.test.ts).
 */
export function isStrippedRequestHeader(name: string): boolean {
  return isWithheld(name, true, dashedName(name));
}

export const BODY_HEADERS: readonly string[] = ['content-length', 'content-type', 'content-encoding'];
const BODY_HEADER_SET: ReadonlySet<string> = new Set(BODY_HEADERS);

/**
 * Headers the gateway judges and forwards as the host wrote them (a repeated `Mcp-Session-Id`
 * or `MCP-Protocol-Version` is refused; routing/handler.ts): their underscore twins
 * (`Mcp_Session_Id`) are stripped ({@link isWithheld}), the dash spellings pass.
 */
const JUDGED_HEADERS: ReadonlySet<string> = new Set(['mcp-session-id', 'mcp-protocol-version']);

/**
 * Whether the host's request header `name` (lower-case) is withheld from the seller: a
 * stripped name ({@link isStrippedName}), a header of a body when the request goes without one
 * (`withBody` false: {@link BODY_HEADERS}), or, for a name holding `_`, the same judged of its
 * `-` spelling, and the twins of {@link JUDGED_HEADERS}.
 *
 * Why the twins: CGI, WSGI, PHP and Rack read `_` and `-` in a header name alike (RFC 3875
 * §4.1.18: `HTTP_` and the name upper-cased, `-` as `_`), so a seller behind one reads
 * `Last_Event_ID` as `Last-Event-ID` and `Mcp_Session_Id` as `Mcp-Session-Id`, as `Proxy_*`
 * was read as `Proxy-*` (proxy-name.ts). A GET's `Last_Event_ID: seller-evt-42` reached the
 * seller as a resume id, though an unverified resume id never reaches a seller (ARCHITECTURE
 * §4), and `Mcp_Session_Id: other` beside `Mcp-Session-Id: sid1` passed the repeated-session-id
 * refusal (a review of the request side, L2:
 * test/regressions/underscore-twin-headers-reach-seller.test.ts). A twin of a session or
 * protocol header is stripped rather than refused: the host's real header is the dash one.
 *
 * Cost per header: one Set lookup, a comparison of its first letter; `dashed` is the name's
 * `-` spelling when it holds `_` (undefined otherwise), made once by the caller
 * ({@link dashedName}: applyRequestHeaderPolicy, which gives it to {@link isTwinOf} too).
 */
function isWithheld(name: string, withBody: boolean, dashed: string | undefined): boolean {
  if (isStrippedName(name) || (!withBody && BODY_HEADER_SET.has(name))) return true;
  if (dashed === undefined) return false;
  return isStrippedName(dashed) || JUDGED_HEADERS.has(dashed) || (!withBody && BODY_HEADER_SET.has(dashed));
}

/** The `-` spelling of a header name holding `_` (config/owned-headers.ts dashSpelling), else undefined: made once per name for {@link isWithheld} and {@link isTwinOf}. */
function dashedName(name: string): string | undefined {
  return name.includes('_') ? dashSpelling(name) : undefined;
}

/** One of {@link STRIPPED_REQUEST_HEADERS}, `Proxy` or a `Proxy-*` / `Proxy_*` name; the family is checked only for names starting with `p`. */
function isStrippedName(name: string): boolean {
  return STRIPPED_REQUEST_HEADERS.has(name) || (name.charCodeAt(0) === PROXY_FIRST && isProxyFamilyName(name));
}

/**
 * The header object to send the seller: a fresh copy of the one @fastify/reply-from built (a
 * copy of the host's headers with `host` and `content-length` already set for the seller),
 * rewritten. `headers` itself is not changed.
 *
 * Why a copy: reply-from deletes `connection` from its object, which turns it into a
 * dictionary-mode one, and then copies what this returns with `Object.assign` (its
 * lib/request.js handleUndici), which on a dictionary-mode source takes V8's slow path. One
 * walk of the names here into a fresh fast-mode object, then the fast copy, cost less than
 * the lookups on the dictionary and its slow copy (issue 5, 1 KiB `tools/call`: ~1.3 µs less
 * per request in a loop, Node 20).
 *
 * A stripped header is set to `undefined`, not deleted: undici sends no field for an
 * undefined value, and a `delete` turns the object into a slow dictionary-mode one for
 * everything that reads it next (@fastify/reply-from copies it, undici walks it). A header
 * the gateway sets (`accept-encoding`, `last-event-id`, the agent's) keeps the position the
 * host's field of that name had, if any (field order across names carries no meaning, RFC
 * 9110 §5.3). `viaEntry` is the gateway's own Via entry for this request (`1.1 <pseudonym>`,
 * request/via.ts), appended to the host's Via (an agent may not configure `via`: schema.ts).
 * `withBody` false: the request goes without a body (a GET, a DELETE), so the host's
 * {@link BODY_HEADERS} are stripped too. A name holding `_` is judged as its `-` spelling
 * ({@link isWithheld}), and a host's header that is a configured one's twin is withheld
 * ({@link configuredTwins}).
 */
export function applyRequestHeaderPolicy(
  headers: Record<string, string | string[] | undefined>,
  agent: AgentConfig,
  acceptEncoding: string,
  lastEventId: string | undefined,
  viaEntry: string,
  withBody: boolean,
): Record<string, string | string[] | undefined> {
  // Every name in the order reply-from wrote it (for-in walks own string keys in insertion
  // order, as Object.assign and undici's Object.keys do), a stripped one with no value.
  const out: Record<string, string | string[] | undefined> = {};
  const configured = agent.headers;
  const twins = configuredTwins(configured);
  if (twins === undefined) {
    for (const name in headers) out[name] = isWithheld(name, withBody, dashedName(name)) ? undefined : headers[name];
  } else {
    for (const name in headers) {
      // The `-` spelling of a name holding `_`, made once for both checks (review 31, finding 7).
      const dashed = dashedName(name);
      out[name] = isWithheld(name, withBody, dashed) || isTwinOf(twins, name, dashed) ? undefined : headers[name];
    }
  }
  for (const name in configured) out[name] = configured[name];
  out['accept-encoding'] = acceptEncoding;
  if (lastEventId !== undefined) out['last-event-id'] = lastEventId;
  out.via = appendVia(out.via, viaEntry);
  return out;
}

/** An agent's configured header names in their `-` spelling, and whether one of them is written with `_`. */
interface ConfiguredTwins {
  readonly dashed: ReadonlySet<string>;
  readonly underscored: boolean;
}

/** Per configured `headers` object (one per agent and config load): its {@link ConfiguredTwins}, or null for none configured. */
const twinsOf = new WeakMap<Readonly<Record<string, string>>, ConfiguredTwins | null>();

/**
 * The twins to withhold for an agent's configured `headers` (names lower-cased by the loader),
 * or undefined when it configures none; computed once per object.
 *
 * Why: a configured header replaces the host's field of that name (the host's `X-Api-Key` is
 * never sent beside the agent's `x-api-key`), and a seller behind CGI, WSGI, PHP or Rack reads
 * `_` and `-` in a header name alike (RFC 3875 §4.1.18: both `HTTP_X_API_KEY`), so the host's
 * `X_Api_Key` is that field too, and is withheld as it is; either way round (a configured
 * `x_api_key` withholds the host's `X-Api-Key`). Reported failure (a docs review of the day's
 * changes, finding 8: a host's `X_Api_Key` reached the seller next to the configured
 * `x-api-key`: test/regressions/host-underscore-twin-of-configured-header-reaches-seller.test.ts).
 */
function configuredTwins(configured: Readonly<Record<string, string>>): ConfiguredTwins | undefined {
  let twins = twinsOf.get(configured);
  if (twins === undefined) {
    const names = Object.keys(configured);
    twins = names.length === 0 ? null : { dashed: new Set(names.map(dashSpelling)), underscored: names.some((n) => n.includes('_')) };
    twinsOf.set(configured, twins);
  }
  return twins ?? undefined;
}

/**
 * Whether the host's header `name` (lower-case) is a configured header's twin: its `-`
 * spelling (`dashed`, given when `name` holds `_`, else undefined) is a configured name's. A
 * name without `_` needs the lookup only when a configured name holds one (otherwise it is
 * the configured name itself or none: the configured value replaces it anyway).
 */
function isTwinOf(twins: ConfiguredTwins, name: string, dashed: string | undefined): boolean {
  if (dashed !== undefined) return twins.dashed.has(dashed);
  return twins.underscored && twins.dashed.has(name);
}

/**
 * Whether a seller's SSE event id can be sent back to it exactly in a `Last-Event-ID` header
 * (applyRequestHeaderPolicy), so that a resume token carrying it can be resumed: printable
 * ASCII, spaces and tabs only inside it. A header value is sent as Latin-1 bytes (the seller
 * sent its id as UTF-8: `é` would come back as another byte string), undici refuses
 * characters above U+00FF and control characters, and HTTP parsers strip a value's leading
 * and trailing whitespace (RFC 9110 §5.5). The SSE stage forwards an event whose id fails
 * this without an id, and drops such an id-only block, as it does when no token can be minted.
 * Reported failure (a new user, 2026-12-02): ids like `é\u2028😀` got tokens, and the resume
 * then answered `upstream_unreachable` (undici: "invalid last-event-id header") without
 * contacting the seller (test/regressions/sse-resume-method-and-body.test.ts).
 */
export function isResumableEventId(id: string): boolean {
  return RESUMABLE_EVENT_ID.test(id);
}

/** Printable ASCII, with spaces and tabs only between printable characters. */
const RESUMABLE_EVENT_ID = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;
