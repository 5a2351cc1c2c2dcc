/**
 * The ONE writer of responses the gateway makes up (ARCHITECTURE §3). Two kinds:
 *
 * 1. The seller's answer broke a bound (too large, too deep, too slow, unreachable, not MCP):
 *    - nothing sent yet: HTTP 200 with a JSON-RPC message for the same id (a tool error
 *      result for `tools/call`/`tasks/result`, a JSON-RPC error elsewhere); a batch holding
 *      requests: HTTP 200 with a JSON array of such messages, one for each of its requests,
 *      each the one that request would get alone ({@link batchAnswered},
 *      {@link batchErrorTexts}); a request with no id to answer (GET stream, notification, a
 *      batch of only notifications and responses) gets 502, or 504 for the reasons docs/errors.md's
 *      reasons table marks so (its "HTTP status (id null)" column), with a JSON-RPC error body, id null;
 *    - SSE already started: one final `message` event with that JSON-RPC message (a batch's
 *      stream: one event for each request still awaited; id null on a stream answering no
 *      id: a notification's, a response's, a batch's without requests), then end;
 *      but a host that stopped reading (`host_not_reading`) cannot take it: its connection is
 *      reset, so its stream never looks complete and nothing waits on it any longer;
 *    - neither possible (a plain body already partly sent): reset the connection, so a
 *      truncated body never looks complete.
 * 2. The host's request is refused before any seller is contacted: a 4xx status with a
 *    JSON-RPC error body (`refuse`).
 *
 * And two answers that are no error: the SSE stream, held open with nothing in it, that a
 * resume from the token of a response's event gets, the seller not contacted
 * (`answerStreamOver`); and the plain end of a request the host cancelled, in place of an
 * error made up because the seller sent no answer (`endCancelled`).
 *
 * Whichever outcome comes first wins: the exchange is marked finished and the upstream
 * request aborted, so later upstream events are ignored.
 */
import type { FastifyReply } from 'fastify';
import type { BatchRequestRef, Exchange } from '../exchange.js';
import { stringifyJsonRpc, type JsonRpcIdRef } from './json-rpc-text.js';
import { buildAdcpError, buildAdcpErrorOfForm, localErrorMessage, localErrorMessageOfForm, requestRefusal, type LocalErrorForm, type NotMcpCause } from '../mcp/local-error.js';
import type { GatewayAdcpError } from '../mcp/types.js';
import { REASONS, type AdcpErrorReason, type RefusalReason } from './codes.js';
import { encodeSseEvent } from '../response/sse-encode.js';
import { shutdownRetryFrame } from '../response/shutdown-retry.js';
import { NOSNIFF_NAME, NOSNIFF_VALUE, OWN_JSON_HEADERS, OWN_SSE_HEADERS } from './own-answer-headers.js';
import { resetHostConnection } from '../response/host-reset.js';
import { ADDED_HEAD_BYTES, fieldLinesBytes, MAX_HOST_HEAD_BYTES, statusLineBytes } from '../response/head-size.js';
import { GATEWAY_FINISHED } from './abort.js';
import { withExactObservedBytes } from './exact-observed-bytes.js';
import { boundAnswersAhead, boundWhenAwaited } from './earlier-answers.js';
import type { SseShutdownEnd } from '../response/pipeline.js';
import type { OpenStreams } from '../routing/open-streams.js';

/** What a local error needs to know beyond the exchange (docs/errors.md lists the reasons). */
export interface LocalErrorInput {
  reason: AdcpErrorReason;
  limitBytes?: number;
  observedBytes?: number;
  /**
   * `observedBytes` as the seller announced it, when a double cannot carry it (a Content-Length
   * over 2^53 - 1): the minted text writes these digits (exact-observed-bytes.ts).
   */
  observedBytesText?: string;
  limit?: number;
  observed?: number;
  limitMs?: number;
  /** Milliseconds that passed before the time bound fired (deadline_exceeded, sse_deadline, sse_idle, host_not_reading). */
  observedMs?: number;
  upstreamStatus?: number;
  /** Seconds after which a retry may succeed (`retry_after`; agent_backoff, and upstream_status when the seller sent `Retry-After`). */
  retryAfterS?: number;
  /**
   * On a batch's SSE stream: the batch's requests the host still waits for
   * (response/batch-answers.ts BatchAnswers.unanswered), each answered by its own error event.
   * Ignored for any other exchange.
   */
  awaited?: readonly BatchRequestRef[];
  /** Why the answer is `upstream_not_mcp`, when the message says it (mcp/local-error.ts NotMcpCause). */
  cause?: NotMcpCause;
}

