/**
 * One exchange: a host's HTTP request to `/agents/<agent>/mcp`, the upstream request it
 * becomes, and the response the host receives. Created by the route handler, read by the
 * request stage (headers), the response pipeline (limits, counters) and the exchange log line.
 *
 * Lives outside `request/` and `response/` so that neither imports the other (ARCHITECTURE §2).
 */
import type { AgentConfig, Limits } from './config/types.js';
import type { AgentGuard, BufferLease } from './admission/agent-guard.js';
import type { BodySource } from './response/body-source.js';
import { SSE_RETRY_MAX_MS } from './response/sse-encode.js';
import { MAX_STACKED_CODINGS } from './response/decode.js';
import type { TextBoundReason, TextObjectReason } from './mcp/types.js';
import type { LiftRoomReason } from './response/rewrite-room.js';
import type { LocalErrorForm } from './mcp/local-error.js';
import type { ResumeTailLedger } from './resume/tail-ledger.js';
import type { HostAnswerWaits } from './routing/host-answer-waits.js';
import type { ResumeState } from './resume/token.js';
import type { CancelHold } from './routing/in-flight-requests.js';
import type { WrittenRequestId } from './mcp/cancelled-id.js';

/** Why a tool result was left unlifted ({@link Exchange.textNotLifted}): a text bound, what the text's object holds, or the room a lift's output lacked. */
export type TextNotLiftedReason = TextBoundReason | TextObjectReason | LiftRoomReason;

/** The JSON-RPC facts the gateway reads from the request it forwards (ARCHITECTURE §2, gateway issue item 4). */
export interface RpcPeek {
  /** `request` (has id), `notification` (no id), `batch` (a JSON array), `none` (no body: GET/DELETE). */
  readonly kind: 'request' | 'notification' | 'batch' | 'none';
  /** The request id (string | number | null); null when the body has none. */
  readonly id: string | number | null;
  /**
   * The id's JSON text as the host wrote it, when it is a number `JSON.stringify` writes
   * otherwise: one `JSON.parse` changes (`9007199254740993`, `0.99999999999999999999`), or the
   * same value spelled another way (`1.0`, `1E2`, `-0`; request/peek.ts idTextOf); undefined
   * otherwise, and then `id` as JSON.stringify writes it is the host's text. Minted answers are
   * written with it (errors/json-rpc-text.ts), a seller's response id is compared with it
   * (response/json-value-at.ts isRequestId), and a resume token carries it (resume/token.ts `x`).
   */
  readonly idText: string | undefined;
  /**
   * Of a request whose string id of request/peek.ts LONG_ID_BYTES (1 KiB) or more the peek read by its
   * scan (undefined on every other single-message peek, and absent on a batch's; written on each
   * single-message peek, as `cancelledRequestId` is, so that they share one hidden class: a
   * re-read of today's changes, Low: test/regressions/rpc-peek-shapes-differ.test.ts; optional
   * only so that tests' literals need not name it): the id's bytes between its quotes as the host wrote them
   * (a copy: the body is not held), so a seller's echo of it is compared as bytes
   * (response/json-value-at.ts isRequestId: equal bytes are the same string, escapes or not;
   * different bytes are compared as before). Before, a 4.1 MB id was compared character by
   * character, ~21 ms of gateway CPU per response (hostile trial 58, F5:
   * test/regressions/huge-string-id-compared-char-by-char.test.ts).
   */
  readonly idWritten?: Buffer | undefined;
  /** The JSON-RPC method, or undefined (batch, no body). */
  readonly method: string | undefined;
  /** `params.name` of a `tools/call` request. */
  readonly toolName: string | undefined;
  /**
   * `params.taskId` of a `tasks/result` (request/peek.ts: a string of at most
   * MAX_TASK_ID_CHARS characters, as `JSON.parse` reads it); undefined for every other
   * method, another value, a longer string, a batch, and a stream resumed with `Last-Event-ID`
   * (its token carries the method, not the taskId). The tool error result the gateway mints
   * for the request names it in `_meta["io.modelcontextprotocol/related-task"]` (MCP
   * 2025-11-25, Tasks: "The `tasks/result` operation MUST include this metadata in its
   * response"; mcp/local-error.ts localErrorMessageOfForm; hostile trial 39, item 1:
   * test/regressions/tasks-result-minted-error-drops-related-task.test.ts). Present (maybe
   * undefined) on every peek, so that every RpcPeek has one shape (issue 5: the peek is on
   * every request's path).
   */
  readonly taskId: string | undefined;
  /**
   * Of a batch the host POSTed (`kind` 'batch'; absent on every other peek, so a single
   * request's costs nothing): the id of each of its requests (the elements with a `method`
   * and an `id`), in order, duplicates kept, `[]` when it has none (only notifications and
   * responses). Its SSE stream is complete once each has its response, and its answer (JSON
   * or SSE) may hold no response for another id nor a second one for an id, and a JSON answer
   * must answer each (response/batch-answers.ts; else `upstream_not_mcp`:
   * test/regressions/batch-answer-for-other-ids-forwarded.test.ts). On a batch's stream resumed with `Last-Event-ID`: the requests
   * still awaited when its token was minted (resume/token.ts `w`), or absent when the token
   * does not carry them (routing/handler.ts), and that stream then ends as an unanswered one.
   * Reported failures: test/regressions/sse-batch-answer-never-ends-cleanly.test.ts,
   * sse-batch-resumed-stream-never-ends-cleanly.test.ts.
   * Each entry keeps, beside the id, the form a local error answering that request takes
   * ({@link BatchRequestRef}).
   */
  readonly batchRequestIds?: readonly BatchRequestRef[];
  /**
   * Of a batch (`kind` 'batch'; absent on every other peek): for each of its requests (the
   * elements with a `method` and an `id`, as in `batchRequestIds`), in order, the tool name
   * it would be resolved with if sent alone: `params.name` of a `tools/call` when a string,
   * undefined for any other request (the agent's level). `[]` for a batch without requests.
   * The batch's limits are, limit by limit, the strictest of those levels (config/resolve.ts
   * resolveBatchLimits; none: the agent's). A notification or a host's response takes no part:
   * the seller sends no answer to it, so it has no answer to bound. On a batch's stream resumed
   * with `Last-Event-ID`: the configured tools among them as its token carries them
   * (routing/resumed-stream.ts batchLevelsText). Reported failures: a batch escaped its tools'
   * limits (a reviewer: test/regressions/batch-escapes-tool-limits.test.ts); a notification
   * in a batch brought the agent's level in, tightening its tool calls' limits
   * (test/regressions/batch-notification-tightens-tool-limits.test.ts).
   */
  readonly batchToolNames?: readonly (string | undefined)[];
  /**
   * Of a batch read from a host's POST (`kind` 'batch'; absent on every other peek and on a
   * batch's stream resumed with `Last-Event-ID`): how many messages it holds (its elements:
   * requests, notifications and host responses), judged against the agent's
   * `max_batch_messages` before anything is sent (routing/handler.ts; `batch_too_large`:
   * a hostile new-user trial 14, M1, test/regressions/batch-minted-errors-unbounded.test.ts).
   */
  readonly batchMessages?: number;
  /**
   * Of a `notifications/cancelled` whose `params` object the peek read by its scan (a body of
   * request/peek.ts PEEK_SCAN_MIN_BYTES or more; undefined on every other single-message peek,
   * absent on a batch's, as `idWritten`): its `params.requestId` as written (a string or a number: its
   * JSON value's bytes), or null when there is none to match. Read by mcp/cancelled-id.ts
   * cancelledRequestIdOf (routing/handler.ts) with no scan of its own (a review of the
   * cancellation path: test/regressions/cancel-body-scanned-again-after-peek.test.ts; kept
   * here, not in a WeakMap keyed by the body Buffer: a re-read of 7767818, L2).
   */
  readonly cancelledRequestId?: WrittenRequestId | null | undefined;
}

