/**
 * The ONE writer of responses the gateway makes up (ARCHITECTURE §3). Two kinds:
 *
 * 1. The seller's answer broke a bound (too large, too deep, too slow, unreachable, not MCP):
 *    - nothing sent yet: HTTP 200 with a JSON-RPC message for the same id (a tool error
 *      result for `tools/call`/`tasks/result`, a JSON-RPC error elsewhere); a request with no
 *      id to answer (GET stream, notification, batch) gets 502 (504 for a deadline) with a
 *      JSON-RPC error body, id null;
 *    - SSE already started: one final `message` event with that JSON-RPC message (id null
 *      on a stream answering no id: a notification's, a response's, a batch's), then end;
 *      but a host that stopped reading (`host_not_reading`) cannot take it: its connection is
 *      reset, so its stream never looks complete and nothing waits on it any longer;
 *    - neither possible (a plain body already partly sent): reset the connection, so a
 *      truncated body never looks complete.
 * 2. The host's request is refused before any seller is contacted: a 4xx status with a
 *    JSON-RPC error body (`refuse`).
 *
 * And one answer that is no error: the empty SSE stream a resume from the token of a
 * response's event gets, the seller not contacted (`answerStreamOver`).
 *
 * Whichever outcome comes first wins: the exchange is marked finished and the upstream
 * request aborted, so later upstream events are ignored.
 */
import type { FastifyReply } from 'fastify';
import type { Exchange } from '../exchange.js';
import { stringifyJsonRpc, type JsonRpcIdRef } from './json-rpc-text.js';
import { buildAdcpError, localErrorMessage, requestRefusal } from '../mcp/local-error.js';
import type { AdcpErrorReason, RefusalReason } from './codes.js';
import { encodeSseEvent } from '../response/sse-encode.js';
import { SSE_RESPONSE_HEADERS } from '../response/sse-headers.js';
import { resetHostConnection } from '../response/host-reset.js';
import { GATEWAY_FINISHED } from './abort.js';
import { boundAnswersAhead } from './earlier-answers.js';

/** What a local error needs to know beyond the exchange (docs/errors.md lists the reasons). */
export interface LocalErrorInput {
  reason: AdcpErrorReason;
  limitBytes?: number;
  observedBytes?: number;
  limit?: number;
  observed?: number;
  limitMs?: number;
  /** Milliseconds that passed before the time bound fired (deadline_exceeded, sse_deadline, sse_idle, host_not_reading). */
  observedMs?: number;
  upstreamStatus?: number;
  /** Seconds after which a retry may succeed (`retry_after`; agent_backoff). */
  retryAfterS?: number;
}

/** Response headers kept on a locally made answer (everything else the seller sent is dropped). */
const KEPT_ON_LOCAL_REPLY = new Set(['mcp-session-id']);

function keptHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (KEPT_ON_LOCAL_REPLY.has(name) && typeof value === 'string') out[name] = value;
  return out;
}

/**
 * Answers the host with a minted AdCP error for this exchange, in whichever form is still
 * possible (see file comment). No-op when the exchange is already finished.
 */
export function answerWithLocalError(exchange: Exchange, reply: FastifyReply, input: LocalErrorInput): void {
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'local_error';
  exchange.reason = input.reason;
  exchange.abortUpstream(GATEWAY_FINISHED);

  const { rpc } = exchange;
  const method = rpc.method ?? '';
  const err = buildAdcpError({ ...input, method, ...(rpc.toolName !== undefined ? { toolName: rpc.toolName } : {}) });
  const answerable = rpc.kind === 'request';
  const message = localErrorMessage(answerable ? rpc.id : null, answerable ? method : '', err, exchange.protocolVersion);
  const body = stringifyJsonRpc(message, answerable ? rpc.idText : undefined);
  const raw = reply.raw;

  if (exchange.sseStarted) {
    if (input.reason === 'host_not_reading') {
      // Written, the frame would wait behind the bytes the host is not reading, and so would
      // the response's close (the exchange line, the stream's clean-up): unbounded. A reset
      // also drops what the kernel holds for it (response/host-reset.ts).
      resetHostConnection(raw);
      return;
    }
    if (!raw.writableEnded && !raw.destroyed) {
      // A stream that answers no id (a POSTed notification's or JSON-RPC response's, a
      // batch's) gets the same message for id null, the body it would get as HTTP 502 before
      // anything was sent: the host learns why its stream ended (a plain end looked like a
      // whole answer, and one after an event id invites a resume into the same bound; a reset
      // looks like a network failure). Reported failure: such streams had no bound at all
      // (test/regressions/sse-notification-answer-unbounded.test.ts). Not on the standalone
      // GET stream (kind `none`): its breaches drop events and it ends plainly (sse-stage.ts).
      const frame = rpc.kind !== 'none' ? encodeSseEvent({ event: 'message', data: body }) : '';
      if (frame) {
        exchange.bytesToHost += Buffer.byteLength(frame);
        raw.write(frame);
      }
      raw.end();
    }
    return;
  }
  if (answerable && exchange.stream.resumeFrom !== undefined && !raw.headersSent && !reply.sent) {
    // A Last-Event-ID resume is a GET whose client reads SSE, not JSON: the request it
    // resumes is answered by one final event on a stream of its own.
    const frame = encodeSseEvent({ event: 'message', data: body });
    exchange.bytesToHost += Buffer.byteLength(frame);
    reply.hijack();
    raw.writeHead(200, { ...SSE_RESPONSE_HEADERS, ...keptHeaders(reply) });
    raw.end(frame);
    return;
  }
  if (raw.headersSent || reply.sent) {
    // A plain body is already partly out: a truncated body must never look complete (reset: response/host-reset.ts).
    resetHostConnection(raw);
    return;
  }
  for (const name of Object.keys(reply.getHeaders())) {
    if (!KEPT_ON_LOCAL_REPLY.has(name)) reply.removeHeader(name);
  }
  const status = answerable ? 200 : input.reason === 'deadline_exceeded' || input.reason === 'sse_deadline' ? 504 : 502;
  exchange.bytesToHost += Buffer.byteLength(body);
  reply.code(status).header('content-type', 'application/json').header('cache-control', 'no-store').send(body);
}