/** Response headers kept on a locally made answer (everything else the seller sent is dropped). */
const KEPT_ON_LOCAL_REPLY = new Set(['mcp-session-id']);

/**
 * The most a kept header's lines may take while a local reply's head stays within
 * MAX_HOST_HEAD_BYTES (response/head-size.ts): the bound less the longest status line a local
 * reply has (504), the reserve for the lines it writes (Content-Type, Cache-Control,
 * Content-Length, Node's) and its `X-Content-Type-Options` line (own-answer-headers.ts). A
 * seller's `Mcp-Session-Id` may take nearly all of the 16 KiB undici
 * reads; kept on the error, the host could not read that head either (a hostile new user's
 * trial 15, M1: test/regressions/set-cookie-path-overflows-host-headers.test.ts). Such a
 * session id is dropped, as every other seller header is.
 */
const KEPT_LINES_MAX_BYTES = MAX_HOST_HEAD_BYTES - statusLineBytes(504) - ADDED_HEAD_BYTES - fieldLinesBytes(NOSNIFF_NAME, NOSNIFF_VALUE);

/** Whether the seller's header `name` stays on a local reply: a {@link KEPT_ON_LOCAL_REPLY} name whose lines fit {@link KEPT_LINES_MAX_BYTES}. */
function keptOnLocalReply(name: string, value: string | readonly string[] | number | undefined): boolean {
  return KEPT_ON_LOCAL_REPLY.has(name) && value !== undefined && (typeof value === 'number' || fieldLinesBytes(name, value) <= KEPT_LINES_MAX_BYTES);
}

/**
 * Answers a request whose answer has not begun with an SSE stream of its own holding `frame`
 * (events, or nothing) and ending: HTTP 200, the SSE headers and the seller's headers kept on a
 * local reply.
 */
function sseStreamOf(reply: FastifyReply, frame: string): void {
  reply.hijack();
  reply.raw.writeHead(200, { ...OWN_SSE_HEADERS, ...keptHeaders(reply) });
  reply.raw.end(frame);
}

function keptHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (typeof value === 'string' && keptOnLocalReply(name, value)) out[name] = value;
  return out;
}

/**
 * Answers the host with a minted AdCP error for this exchange, in whichever form is still
 * possible (see file comment). No-op when the exchange is already finished.
 */
export function answerWithLocalError(exchange: Exchange, reply: FastifyReply, input: LocalErrorInput): void {
  if (exchange.finished) return;
  if (exchange.cancelled && CANCELLED_QUIET_REASONS.has(input.reason)) {
    endCancelled(exchange, reply, input.reason);
    return;
  }
  exchange.finished = true;
  exchange.outcome = 'local_error';
  exchange.reason = input.reason;
  exchange.abortUpstream(GATEWAY_FINISHED);

  const { rpc } = exchange;
  const batchIds = rpc.kind === 'batch' ? batchAnswered(exchange, input) : undefined;
  const answerable = rpc.kind === 'request' || batchIds !== undefined;
  // One JSON-RPC message per id answered (the batch's requests, each as it would be answered
  // alone: batchErrorTexts), or the one for the request's id (id null when there is none).
  let texts: string[];
  if (batchIds !== undefined) texts = batchErrorTexts(batchIds, input, exchange.protocolVersion);
  else {
    const method = rpc.method ?? '';
    const err = buildAdcpError({ ...input, method, ...(rpc.toolName !== undefined ? { toolName: rpc.toolName } : {}) });
    // A tasks/result's error names its task (RpcPeek.taskId; mcp/local-error.ts localErrorMessageOfForm).
    const taskId = answerable ? rpc.taskId : undefined;
    texts = [stringifyJsonRpc(localErrorMessage(answerable ? rpc.id : null, answerable ? method : '', err, exchange.protocolVersion, taskId), answerable ? rpc.idText : undefined)];
  }
  const digits = input.observedBytesText;
  if (digits !== undefined && input.observedBytes !== undefined) texts = texts.map((text) => withExactObservedBytes(text, input.observedBytes!, digits));
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
      // A batch's stream gets one event per request still awaited (batchAnswered). A stream
      // that answers no id (a POSTed notification's or JSON-RPC response's, a batch's whose
      // ids cannot be told) gets the same message for id null, the body it would get as HTTP
      // 502 before anything was sent: the host learns why its stream ended (a plain end looked
      // like a whole answer, and one after an event id invites a resume into the same bound; a
      // reset looks like a network failure). Reported failure: such streams had no bound at all
      // (test/regressions/sse-notification-answer-unbounded.test.ts). Not on the standalone
      // GET stream (kind `none`): its breaches drop events and it ends plainly (sse-stage.ts).
      const frame = rpc.kind !== 'none' ? sseFrames(texts) : '';
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
    // resumes is answered by one final event on a stream of its own (a batch's requests
    // still awaited by its token: one event each).
    const frame = sseFrames(texts);
    exchange.bytesToHost += Buffer.byteLength(frame);
    sseStreamOf(reply, frame);
    return;
  }
  if (raw.headersSent || reply.sent) {
    // A plain body is already partly out: a truncated body must never look complete (reset: response/host-reset.ts).
    resetHostConnection(raw);
    return;
  }
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (!keptOnLocalReply(name, value)) reply.removeHeader(name);
  }
  // Answering no request: the reason's own status (errors/codes.ts ReasonSpec.idNullStatus: 504 when time ran out, else 502).
  const status = answerable ? 200 : REASONS[input.reason].idNullStatus;
  // A batch's errors go out as one JSON array (JSON-RPC 2.0 §6: "an Array containing the corresponding Response objects").
  const body = batchIds !== undefined ? `[${texts.join(',')}]` : texts[0]!;
  exchange.bytesToHost += Buffer.byteLength(body);
  reply.code(status).headers(OWN_JSON_HEADERS).send(body);
}