/** A JSON-RPC request id as the peek keeps it: the value, and its text when JSON.stringify writes it otherwise (RpcPeek.idText). */
export interface RpcIdRef {
  readonly id: string | number | null;
  readonly idText: string | undefined;
}

/**
 * A request of a batch (RpcPeek.batchRequestIds): its id, and the form of the error the
 * gateway mints for it (mcp/local-error.ts localErrorFormOf of its `method` and, for a
 * `tools/call`, its `params.name`): the error each request of a batch gets is the one it would
 * get sent alone (a tool error result for a `tools/call` or `tasks/result`, with its recovery,
 * and the warning for a tool that may have changed state). On a batch's stream resumed with
 * `Last-Event-ID`, the form its token carried for it (resume/token.ts `w`; `rpc_error` on a
 * token minted before forms were carried). Reported failure: every request of a batch got a
 * JSON-RPC error built with no method, a `create_media_buy` no warning that it may have run
 * (test/regressions/batch-error-loses-tool-warning.test.ts).
 */
export interface BatchRequestRef extends RpcIdRef {
  readonly form: LocalErrorForm;
}

/**
 * Methods whose SSE stream is long-lived by design and ended only by the client (MCP
 * 2026-07-28 `subscriptions/listen`): like the standalone GET stream, it is bounded per
 * event and by idle time, not cumulatively nor by `sse_deadline_ms`, which would cut a
 * healthy stream.
 */
export const LONG_LIVED_STREAM_METHODS: ReadonlySet<string> = new Set(['subscriptions/listen']);

/**
 * True when the exchange's SSE stream carries the answer to a request (or a batch): its
 * request waits for the response (a resumed stream the seller refuses is answered
 * `upstream_status`, a drop before any event id `upstream_reset`, a shutdown before one
 * `gateway_shutdown`), and the stream ends once the response has passed (a batch's: once each
 * of its requests has its response, response/batch-answers.ts). False for streams
 * that answer no request ({@link hasCumulativeBound} still bounds them), the standalone GET
 * stream and long-lived streams.
 */
export function isRequestStream(rpc: RpcPeek): boolean {
  if (rpc.kind === 'batch') return true;
  return rpc.kind === 'request' && !(rpc.method !== undefined && LONG_LIVED_STREAM_METHODS.has(rpc.method));
}

