/**
 * The one list of header names an agent's `headers:` may not set, each with the reason the
 * config error gives: the headers the gateway or the protocol owns per request, and those that
 * break every exchange. A configured header replaces the host's of the same name on every
 * request to the agent (request/headers.ts), so a name here would either be overwritten by the
 * gateway, or overwrite what each host (or the seller, through the host) sets for itself.
 *
 * - Every name the request header policy strips (request/headers.ts `STRIPPED_REQUEST_HEADERS`)
 *   except `origin` and `referer` (a configured one is sent on purpose): hop-by-hop headers are
 *   per connection (RFC 9110 §7.6.1; `proxy-*` by prefix), and `proxy`, the httpoxy name (review
 *   36, F5: it passed and was sent to every seller, though the gateway strips it from hosts:
 *   request/proxy-name.ts; test/regressions/config-header-proxy-accepted-sent-to-seller.test.ts); `expect` (undici refuses it, so
 *   every call failed `upstream_unreachable`: a new user's trial, 2026-12-03, F8);
 *   `x-max-response-bytes` (the gateway's own per-call header, never forwarded);
 *   `accept-encoding` (from the agent key `accept_encoding`); `last-event-id` (the seller's
 *   event id out of a host's resume token); `x-adcp-gateway-exchange` (reserved).
 * - What the gateway or its HTTP client sets: `host` (from the agent's `url`),
 *   `content-length` (computed), `via` (the host's with the gateway's entry appended,
 *   request/via.ts: a configured one would hide the host's entries from loop detection further
 *   on; a hostile new user's trial 10, F4).
 * - What each host sets for its own requests, as MCP Streamable HTTP has it: `content-type`
 *   and `content-encoding` (they describe the body the host sends: `content-encoding: gzip`
 *   mislabelled every plain body, trial F8 above), `accept` (MCP requires `application/json`
 *   and `text/event-stream` on a POST), `mcp-session-id` (the session the seller gave that
 *   host), `mcp-protocol-version` (the version that host negotiated), and every other `Mcp-*`
 *   name, by prefix (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` mirror the request's body). They
 *   passed `--check-config` and were sent verbatim, one `Mcp-Session-Id` for every host (a
 *   hostile new operator's trial 45, L6:
 *   test/regressions/config-headers-pin-per-request-transport-headers.test.ts).
 *
 * A name holding `_` is judged as its `-` spelling ({@link configuredHeaderRefusal}): CGI,
 * WSGI, PHP and Rack read `_` and `-` in a header name alike (RFC 3875 §4.1.18:
 * `HTTP_MCP_SESSION_ID`), as the request side has it for a host's names (request/headers.ts
 * isWithheld). `mcp_session_id: x`, `last_event_id: y`, `content_type: z` passed
 * `--check-config` and went to every seller (a docs review of the day's changes, finding 8:
 * test/regressions/config-headers-underscore-spelling-accepted.test.ts).
 */

import { PROXY } from '../request/proxy-name.js';

const HOP_BY_HOP = 'a hop-by-hop header';
const MCP_TRANSPORT =
  "an MCP transport header, which each host sets for its own requests (Mcp-Method, Mcp-Name, Mcp-Param-*): a configured one would replace every host's";

/** Header names (lower case) that may not be configured, with the reason. Prefixes (`proxy-`, `mcp-`): {@link forbiddenHeaderReason}. */
export const FORBIDDEN_HEADERS: ReadonlyMap<string, string> = new Map([
  ['connection', HOP_BY_HOP],
  ['keep-alive', HOP_BY_HOP],
  ['transfer-encoding', HOP_BY_HOP],
  ['te', HOP_BY_HOP],
  ['trailer', HOP_BY_HOP],
  ['upgrade', HOP_BY_HOP],
  [
    PROXY,
    'the httpoxy name: a seller behind CGI, WSGI, PHP or Rack reads it as `HTTP_PROXY`, the variable many HTTP clients take for their outbound proxy ' +
      "(CVE-2016-5385), so it would send its own requests through the configured one; the gateway strips it from every host's request",
  ],
  ['host', 'set from the agent `url`'],
  ['content-length', 'computed by the gateway'],
  ['content-type', 'set by each host for the body it sends (application/json): a configured one would mislabel every body'],
  ['content-encoding', 'the gateway forwards request bodies uncompressed, and this would mislabel every one'],
  [
    'accept',
    "set by each host for each request (MCP requires application/json and text/event-stream on a POST, text/event-stream on a GET): a configured one would replace every host's",
  ],
  ['mcp-session-id', 'the session the seller gave each host at initialize: a configured one would put every host in one session'],
  ['mcp-protocol-version', 'the MCP version each host negotiated at initialize: a configured one would tell the seller every host speaks it'],
  ['expect', 'the gateway sends each request whole, and its HTTP client refuses the header, so every call would fail'],
  ['x-max-response-bytes', "the gateway's per-call limit header, never forwarded"],
  ['accept-encoding', 'set from the agent key `accept_encoding`'],
  ['last-event-id', "set by the gateway from a host's resume token"],
  ['x-adcp-gateway-exchange', 'reserved for the gateway'],
  ['via', "set by the gateway: the host's Via with the gateway's own entry appended, by which it recognizes a request that loops back to it (RFC 9110 §7.6.3)"],
]);

/**
 * `__proto__`, refused by itself (not by its `-` spelling): a header object's assignment of it
 * sets the object's prototype rather than a field (request/headers.ts applyRequestHeaderPolicy,
 * then @fastify/reply-from's `Object.assign`), so the header was silently never sent (review
 * 36, F4: test/regressions/config-header-proto-never-sent.test.ts). Refused rather than copied
 * onto prototype-less objects: every object after the gateway's would drop it the same way.
 */
const PROTOTYPE_NAME = '__proto__';
const PROTOTYPE_REASON = "a JavaScript object's prototype name: the gateway's header objects take it as their prototype rather than as a field, so it would never be sent";

/** Who reads `_` in a header name as `-`: the words the config errors give for it. */
export const UNDERSCORE_READERS = 'a seller behind CGI, WSGI, PHP or Rack';

/** The spelling such a seller reads header `name` as: each `_` a `-`. */
export function dashSpelling(name: string): string {
  return name.includes('_') ? name.replaceAll('_', '-') : name;
}

/**
 * What follows "header `<name>` may not be configured" in the config error for `name`
 * (lower-cased), or undefined when it may be configured: `: <reason>`, judged as its
 * {@link dashSpelling} (the same reason, saying which name such a seller reads it as).
 */
export function configuredHeaderRefusal(name: string): string | undefined {
  if (name === PROTOTYPE_NAME) return `: ${PROTOTYPE_REASON}`;
  const dashed = dashSpelling(name);
  const reason = forbiddenHeaderReason(dashed);
  if (reason === undefined) return undefined;
  return dashed === name ? `: ${reason}` : ` (${UNDERSCORE_READERS} reads it as \`${dashed}\`): ${reason}`;
}

/** Why a header name may not be configured, or undefined when it may. `name` is lower-cased. */
export function forbiddenHeaderReason(name: string): string | undefined {
  const reason = FORBIDDEN_HEADERS.get(name);
  if (reason !== undefined) return reason;
  if (name.startsWith('proxy-')) return `${HOP_BY_HOP} (proxy-*)`;
  if (name.startsWith('mcp-')) return MCP_TRANSPORT;
  return undefined;
}