/**
 * The reasons that say the seller sent no answer for the request (its stream or connection
 * ended, it went quiet, time ran out, it could not be reached). On a request the host
 * cancelled (Exchange.cancelled) the seller is asked to send none (MCP "Cancellation": the
 * receiver "SHOULD NOT send a response for the cancelled request"), so none of these is minted
 * for it ({@link endCancelled}). Any other reason (a bound the seller's answer broke, an answer
 * that is not MCP, the host not reading, a shutdown, a backoff) is minted as before.
 */
const CANCELLED_QUIET_REASONS: ReadonlySet<AdcpErrorReason> = new Set<AdcpErrorReason>(['upstream_reset', 'upstream_unreachable', 'sse_idle', 'sse_deadline', 'deadline_exceeded']);

/**
 * Ends the answer to a request the host cancelled, for which the gateway would otherwise mint
 * the error for `reason` ({@link CANCELLED_QUIET_REASONS}), without any message for its id:
 * the host dropped that id with its cancellation, so an error for it answers nothing (the MCP
 * TypeScript SDK client logs it as "Received a response for an unknown message ID"). An SSE
 * stream already started ends plainly (what was forwarded stays); before anything was sent,
 * HTTP 200 and an SSE stream that ends at once with nothing in it (as `answerStreamOver`: the
 * host reads no message, and a POST awaiting a response may be answered by a stream); a plain
 * body partly sent is reset, never left looking complete. The upstream request is aborted.
 * The exchange line says outcome `cancelled` with the reason that was not minted; it is no
 * limit breach (observability/metrics.ts counts `local_error` only) and counts for the agent's
 * backoff as neither clean nor a breach. Source: trial 17, L1
 * (test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts).
 */
function endCancelled(exchange: Exchange, reply: FastifyReply, reason: AdcpErrorReason): void {
  exchange.finished = true;
  exchange.outcome = 'cancelled';
  exchange.reason = reason;
  exchange.abortUpstream(GATEWAY_FINISHED);
  const raw = reply.raw;
  if (exchange.sseStarted) {
    if (!raw.writableEnded && !raw.destroyed) raw.end();
    return;
  }
  if (raw.headersSent || reply.sent) {
    resetHostConnection(raw);
    return;
  }
  sseStreamOf(reply, '');
}