/**
 * True when the host's POST carries a request it awaits a response to: a request (a long-lived
 * one included), or a batch holding one (an element with a `method` and an `id`:
 * `batchRequestIds` not empty). False for a POST of a notification, of a host's JSON-RPC
 * response, or of a batch of only those (MCP Streamable HTTP: the server answers such a POST
 * "202 Accepted with no body"), and for no JSON-RPC body (a GET, a DELETE). A batch's stream
 * resumed with `Last-Event-ID` has no ids (routing/handler.ts), so false too: its answer is
 * SSE or an error before any caller asks (response/pipeline.ts).
 */
export function carriesRequest(rpc: RpcPeek): boolean {
  return rpc.kind === 'batch' ? (rpc.batchRequestIds?.length ?? 0) > 0 : rpc.kind === 'request';
}

/**
 * True when the exchange's SSE stream has the cumulative bound (`max_response_bytes` over the
 * whole stream -> `sse_cumulative`, with what resume tokens and the re-encoding add, carried
 * across `Last-Event-ID` resumes) and `sse_deadline_ms`; a breach ends it (sse-stage.ts).
 * That is every stream answering a POST: a request's or a batch's ({@link isRequestStream}),
 * and a stream answering a POSTed notification or JSON-RPC response (`kind: 'notification'`),
 * whose breach ends it with the error for id null (docs/errors.md). False only for the
 * standalone GET stream (`kind: 'none'`: nothing but server-initiated messages, no natural end)
 * and long-lived streams ({@link LONG_LIVED_STREAM_METHODS}), which are ended by the client.
 * (A DELETE has `kind: 'none'` too, but no SSE answer to it reaches the stage: pipeline.ts.)
 *
 * Reported failure (a new user's trial): a notification's or a response's SSE answer had no
 * total bound: 271,567,770 bytes reached the host with the limit at 1,000,000
 * (test/regressions/sse-notification-answer-unbounded.test.ts).
 */
export function hasCumulativeBound(rpc: RpcPeek): boolean {
  return rpc.kind === 'notification' || isRequestStream(rpc);
}

/** {@link offeredCodings}'s lists without `br`, per agent list (config objects are frozen, so each is made once). */
const withoutBrotli = new WeakMap<readonly string[], readonly string[]>();

/**
 * The content codings the gateway asks the seller for on this exchange (its Accept-Encoding,
 * routing/handler.ts; a coding not among them is refused `unsupported_encoding`,
 * response/pipeline.ts): the agent's `accept_encoding`, less `br` on a stream that has no end
 * (no {@link hasCumulativeBound}: the standalone GET stream, a long-lived one). A brotli
 * decoder holds the window its stream declares, up to 16 MiB, for as long as its stream
 * lives (response/decode.ts), where a gzip or deflate one holds 32 KiB. A hostile new user's
 * trial 15, H2: 30 such GET streams took the gateway from 94 to 655 MB RSS
 * (test/regressions/brotli-window-on-get-stream-unbounded.test.ts). A request's answer, which
 * has a deadline, has its brotli decoder charged to the agent's `max_buffered_response_bytes`
 * (up to 18.75 MiB) instead; on a stream without end that charge would last a session, the
 * agent's other br answers waiting for room all the while, and its wait for room would have
 * no deadline (test/regressions/decoder-wait-has-no-deadline.test.ts).
 */
export function offeredCodings(codings: readonly string[], rpc: RpcPeek): readonly string[] {
  if (hasCumulativeBound(rpc) || !codings.includes('br')) return codings;
  let list = withoutBrotli.get(codings);
  if (list === undefined) {
    list = Object.freeze(codings.filter((c) => c !== 'br'));
    withoutBrotli.set(codings, list);
  }
  return list;
}

/**
 * How many content codings a seller's answer on this exchange may stack before it is refused
 * `unsupported_encoding` (response/pipeline.ts): MAX_STACKED_CODINGS (response/decode.ts) on
 * an exchange with {@link hasCumulativeBound}; one on a stream without a total (the standalone
 * GET stream, a long-lived one), as `br` is not offered there ({@link offeredCodings}). Such a
 * stream is read with no raw or decoded limit, so an intermediate layer was unbounded, its
 * output seen by no count and no timer (only the last layer's output reaches sse_undelivered
 * and the idle timer): `gzip, gzip` whose outer layer inflated an endless run of empty stored
 * blocks, with a comment now and then, held a CPU core (8.78 s of CPU in 10 s at ~1 MB/s of
 * wire; 68 bytes reached the host). Real sellers send one coding. Review 30, finding 1:
 * test/regressions/get-stream-stacked-codings-unbounded-cpu.test.ts.
 */
export function maxStackedCodings(rpc: RpcPeek): number {
  return hasCumulativeBound(rpc) ? MAX_STACKED_CODINGS : 1;
}