/**
 * Answers a `Last-Event-ID` resume from the token minted on the event that carried the
 * response to the stream's request (resume/token.ts `final`): HTTP 200, the SSE headers (and
 * no other: no seller answered), and the end, with nothing in the stream. MCP Streamable HTTP:
 * once the response is sent, the server closes the stream for that request, so there is
 * nothing to replay and nothing to wait for; the seller is not contacted. Not an error: the
 * exchange ends with outcome `already_answered`, no reason, `bytes_to_host` 0.
 *
 * Reported failure: such a resume went to the seller, and the host got an `upstream_reset`
 * error event (the seller replayed nothing and closed) or an `sse_idle` one (it kept the
 * stream open) for the id it already had its answer for
 * (test/regressions/sse-resume-from-final-response-token.test.ts).
 */
export function answerStreamOver(exchange: Exchange, reply: FastifyReply): void {
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'already_answered';
  reply.hijack();
  reply.raw.writeHead(200, SSE_RESPONSE_HEADERS);
  reply.raw.end();
}

/**
 * Called once per refusal, as it is sent: the one log line and metric per refused request
 * (app.ts). Set on the Fastify instance under {@link REFUSAL_LISTENER} (`app.decorate`), so
 * every route of the app and of its plugins finds it through `reply.server`.
 */
export type RefusalListener = (reply: FastifyReply, reason: RefusalReason, statusCode: number) => void;

/**
 * The decoration name of an app's {@link RefusalListener}. Why not an `onResponse` hook that
 * asks each reply whether it was a refusal (as before): the hook ran for every request, and
 * Fastify's hook runner per response was a measurable part of a 1 KiB answer's fixed cost
 * (issue 5), for the few requests that are refused.
 */
export const REFUSAL_LISTENER: unique symbol = Symbol('adcp-gateway refusal listener');

/**
 * Characters of a value the host chose (an agent name, a path, a header value) that a
 * refusal's message, its `data` and its `refused` log line show: a path may be as long as a
 * request head (16 KiB), and echoing it whole made a 5 KB refusal (a new user's trial,
 * 2026-12-03: test/regressions/agent-name-over-100-chars-fastify-414.test.ts).
 */
export const SHOWN_CHARS = 64;

/** `value` as a refusal's message shows it: its first {@link SHOWN_CHARS} characters, `…` after a cut one. */
export function shownInMessage(value: string): string {
  return value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}…` : value;
}

/**
 * Refuses the host's request before any seller is contacted (ARCHITECTURE §3, second kind).
 * `id`: the request's id as the peek read it (its exact text for a big number), or null when
 * it could not be read. A refusal queued behind another answer on its connection (HTTP/1.1
 * pipelining: no socket yet) bounds an answer ahead of it that has no deadline of its own
 * (errors/earlier-answers.ts `boundAnswersAhead`).
 */
export function refuse(
  reply: FastifyReply,
  reason: RefusalReason,
  id: JsonRpcIdRef | null,
  message: string,
  exchange?: Exchange,
  extra?: Record<string, unknown>,
): FastifyReply {
  const { statusCode, body } = requestRefusal(reason, id === null ? null : id.id, message, extra);
  (reply.server as unknown as { [REFUSAL_LISTENER]?: RefusalListener })[REFUSAL_LISTENER]?.(reply, reason, statusCode);
  const text = Buffer.from(stringifyJsonRpc(body, id?.idText));
  if (reply.raw.socket === null) boundAnswersAhead(reply.request.raw.socket, reply.raw);
  if (exchange) {
    exchange.finished = true;
    exchange.outcome = 'refused';
    exchange.reason = reason;
    exchange.bytesToHost += text.length;
  }
  return reply.code(statusCode).header('content-type', 'application/json').header('cache-control', 'no-store').send(text);
}