/**
 * Answers a POSTed request the host cancelled before the gateway sent it (Exchange.cancelled
 * set while it waited for its agent's backoff turn or for its pipelined turn on its
 * connection): it is never sent, and the host gets what {@link endCancelled} gives an answer
 * not begun, HTTP 200 and an SSE stream that ends at once with nothing in it. Why that: MCP
 * Streamable HTTP answers a POSTed request with JSON or an SSE stream (202 is for
 * notifications and responses); the host's client dropped the id with its cancellation, and
 * the MCP TypeScript SDK client (1.x) reads such a stream without a message or an event id and
 * does nothing more (no error, no resume: it resumes only after an event with an id), as the
 * Python SDK client does. The exchange line says outcome `cancelled`, reason null, no
 * `upstream_status`; nothing counts for the agent's backoff (no turn was taken, or it was given
 * back). No-op once the exchange is finished. Source: hostile trial 55, F2 (such a request was
 * sent after the cancellation, which the seller had ignored, and the seller ran it:
 * test/regressions/cancelled-while-held-still-sent.test.ts).
 */
export function answerCancelledUnsent(exchange: Exchange, reply: FastifyReply): void {
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'cancelled';
  sseStreamOf(reply, '');
}

/** The final SSE `message` events carrying `texts` (JSON-RPC messages), one each, in order. */
function sseFrames(texts: readonly string[]): string {
  let frames = '';
  for (const data of texts) frames += encodeSseEvent({ event: 'message', data });
  return frames;
}

/**
 * The requests of a batch (`exchange.rpc.kind` 'batch') that a local error answers, one
 * JSON-RPC error each: on its SSE stream, those still awaited (`input.awaited`, from the SSE
 * stage, which knows the responses it forwarded: response/batch-answers.ts); before anything
 * was sent, every request of the batch (RpcPeek.batchRequestIds; on a stream resumed with
 * `Last-Event-ID`, those its token says were still awaited). Undefined when no id can be
 * told, and the error then goes out once for id null: a batch of only notifications and
 * responses (no request awaits an answer), a resumed batch's stream whose token did not
 * carry its ids, a stream already started whose caller gave no `awaited`.
 *
 * Why (JSON-RPC 2.0 §5: id null only "if there was an error in detecting the id"; §6: the
 * server "should respond with an Array containing the corresponding Response objects"; a
 * single Response object is for a batch that is not valid JSON or not a non-empty array): a
 * host's JSON-RPC client matches responses to its calls by id alone, so one error for id null
 * answered none of them, and each call waited until its own timeout (reported failure:
 * test/regressions/batch-local-error-answers-no-request.test.ts).
 */
function batchAnswered(exchange: Exchange, input: LocalErrorInput): readonly BatchRequestRef[] | undefined {
  const ids = input.awaited ?? (exchange.sseStarted ? undefined : exchange.rpc.batchRequestIds);
  return ids === undefined || ids.length === 0 ? undefined : ids;
}

/**
 * The JSON-RPC message text answering each of `refs` (a batch's requests, in order) with the
 * error minted for `input`, each the message that request would get sent alone, its id
 * written as the host wrote it: by its form (BatchRequestRef.form; mcp/local-error.ts
 * LocalErrorForm) a tool error result for a `tools/call` or `tasks/result` (RESPONSE_TOO_LARGE
 * `correctable`; the message ending with the warning that the seller may have completed the
 * operation for a tool not read-only), a JSON-RPC error for any other method
 * (RESPONSE_TOO_LARGE `terminal`). So the `adcp_error` differs between requests only by its
 * `recovery` and the end of its `message`; its `details` are the batch's answer's. Reported
 * failure: every request got a JSON-RPC error minted with no method, so a `create_media_buy`
 * in a batch got no warning that it may have run, a `get_` call no tool result nor
 * `correctable` (test/regressions/batch-error-loses-tool-warning.test.ts). Cost: at most one
 * error minted per form (three), then one message per request.
 */
function batchErrorTexts(refs: readonly BatchRequestRef[], input: LocalErrorInput, protocolVersion: string): string[] {
  const errs = new Map<LocalErrorForm, GatewayAdcpError>();
  return refs.map((ref) => {
    let err = errs.get(ref.form);
    if (err === undefined) errs.set(ref.form, (err = buildAdcpErrorOfForm(input, ref.form)));
    return stringifyJsonRpc(localErrorMessageOfForm(ref.id, ref.form, err, protocolVersion), ref.idText);
  });
}

