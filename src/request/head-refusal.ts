/**
 * The refusals the MCP endpoint decides from a request's head alone, before anything of its
 * body counts: one function ({@link headRefusal}) for the MCP handler, which refuses with it
 * (routing/handler.ts), and for `Expect: 100-continue` (app.ts `continueWanted`), which tells
 * such a head no `100 Continue`. In the handler's order, each id null:
 * - `origin_not_allowed` (403): `Sec-Fetch-Site: cross-site | same-site` (a page of another
 *   origin, whatever its `Origin`); an `Origin` neither loopback nor in `allowed_origins`; a
 *   GET with an `Origin` not in `allowed_origins`; a POST with a served `Origin` not labelled
 *   `Content-Type: application/json` (request/browser-guard.ts), its message saying so when
 *   the label could not be parsed at all (request/unreadable-content-type.ts);
 * - `malformed_http` (400, the connection closed): more than one `Host` field (RFC 9112 §3.2);
 * - `host_not_allowed` (403): a `Host` (or an absolute-form target's authority) the gateway
 *   does not serve when it checks `Host` (browser-guard.ts isHostAllowed);
 * - `malformed_http` (400, the connection closed): an HTTP/1.1 request to a configured agent
 *   without `Host` (one to an unknown agent gets `unknown_agent`, for its id, first);
 * - `invalid_request` (400, the connection closed, {@link GET_WITH_BODY_MESSAGE}): a GET that
 *   declares a body ({@link declaresBody}), to any agent, configured or not.
 * What the handler refuses later depends on the body (`unknown_agent` and the gateway headers,
 * X-Max-Response-Bytes, MCP-Protocol-Version twice, a Via loop: for the request's id; an empty
 * body before an unreadable Content-Encoding): such a head still gets its 100.
 *
 * Reported failure (a hostile trial 23, L1): a head with `Expect: 100-continue` and a bad
 * `Origin`, a bad `Host`, two `Host` fields or none got `100 Continue`, and its refusal only
 * once the whole body was read (up to its agent's max_request_bytes: a body read for nothing,
 * or 408 after request_timeout_ms when the host sent none). Now `continueWanted` marks such a
 * head ({@link markRefusedFromHead}) and sends no 100; the MCP endpoint's preParsing hook
 * (request/agent-body-limit.ts) fails it with {@link RefusedFromHead} before the body is read,
 * and the app's error handler answers the same refusal (or `draining`, from the head), with
 * `Connection: close` (test/regressions/expect-continue-before-header-refusal.test.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { GatewayConfig } from '../config/types.js';
import { refuse, SHOWN_CHARS, shownInMessage } from '../errors/local-reply.js';
import { closeConnectionAfter } from '../routing/closing-answers.js';
import { absoluteFormAuthority, isHostAllowed, isJsonContentType, isLoopbackOrigin, isOtherSiteFetch } from './browser-guard.js';
import { fieldLineCount } from './field-lines.js';
import { isMediaType, removedContentTypeOf } from './unreadable-content-type.js';

/** A refusal decided from the head: its reason, its message, and whether its answer closes the connection. */
export interface HeadRefusal {
  readonly reason: 'origin_not_allowed' | 'host_not_allowed' | 'malformed_http' | 'invalid_request';
  readonly message: string;
  readonly closes: boolean;
}

const ORIGINS_SERVED = 'the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).';

/** An `origin_not_allowed` refusal: `what` was refused, then why the gateway serves no browser. */
function originRefusal(what: string): HeadRefusal {
  return { reason: 'origin_not_allowed', message: `${what}: ${ORIGINS_SERVED}`, closes: false };
}

/**
 * The refusal of `req`'s head on an MCP endpoint (see file comment), or undefined (nearly every
 * request: a few header reads and character comparisons, nothing allocated). `agentKnown`:
 * whether `config` has the agent the target names. `loopbackListen`, `ownHosts`: as for
 * browser-guard.ts isHostAllowed, read at start-up.
 */