/** How the exchange ended, for the log line and metrics. */
export type Outcome =
  | 'ok' // seller's answer forwarded unchanged
  | 'rewritten' // forwarded with normalization / dedupe applied
  | 'local_error' // the gateway answered with a minted AdCP error, or cut a host that did not take what it wrote (host_not_reading)
  | 'refused' // the host's request was refused before any seller was contacted
  | 'resumable_end' // SSE ended plainly after an event id, so the host resumes
  | 'already_answered' // a Last-Event-ID resume from the token of the event that carried the response: an SSE stream held open with nothing in it until the host closes it or sse_idle_timeout_ms, the seller not contacted (resume/token.ts `final`)
  | 'host_aborted' // the host went away before its answer was all written: before it was settled, while Node still wrote a forwarded one (routing/answer-cut.ts), or before any byte of it reached the connection, whatever it was (routing/unreached-answer.ts)
  | 'cancelled' // the host cancelled the request (`notifications/cancelled`) and the seller sent no answer: ended plainly, no error minted for the id (errors/local-reply.ts endCancelled); or cancelled before it was sent, never sent (answerCancelledUnsent)
  | 'shutdown_cut'; // still open when a shutdown's forced exit came (shutdown_grace_ms over, a second signal): the exit closes the host's connection

export interface Exchange {
  readonly agent: AgentConfig;
  readonly rpc: RpcPeek;
  /** Limits in force for this exchange (call -> tool -> agent -> defaults). */
  readonly limits: Limits;
  /** The host's negotiated MCP revision (`MCP-Protocol-Version`; absent means 2025-03-26). */
  readonly protocolVersion: string;
  /** True when results may be normalized for this host: revision >= 2025-06-18 and dedupe_text != off. */
  readonly normalize: boolean;
  /** process.hrtime.bigint() when the handler started (first, for a request that waited for its turn on its connection). */
  readonly startedAt: bigint;
  /** Bytes read from the seller, as on the wire (before decoding). */
  bytesFromSeller: number;
  /** Bytes of the seller's body after content decoding. */
  bytesDecoded: number;
  /**
   * The seller's body as the stages read it (set by the pipeline). The two counts above are
   * taken from it once, when the exchange ends (routing/handler.ts, body-source.ts
   * recordCounts), not by the stages: a body the deadline cut short, its read still waiting,
   * was logged with `bytes_from_seller: 0` (found by a new user,
   * test/regressions/stalled-body-counts.test.ts).
   */
  bodySource: BodySource | undefined;
  /**
   * Body bytes handed to the host's response (headers and chunked framing not included). The
   * body written to the host's connection for a whole answer; for `host_aborted`, what was
   * handed over before the host left (a JSON body whole), not what the host read: Node does
   * not say how much of a failed write went out (README, Logs).
   */
  bytesToHost: number;
  /** Bytes removed by dedupe/normalization. */
  bytesSaved: number;
  /** HTTP status the seller answered with, if any. */
  upstreamStatus: number | undefined;
  /**
   * The code of the transport failure that ended the exchange (routing/upstream-failure.ts
   * `transportErrorCode`: `ECONNREFUSED`, `ENOTFOUND`, `HPE_INVALID_CHUNK_SIZE`, ...), set
   * where it was answered `upstream_unreachable` or `upstream_reset` (routing/handler.ts
   * `onUpstreamError`, response/body-source.ts `bodyErrorToLocal`); undefined otherwise (the
   * common case). The exchange line's `upstream_error` (a new user's trial 50, findings 1, 2).
   */
  upstreamError: string | undefined;
  /**
   * A 3xx answer's `Location` as the log shows it (observability/upstream-location.ts:
   * query, userinfo and fragment redacted, printable ASCII, 256 characters at most); undefined
   * otherwise. The exchange line's `upstream_location` (a new user's trial 50, finding 3).
   */
  upstreamLocation: string | undefined;
  /**
   * Bytes of the seller's header lines as the host would get them (`name: value\r\n` each,
   * after response/headers.ts filterResponseHeaders: stripped names gone, `Set-Cookie` scoped),
   * summed by the handler when the seller's head arrives (response/head-size.ts
   * measureHeaderLines); 0 before it, and in unit tests that feed the pipeline directly. The
   * pipeline bounds the host's head with it (`upstream_headers_too_large`; a hostile new
   * user's trial 15, M1).
   */
  hostHeaderBytes: number;
  /**
   * The number of those lines (each Set-Cookie, each line of a repeated header), summed with
   * them; 0 before the head. The pipeline bounds the host's head's lines with it (a hostile
   * new user's trial 42: 2,500 lines `x: 1` broke Python's http.client).
   */
  hostHeaderLines: number;
  outcome: Outcome | undefined;
  /** The reason of a local error or refusal (docs/errors.md). */
  reason: string | undefined;
  /** Normalization actions applied (`deduped`, `lifted`). */
  actions: string[];
  /**
   * Set when the response's tool result was left unlifted because of a bound: a text bound
   * (normalize.ts `NormalizeOutcome.textNotLifted`, recorded by response/rewrite.ts
   * rewriteResponse, the one place the JSON and SSE paths decide a result is not lifted): the
   * reason of the first text item that may hold a JSON object and was skipped, `text_bytes`,
   * `json_depth` or `json_nodes`; or, the same way, `proto_key`: the text to lift holds a
   * member `__proto__` (normalize.ts, proto-key.ts; a hostile trial 24, L1), or
   * `lone_surrogate`: a lone surrogate in a string or key (mcp/lone-surrogate.ts; a hostile
   * trial 29, M1); or
   * `repeated_key` / `negative_zero`: a lift that would go out re-serialized and drop a
   * repeated key's first value or a -0's sign, in its text or elsewhere in the message
   * (response/scanned-message.ts rewriteScanned, mcp/reserialized-lift.ts; a hostile trial 26,
   * L1; trial 39, item 2); or `lossy_number`: a lift not made because its text, or the message
   * outside its strings, holds a number a double cannot carry (normalize.ts,
   * response/rewrite.ts; trial 39, item 2); or a lift made
   * and then skipped because its output would not fit the answer's limit (response/rewrite-room.ts recordLiftSkippedForRoom, the JSON and
   * SSE stages): `max_response_bytes` or `max_sse_event_bytes`; or a lift not made because its
   * message would be over a structure bound (rewrite-room.ts liftOverJsonBound, lift-splice.ts
   * and rewrite.ts): `max_json_depth` or `max_json_nodes`. Undefined otherwise (the
   * common case). The exchange line's `text_not_lifted` and
   * `adcp_gateway_texts_not_lifted_total` (README, Logs and Metrics). Sources: a reviewer, "a
   * text over the bounds was silently not lifted"; a lift skipped for room was logged `ok`
   * with nothing about it (test/regressions/lift-skipped-for-room-silent.test.ts).
   */
  textNotLifted: TextNotLiftedReason | undefined;
  /**
   * On a stream that answers no request (the standalone GET stream, a POSTed notification's or
   * host response's, a long-lived one): the events dropped from it so far, by reason
   * (`{ get_stream_response: 5000 }`; response/sse-drop-log.ts); undefined while none was (the
   * common case). The exchange line's `events_dropped`: the drop warnings are throttled per
   * stream, so the line carries the stream's exact counts (a new user's trial 9, F5:
   * test/regressions/get-stream-drop-warnings-flood-log.test.ts).
   */
  eventsDropped: Record<string, number> | undefined;
  /**
   * On any SSE stream: how many of the seller's event ids could not be turned into resume
   * tokens so far (response/sse-id-token-log.ts: an id a Last-Event-ID header cannot carry
   * back, a token over 4096 characters); undefined while none (the common case). The exchange
   * line's `event_ids_not_tokenized`: the warnings are throttled per stream, so the line
   * carries the exact count (a hostile new user's trial 10, F2:
   * test/regressions/untokenizable-id-warning-flood-log.test.ts).
   */
  eventIdsNotTokenized: number | undefined;
  /**
   * How many of the seller's `Set-Cookie` lines were dropped, not passed to the host, because
   * their cookie-pair is not RFC 6265's (response/set-cookie.ts scopeSetCookies); undefined
   * while none (the common case). The exchange line's `cookies_dropped` (hostile trial 30, H1:
   * test/regressions/seller-cookie-escapes-scope-in-aiohttp.test.ts).
   */
  cookiesDropped: number | undefined;
  /**
   * The `event:` name of the SSE event that carried the request's own response (or one of a
   * batch's requests' responses) and was refused as no answer for it (`upstream_not_mcp`:
   * response/sse-event-judge.ts `namedEvent`), its first 64 characters (`shownInMessage`);
   * undefined otherwise (the common case). The exchange line's `answer_event`, and what
   * `probe` names in its report (probe/answer-events.ts): the host's error alone does not say
   * why the answer was refused. Reported failure (a hostile new user's trial): `probe` gave
   * no clue that the seller's answer was there, under a name MCP clients do not read
   * (test/regressions/probe-named-event-answer-ignored.test.ts).
   */
  answerEvent: string | undefined;
  /**
   * The bytes of a seller's acknowledgement body the gateway dropped (response/ack-body.ts): a
   * 2xx non-SSE answer to a POST that carries no request ({@link carriesRequest}) whose body is
   * no JSON-RPC message (`{"status":"accepted"}`, `text/plain` `OK`), answered to the host as
   * 202 Accepted with no body; its decoded bytes as read, a leading BOM included. Undefined
   * otherwise (the common case). The exchange line's `ack_body_dropped_bytes`. Reported failure
   * (a new user's hostile trial 12, M2): such a body made `notifications/initialized` a 502
   * `upstream_not_mcp` and the MCP SDK client's `connect()` failed
   * (test/regressions/notification-ack-body-breaks-sdk-connect.test.ts).
   */
  ackBodyDroppedBytes: number | undefined;
  /**
   * The bytes of the host's DELETE body, read and not forwarded: a DELETE ends the session
   * and carries no JSON-RPC message (MCP Streamable HTTP), so the seller gets it without one,
   * as a GET (request/headers.ts BODY_HEADERS). Undefined for no body, and for any other
   * method (the common case). The exchange line's `request_body_dropped_bytes`. Reported
   * failure (a hostile new-user trial 16, L2): the body went to the seller as sent, and a
   * `tools/call` in it was answered outside the tool's limits
   * (test/regressions/delete-body-forwarded-escapes-limits.test.ts).
   */
  readonly requestBodyDroppedBytes: number | undefined;
  /**
   * `per_process` when a graceful shutdown ended this exchange's SSE stream while the resume
   * secret is the random per-process one (app.ts GatewayControl.resumeSecret): its tokens die
   * with the process, so a request's stream got `gateway_shutdown` rather than a plain end
   * to resume from (response/sse-stage.ts). Undefined otherwise (the common case). The
   * exchange line's `resume_secret`: why a stream that sent an event id was not left to
   * resume. Reported failure (a hostile new user's trial 13, M1): such streams ended plainly,
   * the MCP SDK client resumed into `resume_token_invalid` on the restarted gateway and its
   * call hung until its own timeout (test/regressions/restart-without-secret-hangs-sdk-call.test.ts).
   */
  shutdownResumeSecret: 'per_process' | undefined;
  /**
   * Aborts the upstream request, set once the dispatcher starts it. Safe to call repeatedly
   * (a no-op once undici has completed the request). A normal end passes the shared
   * `GATEWAY_FINISHED` (errors/abort.ts): no error is built per exchange.
   */
  abortUpstream: (reason: Error) => void;
  /** True once the host's answer is settled (sent, being streamed to its end, or refused): later upstream events are ignored. */
  finished: boolean;
  /** True once SSE headers went to the host: a local error must then be a final SSE event. */
  sseStarted: boolean;
  /**
   * The host's `Mcp-Session-Id` on this request (undefined without one: a stateless seller,
   * an `initialize`). With the agent's url (the seller endpoint) and the request's id, what a
   * request reusing an id and a host's `notifications/cancelled` are matched with
   * (routing/in-flight-requests.ts).
   */
  readonly session: string | undefined;
  /**
   * True once a `notifications/cancelled` the host sent in the same MCP session (seller url
   * and `Mcp-Session-Id`) named this request's id (routing/in-flight-requests.ts; a single request's
   * exchange only, never a batch's). The host has then dropped the id (MCP cancellation: the
   * receiver "SHOULD NOT send a response"): an error the gateway would make up because the
   * seller sent no answer (errors/local-reply.ts CANCELLED_QUIET_REASONS) is not sent, and the
   * host's answer ends plainly, outcome `cancelled` (errors/local-reply.ts). Reported failure
   * (trial 17, L1): such a request's stream ended with a made-up `upstream_reset` error for
   * the id, which the MCP SDK client logged as "Received a response for an unknown message
   * ID", counted as a limit breach
   * (test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts).
   *
   * Set when the cancellation comes, until the seller answers it: kept once the seller accepted
   * one naming this request (2xx: {@link cancelAccepted}), cleared when the seller refused
   * every one (a review, Low: test/regressions/cancel-refused-by-seller-still-drops-request.test.ts;
   * routing/in-flight-requests.ts PendingCancellation). A getter: {@link cancelAccepted} or
   * {@link cancelsAwaited} above 0, never kept in step by hand.
   */
  readonly cancelled: boolean;
  /** How many cancellations naming this request await the seller's answer (routing/in-flight-requests.ts PendingCancellation). */
  cancelsAwaited: number;
  /** True once the seller answered a cancellation naming this request with 2xx: the host's cancellation took effect (never sent if not yet; remembered for its resumes). */
  cancelAccepted: boolean;
  /**
   * Called once when the seller accepts a cancellation naming this request
   * (routing/in-flight-requests.ts PendingCancellation, which clears it first), else undefined.
   * Two users set it, one at a time: routing/backoff-wait.ts awaitBackoffTurn, while the request
   * waits for its backoff turn before it is sent, so that a request the host cancelled is
   * answered at once and never sent (hostile trial 55, F2:
   * test/regressions/cancelled-while-held-still-sent.test.ts), clearing it when the wait ends;
   * and response/sse-stage.ts, while the request's SSE stream waits for host answers, so that
   * the stream then waits for none (StreamHostWaits.hostCancelled; hostile trial 59, F2). The
   * stage sets it only when the slot is empty (undefined), never over the wait's, and clears it
   * at the stream's end only if it still holds its own.
   */
  onCancelled: (() => void) | undefined;
  /**
   * While the handler holds the request at its backoff turn for the seller's answers to the
   * cancellations naming it that were awaited then (routing/in-flight-requests.ts
   * InFlightRequests.holdAtTurn, its deadline bounding it); else undefined.
   */
  cancelHold: CancelHold | undefined;
  /**
   * True for a DELETE (MCP Streamable HTTP: it ends the session). Its 2xx answer is never an
   * SSE stream (pipeline.ts: `upstream_not_mcp`); any other passes through as a 4xx does.
   */
  readonly endsSession: boolean;
  /**
   * True for a GET: it opens the standalone SSE stream, or resumes a stream with
   * `Last-Event-ID` (MCP Streamable HTTP). Its 2xx answer is SSE or not MCP (pipeline.ts:
   * `upstream_not_mcp`; the seller's 405 and other 4xx pass through).
   */
  readonly opensStream: boolean;
  /**
   * True for a GET whose `Last-Event-ID` was a standalone GET stream's token signed for a url
   * a reload has moved the agent from (resume/previous-urls.ts): served as a fresh standalone
   * GET stream at the agent's url in force, no `Last-Event-ID` sent to it (routing/handler.ts;
   * hostile trial 36, F2: test/regressions/moved-agent-get-stream-given-up.test.ts). False
   * otherwise. The exchange line's `resume_url_moved` (only when true).
   */
  readonly resumeUrlMoved: boolean;
  /** Stream state for SSE resumption: the last event id forwarded to the host (undefined before any). */
  lastEventIdSent: string | undefined;
  /**
   * The SSE stream this exchange belongs to (ARCHITECTURE §4). A fresh stream starts at 0
   * bytes now; a `Last-Event-ID` resume carries the count and start time from its token.
   */
  readonly stream: {
    /** Unix ms when the request's stream started (sse_deadline_ms runs from here, across resumes). */
    readonly startedAt: number;
    /** Cumulative bytes already counted for this request's stream before this exchange (what its resume tokens added included: sse-event-ids.ts chargeToken). */
    readonly usedBytes: number;
    /** The seller's event id this exchange resumes after (sent upstream as Last-Event-ID). */
    readonly resumeFrom: string | undefined;
    /**
     * The verified `Last-Event-ID` token this exchange resumes from (undefined on a fresh
     * stream): until the resumed stream gives the host an event with a token of its own, it is
     * the token the host resumes from next, so sse-event-ids.ts `noteTail` notes the bytes sent
     * after it (resume/tail-ledger.ts). Reported failure (a review, 2026-12-05): a resumed
     * stream that sent ~30 KB without an id, then dropped, noted nothing, and every later resume
     * from the same token started from the same count: 372,389 bytes to the host over 10 resumes
     * under `max_response_bytes: 100000`
     * (test/regressions/resume-without-ids-escapes-cumulative-bound.test.ts).
     */
    readonly resumeToken?: string | undefined;
  };
  /** The agent guard whose buffered-bytes cap the body readers count against (src/admission/agent-guard.ts); absent in unit tests. */
  readonly guard?: AgentGuard | undefined;
  /**
   * The call kind under which the body reader's buffer lease may shed this exchange while
   * that kind backs off (agent-guard.ts, load shedding); set by the handler once the request
   * is admitted, never for a probe.
   */
  shedKind: string | undefined;
  /** The body reader's buffer lease ({@link openBufferLease}), released when the host's answer closes. */
  bufferLease: BufferLease | undefined;
  /**
   * Why {@link mintEventId} last made no token, when the codec refused one
   * (resume/token.ts ResumeMintError: its code, `resume_token_too_long` or
   * `resume_state_invalid`, and its message, which names a field, never a value); undefined
   * until then, and the state it was asked to mint (`state`: the token's parts as they were
   * given, measured only if the warning is written: resume/token.ts tokenPartCosts). Read for
   * the untokenized-id warning's cause (response/sse-id-token-log.ts tokenRefusalCause; hostile
   * trial 55, F4; trial 56, F4: the cause measured the exchange's request, not the token).
   */
  tokenRefusal: { readonly code: string; readonly message: string; readonly state: Omit<ResumeState, 'issuedAt'> } | undefined;
  /**
   * Mints the event id forwarded to the host for a seller's event id; undefined when minting
   * is impossible (the event then goes out without an id). `final`: the event carries the
   * response to the stream's request (the token says so: resume/token.ts `final`).
   * `awaited`: on a batch's stream whose ids are known, the requests still without their
   * response after this event (response/batch-answers.ts awaitedKeys; resume/token.ts `w`),
   * else undefined.
   */
  readonly mintEventId: (upstreamId: string, usedBytes: number, final: boolean, awaited: readonly string[] | undefined) => string | undefined;
  /**
   * Where this exchange's bounded SSE stream notes its count when it ends after bytes the host
   * got past the last token the stage gave it with an event, so that a resume from that token
   * starts from that count (resume/tail-ledger.ts; sse-event-ids.ts `noteTail`; hostile trial 24,
   * F1). Undefined for a stream without the cumulative bound, and in unit tests: nothing noted.
   */
  readonly resumeTails: ResumeTailLedger | undefined;
  /**
   * Where the server-to-client requests (`elicitation/create`, ...) this exchange's SSE stream
   * carries await the host's answer, and where the stream, when it has a deadline, waits for
   * them, its idle clock paused meanwhile (routing/host-answer-waits.ts; hostile trial 57, F3).
   * Set in a session (`session`); undefined without one, and in unit tests: nothing is tracked,
   * the idle clock runs as before.
   */
  readonly hostAnswers: HostAnswerWaits | undefined;
  /**
   * The greatest `retry:` value (ms) the SSE stage forwards on this exchange's stream: a
   * seller's higher one goes out as this (response/sse-encode.ts clampSseRetryMs). Half the
   * resume token lifetime within [500, 300000] ms (sse-encode.ts sseRetryCeilingMs), so that a
   * host waiting as told resumes before its token expires (reported failure:
   * test/regressions/sse-retry-outlives-resume-token.test.ts).
   */
  readonly sseRetryMaxMs: number;
}