/**
 * Answers a `Last-Event-ID` resume from the token minted on the event that carried the
 * response to the stream's request (resume/token.ts `final`): HTTP 200 with the SSE headers
 * (and no other: no seller answered), flushed at once, then a stream held open with nothing in
 * it, as a seller holds a resume it has nothing to replay for. The seller is not contacted.
 * Not an error: the exchange ends with outcome `already_answered`, no reason.
 *
 * The stream ends when the host closes it; or after `idleMs` (the agent's
 * sse_idle_timeout_ms), or at a graceful shutdown once no request is in flight (it is in
 * `streams`, which app.ts `endStreams` ends: {@link SseShutdownEnd}), or at once when another answer waits behind it
 * on its connection (errors/earlier-answers.ts boundWhenAwaited): plainly, as an idle
 * standalone GET stream ends, after the one event `id: <token>` (`token`: the one resumed
 * from), so a client resumes from it again rather than with no id; with no event at a
 * shutdown whose tokens die with the process (`tokensOutlive` false); at a shutdown, then the
 * `retry:` frame of `shutdown_sse_retry_ms` (response/shutdown-retry.ts). `bytes_to_host` is 0,
 * or those frames' bytes. Cost: one timer, one `close` listener, one entry in `streams`.
 *
 * Reported failures: such a resume went to the seller, and the host got an `upstream_reset`
 * error event (the seller replayed nothing and closed) or an `sse_idle` one (it kept the
 * stream open) for the id it already had its answer for
 * (test/regressions/sse-resume-from-final-response-token.test.ts). Then the stream ended at
 * once, empty: the MCP SDK 1.x client, which resumes a POST stream answered by a JSON-RPC
 * *error* (it treats only a result as its answer), got no event, reconnected with a plain GET,
 * and the seller answered 409 (its standalone stream exists) until the client gave up,
 * "Maximum reconnection attempts (3) exceeded" (a hostile trial 17, M2:
 * test/regressions/already-answered-resume-ends-at-once-sdk-reconnect-loop.test.ts).
 */
export function answerStreamOver(exchange: Exchange, reply: FastifyReply, token: string, idleMs: number, streams: OpenStreams): void {
  if (exchange.finished) return;
  exchange.finished = true;
  exchange.outcome = 'already_answered';
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, OWN_SSE_HEADERS);
  // The head goes out now: written lazily, it would wait for a first body byte.
  raw.flushHeaders();
  /** Out of `streams`, its timer cleared; false when it was already. */
  const release = (): boolean => {
    clearTimeout(timer);
    return streams.remove(slot, entry);
  };
  // It answers no request (its answer went out before): left during a shutdown's `grace`, as a standalone GET stream is.
  const end: SseShutdownEnd = (tokensOutlive, phase, retryMs) => {
    // Ended by this call only (SseShutdownEnd: an already-over stream is not counted).
    if (phase === 'grace') return false;
    if (!release() || raw.writableEnded || raw.destroyed) return false;
    // A shutdown's `retry:` last, as on any stream it ends plainly (response/shutdown-retry.ts).
    const frame = (tokensOutlive ? `id: ${token}\n\n` : '') + shutdownRetryFrame(retryMs, exchange.sseRetryMaxMs);
    exchange.bytesToHost += frame.length; // a verified token is ASCII
    raw.end(frame);
    return true;
  };
  const entry = { exchange, end };
  const slot = streams.add(entry);
  const timer = setTimeout(end, idleMs, true, 'final');
  raw.once('close', release);
  boundWhenAwaited(raw, () => end(true, 'final'));
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
 *
 * `exchange`: given for a request the gateway had taken up (its exchange open: one waiting for
 * its agent's backoff turn when a reload removed the agent, routing/backoff-wait.ts): the refusal is
 * that exchange's outcome (`refused`, `reason`), written on its `exchange` line, and no
 * `refused` line or refusal count is made for it (README, Metrics: a host request is an
 * exchange or a refusal, never both). Hostile trial 57, F4.
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
  if (exchange === undefined) (reply.server as unknown as { [REFUSAL_LISTENER]?: RefusalListener })[REFUSAL_LISTENER]?.(reply, reason, statusCode);
  const text = Buffer.from(stringifyJsonRpc(body, id?.idText));
  if (reply.raw.socket === null) boundAnswersAhead(reply.request.raw.socket, reply.raw);
  if (exchange) {
    exchange.finished = true;
    exchange.outcome = 'refused';
    exchange.reason = reason;
    exchange.bytesToHost += text.length;
  }
  return reply.code(statusCode).headers(OWN_JSON_HEADERS).send(text);
}