export function headRefusal(req: IncomingMessage, config: GatewayConfig, agentKnown: boolean, loopbackListen: boolean, ownHosts: readonly string[]): HeadRefusal | undefined {
  const headers = req.headers;
  // A browser's request (DNS rebinding, another page) never reaches a seller with the agents'
  // credentials: MCP Streamable HTTP, Security Warning (403, id null).
  const origin = headers.origin;
  // A page of another origin, by its browser's own label (Fetch Metadata), whatever its
  // Origin: the gateway answers no preflight and sends no CORS headers, so such a request is
  // one a page can make blind (no-cors, a form, a beacon) and never one it can read
  // (browser-guard.ts isOtherSiteFetch; hostile trial 33, F1: a page on another loopback port).
  const site = headers['sec-fetch-site'];
  if (isOtherSiteFetch(site)) {
    const from = origin === undefined ? 'no Origin' : `Origin "${shownInMessage(origin)}"`;
    return originRefusal(`A browser's request from another origin's page (Sec-Fetch-Site: ${site}, ${from}) is not allowed`);
  }
  if (origin !== undefined) {
    // A loopback origin is served too: DNS rebinding cannot produce one (browser-guard.ts).
    const listed = config.allowed_origins.includes(origin);
    if (!listed && !isLoopbackOrigin(origin)) return originRefusal(`Origin "${shownInMessage(origin)}" is not allowed`);
    // A GET with an unlisted Origin is a page's WebSocket handshake (Chromium sends it with no
    // Sec-Fetch-*) or EventSource (from a browser that sends no Sec-Fetch-Site): a page's, as
    // no buyer agent sends one (hostile trial 35, F1: `new WebSocket(...)` from a loopback page
    // reached the seller with the agent's credentials).
    if (!listed && req.method === 'GET') return originRefusal(`A GET with an Origin ("${shownInMessage(origin)}") is not allowed: a page's WebSocket or EventSource request`);
    // A served origin's POST is a JSON one: a page can send any other (text/plain, a form,
    // none) without a preflight, from a browser that sends no Sec-Fetch-Site (browser-guard.ts
    // isJsonContentType; hostile trial 33, F1).
    const label = headers['content-type'];
    if (req.method === 'POST' && !isJsonContentType(label)) {
      // A label that is no media type is said to be one (not "none"): still on a head judged
      // before Fastify (`Expect: 100-continue`), or removed by the time the handler judges it
      // (unreadable-content-type.ts). Hostile trial 35, leftover 2.
      const unparsed = label === undefined ? removedContentTypeOf(req) : isMediaType(label) ? undefined : label;
      if (unparsed !== undefined) {
        return originRefusal(
          `A POST with an Origin ("${shownInMessage(origin)}") has a Content-Type that could not be parsed ("${shownInMessage(unparsed)}"): it must be labelled Content-Type: application/json; a page's request without CORS is not allowed`,
        );
      }
      return originRefusal(`A POST with an Origin ("${shownInMessage(origin)}") must be labelled Content-Type: application/json: a page's request without CORS is not allowed`);
    }
  }
  // A same-origin GET after DNS rebinding carries no Origin, but its Host names the
  // attacker's host (MCP Security Best Practices; browser-guard.ts). 403, id null.
  // More than one Host field is a 400 (RFC 9112 §3.2: "A server MUST respond with a 400 (Bad
  // Request) status code to any HTTP/1.1 request message that ... contains more than one Host
  // header field"). Node keeps the first and drops the others, so `Host: localhost` then
  // `Host: evil.example` passed the check with the first (a new user's trial, 2026-12-03,
  // finding 4): the lines are counted as sent.
  const host = headers.host;
  if (host !== undefined && fieldLineCount(req.rawHeaders, 'host') > 1) {
    return { reason: 'malformed_http', message: 'Bad request: a request must carry one Host header, not several (RFC 9112 §3.2).', closes: true };
  }
  // An absolute-form target names the request's host in place of Host (RFC 9112 §3.2.2).
  const effectiveHost = absoluteFormAuthority(req.url ?? '/') ?? host;
  if (!isHostAllowed(effectiveHost, loopbackListen, config.allowed_hosts, ownHosts)) {
    return {
      reason: 'host_not_allowed',
      message: `Host "${shownInMessage(effectiveHost as string)}" is not allowed: the gateway serves localhost, 127.0.0.1 and [::1] (allowed_hosts lists other host names).`,
      closes: false,
    };
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (Node's own check is off: app.ts).
  if (agentKnown && host === undefined && req.httpVersion === '1.1') {
    return { reason: 'malformed_http', message: 'Bad request: an HTTP/1.1 request must carry a Host header.', closes: true };
  }
  // A GET with a body: see GET_WITH_BODY_MESSAGE (hostile trial 54, F2).
  if (req.method === 'GET' && declaresBody(headers)) return { reason: 'invalid_request', message: GET_WITH_BODY_MESSAGE, closes: true };
  return undefined;
}

/**
 * The message of a GET refused for its body (`invalid_request`, 400, id null, the connection
 * closed after it, the body never read; docs/errors.md, invalid_request in detail). MCP's GET
 * opens or resumes a stream and carries no body (MCP Streamable HTTP; RFC 9110 §9.3.1: a GET's
 * content has no generally defined semantics). Fastify never reads a GET's body, so such a
 * request was forwarded and its stream answered while the body was still due; when it never
 * came whole, Node's request timeout fired at request_timeout_ms and a 408 was written inside
 * the open SSE answer, the request counted both as an exchange and as a refusal (hostile trial
 * 54, F2: test/regressions/get-with-body-408-inside-sse-stream.test.ts). A DELETE's body is
 * still read (bounded) before its answer, so its timeout comes before any answer: unchanged.
 */
export const GET_WITH_BODY_MESSAGE =
  'Invalid Request: a GET to an MCP endpoint carries no body (it opens or resumes a stream: MCP Streamable HTTP), and this one declares one (Content-Length other than 0, or Transfer-Encoding); it was not read, nor sent to the seller: send the GET without a body.';

/**
 * Whether a request head declares a body (RFC 9112 §6.1, §6.3): any `Transfer-Encoding` field,
 * or a `Content-Length` other than zero (Node's parser has refused one that is no number, or
 * several that differ, before this runs). `Content-Length: 0` declares an empty body: none.
 */
export function declaresBody(headers: IncomingMessage['headers']): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && !/^0+$/.test(length);
}

/**
 * Answers `refusal` on `reply`, id null; `Connection: close` when the refusal closes the
 * connection, or when `bodyUnread` (refused from the head, the announced body never read:
 * routing/closing-answers.ts).
 */
export function answerHeadRefusal(reply: FastifyReply, refusal: HeadRefusal, bodyUnread: boolean): FastifyReply {
  if (refusal.closes || bodyUnread) closeConnectionAfter(reply);
  return refuse(reply, refusal.reason, null, refusal.message);
}

/** Where `continueWanted` leaves the refusal of a head it told no 100 (a symbol: no other request carries it). */
const REFUSED_FROM_HEAD = Symbol('refusedFromHead');

type MarkedRequest = IncomingMessage & { [REFUSED_FROM_HEAD]?: HeadRefusal };

/** Leaves `refusal` on `req` for the MCP endpoint's preParsing hook ({@link refusedFromHeadOf}). */
export function markRefusedFromHead(req: IncomingMessage, refusal: HeadRefusal): void {
  (req as MarkedRequest)[REFUSED_FROM_HEAD] = refusal;
}

/** The refusal `continueWanted` left on `req`, or undefined (every request but a marked one: one property read). */
export function refusedFromHeadOf(req: IncomingMessage): HeadRefusal | undefined {
  return (req as MarkedRequest)[REFUSED_FROM_HEAD];
}

/** A head refused from the head, failed before its body is read: the app's error handler answers `refusal` (or `draining`). */
export class RefusedFromHead extends Error {
  constructor(readonly refusal: HeadRefusal) {
    super(refusal.message);
  }
}

/** One header's value for a log line: its first SHOWN_CHARS characters (a repeated one's values joined by `, `), or null when absent. */
function shownHeader(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return (typeof value === 'string' ? value : value.join(', ')).slice(0, SHOWN_CHARS);
}

/**
 * The `refused` line's fields for `origin_not_allowed` and `host_not_allowed` (app.ts): the
 * request's `Origin`, `Sec-Fetch-Site` and `Host` (an absolute-form target's authority in its
 * place, as headRefusal checks it), each its first 64 characters (as an agent
 * name is shown), or null when absent: which page, or which rebound host name, was refused.
 * Reported failure (hostile trial 33, F3): the line named the reason but not the origin, so an
 * operator could not tell a local tool's UI from an attack.
 */
export function browserFields(req: IncomingMessage): { origin: string | null; sec_fetch_site: string | null; host: string | null } {
  const headers = req.headers;
  // The authority checked: an absolute-form target's, else Host (hostile trial 35, F2: the line named Host).
  const host = absoluteFormAuthority(req.url ?? '/') ?? headers.host;
  return { origin: shownHeader(headers.origin), sec_fetch_site: shownHeader(headers['sec-fetch-site']), host: shownHeader(host) };
}