/** What {@link createExchange} is given. */
type ExchangeInit = {
  agent: AgentConfig;
  rpc: RpcPeek;
  limits: Limits;
  protocolVersion: string;
  normalize: boolean;
  stream: Exchange['stream'];
  /** Absent in unit tests: then no buffered-bytes cap applies. */
  guard?: AgentGuard;
  /** The host's request is a DELETE ({@link Exchange.endsSession}); false when absent. */
  endsSession?: boolean;
  /** {@link Exchange.requestBodyDroppedBytes}; undefined when absent. */
  requestBodyDroppedBytes?: number | undefined;
  /** The host's request is a GET ({@link Exchange.opensStream}); false when absent. */
  opensStream?: boolean;
  /** {@link Exchange.resumeUrlMoved}; false when absent. */
  resumeUrlMoved?: boolean;
  /** {@link Exchange.session}; undefined when absent. */
  session?: string | undefined;
  mintEventId: Exchange['mintEventId'];
  /** {@link Exchange.resumeTails}; undefined when absent (unit tests). */
  resumeTails?: ResumeTailLedger | undefined;
  /** {@link Exchange.hostAnswers}; undefined when absent (unit tests). */
  hostAnswers?: HostAnswerWaits | undefined;
  /** {@link Exchange.sseRetryMaxMs}; default SSE_RETRY_MAX_MS (unit tests). */
  sseRetryMaxMs?: number;
  /**
   * {@link Exchange.startedAt} when the host's request reached the gateway before the exchange
   * is made (a request that waited for its turn on its connection: routing/pipelined-turn.ts);
   * now when undefined.
   */
  startedAt?: bigint | undefined;
};

/** Makes the exchange record for a request whose agent, peek and limits are known. */
export function createExchange(init: ExchangeInit): Exchange {
  return new ExchangeRecord(init) as unknown as Exchange;
}

/**
 * The exchange record ({@link Exchange}): a class, so that every exchange has the same hidden
 * class with its properties in the object and {@link Exchange.cancelled} a getter on the
 * prototype. Why not an object literal: a literal holding a getter (`get cancelled()`,
 * 294764c) is made in V8's dictionary mode (`%HasFastProperties` false), ~2.3-3.5 µs to make
 * in a loop against ~0.3 µs for this class, and each of the dozens of reads of an exchange's
 * properties per request a hash lookup (~20-30 ns against ~2 ns). Issue 5, 1 KiB results
 * (bench/README.md, "The exchange record in dictionary mode"). Every property is written in the
 * constructor, in one order, so that no later write changes its shape.
 */
class ExchangeRecord {
  constructor(init: ExchangeInit) {
    const x = this as unknown as Writable<Exchange>;
    x.agent = init.agent;
    x.rpc = init.rpc;
    x.limits = init.limits;
    x.protocolVersion = init.protocolVersion;
    x.normalize = init.normalize;
    x.stream = init.stream;
    x.mintEventId = init.mintEventId;
    x.resumeTails = init.resumeTails;
    x.hostAnswers = init.hostAnswers;
    x.sseRetryMaxMs = init.sseRetryMaxMs ?? SSE_RETRY_MAX_MS;
    x.startedAt = init.startedAt ?? process.hrtime.bigint();
    x.bytesFromSeller = 0;
    x.bytesDecoded = 0;
    x.bodySource = undefined;
    x.bytesToHost = 0;
    x.bytesSaved = 0;
    x.upstreamStatus = undefined;
    x.upstreamError = undefined;
    x.upstreamLocation = undefined;
    x.hostHeaderBytes = 0;
    x.hostHeaderLines = 0;
    x.outcome = undefined;
    x.reason = undefined;
    x.actions = [];
    x.textNotLifted = undefined;
    x.eventsDropped = undefined;
    x.eventIdsNotTokenized = undefined;
    x.cookiesDropped = undefined;
    x.answerEvent = undefined;
    x.ackBodyDroppedBytes = undefined;
    x.requestBodyDroppedBytes = init.requestBodyDroppedBytes;
    x.shutdownResumeSecret = undefined;
    x.abortUpstream = () => {};
    x.finished = false;
    x.sseStarted = false;
    x.session = init.session;
    x.cancelsAwaited = 0;
    x.cancelAccepted = false;
    x.onCancelled = undefined;
    x.cancelHold = undefined;
    x.endsSession = init.endsSession === true;
    x.opensStream = init.opensStream === true;
    x.resumeUrlMoved = init.resumeUrlMoved === true;
    x.lastEventIdSent = undefined;
    x.guard = init.guard;
    x.shedKind = undefined;
    x.bufferLease = undefined;
    x.tokenRefusal = undefined;
  }

  /** {@link Exchange.cancelled}: {@link Exchange.cancelAccepted} or {@link Exchange.cancelsAwaited} above 0. */
  get cancelled(): boolean {
    const x = this as unknown as Exchange;
    return x.cancelAccepted || x.cancelsAwaited > 0;
  }
}

/** `T` with its `readonly` dropped: the record's constructor writes every property once. */
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Opens the buffer lease the exchange's body reader counts its held bytes in (agent-guard.ts
 * `BufferLease`), with the exchange's load shedding; undefined without a guard (unit tests).
 * It counts under the agent's settings in force, which a reload since the exchange began may
 * have changed: the exchange's own `agent.guard` does not set them (review 35, F2).
 * The handler releases it when the host's answer closes, so a reader still waiting for room
 * then (a deadline or a host that left) is woken and stops (read-body.ts).
 */
export function openBufferLease(exchange: Exchange): BufferLease | undefined {
  if (exchange.guard === undefined) return undefined;
  return (exchange.bufferLease = exchange.guard.lease(exchange.agent.name, exchange.agent.guard, exchange.shedKind));
}
