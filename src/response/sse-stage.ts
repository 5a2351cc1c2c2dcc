/**
 * The SSE path: event decode -> per-event + cumulative budget -> structure bounds -> rewrite
 * -> encode (ARCHITECTURE §2). Nothing is buffered beyond the event being parsed: the events
 * completed by one input chunk go to the host in one write as soon as that chunk is parsed,
 * before the next chunk is awaited (one write per event cost more than all the rest on a
 * stream of small events: bench/README.md "SSE events/s"; sse-host-writer.ts).
 *
 * Per event, only what the event can need (issue 5, bench/README.md "SSE events/s" and
 * "SSE one-event results"):
 * - Event blocks the gateway neither reads nor changes (no id, cannot be the response, in
 *   the exact form the encoder writes, provably within every bound) are forwarded as the
 *   seller's bytes, unparsed: sse-raw-events.ts decides, byte for byte, conservatively (its
 *   plan computed in one WebAssembly pass per chunk window: sse-raw-plan.ts).
 *   eventsource-parser stays the parser of every other event but one kind:
 * - An event block spanning chunks in the form MCP servers write (`event: message`, one
 *   `data: ` line, the blank line) is held as the seller's bytes and dispatched from them when
 *   its blank line arrives (sse-held-block.ts): no decoded copy of a large event, no parser;
 *   a block that turns out to have another form goes to the line feeder as it arrived.
 * - An event's data is JSON-parsed only when it may be the response to the request
 *   (sse-response-sniff.ts mayBeResponse: the rewrite and the ending need it), and not even then when the
 *   WebAssembly scan of its bytes proves what the parse would (sse-message.ts); the data's
 *   bytes go out as they are, or spliced for a dedupe. Progress notifications and the like
 *   get the size and structure bounds and the count.
 * - A block with an id and no data dispatches no event but sets the host's last event ID
 *   (WHATWG HTML §9.2.6; sse-id-only.ts): nothing goes out for it then (see "Event ids").
 *   Such a block of one ASCII line (`id: 5` and the blank line), and a comment-only one
 *   (`: keepalive`), in a planned chunk, is read from its bytes (`takeSimple`,
 *   sse-simple-block.ts), not decoded and parsed: the same counts and frames at ~half the
 *   cost (bench/sse-loop.ts; a hostile trial's floods of them).
 * - A chunk without CR is planned block by block (raw or parsed); otherwise it is parsed in
 *   one piece unless an event in it may carry an id (its resume token needs the exact count
 *   through its end), it crosses the cumulative bound, or the stream has no total (its
 *   undelivered count: below); then one event block at a time.
 *
 * Event ids (ARCHITECTURE §4; sse-event-ids.ts): an event's non-empty id goes out as a resume
 * token carrying the count through the event; an id-only block's id is the stream's pending
 * id, which the next event without an id of its own carries, or the stream's plain end writes
 * alone (`writePendingId`). A raw run that the pending id would go with has its first event
 * parsed (`takePlanned`), an event held as bytes gets it when dispatched. Tokens are minted
 * within the stream's token budget (sse-token-credit.ts), and a bounded stream notes its
 * resume tail at its end (resume/tail-ledger.ts).
 *
 * Bounds (spec: mcp-response-extraction.md, Size Limits; ARCHITECTURE §5):
 * - cumulative: every byte of a bounded stream (comments included) counts against
 *   `max_response_bytes` -> `sse_cumulative`, and so does what the gateway adds to the host's
 *   stream over those bytes: what each resume token adds (its length over the seller id's:
 *   `chargeToken`), and what the re-encoding of a parsed event block adds over the block's
 *   bytes when positive (`data:x` goes out as `data: x`, `id:`/`event:`/`:` the same, a
 *   `retry:` on its own block with its value clamped, a last event's blank line, U+FFFD for
 *   invalid UTF-8: `encoding.charge`; raw-forwarded and held blocks go out as the seller's
 *   bytes and cost nothing more). So the host never receives more than the bound however the
 *   seller's events are shaped. A block's growth is counted against its own bytes (on a
 *   bounded stream the parsed blocks are taken one at a time: a block's slack does not pay
 *   for the next one's growth) and before its token is minted (the token's count includes
 *   it). Events completed before the limit point are delivered; the bytes past it are never
 *   parsed; an event whose encoding or token takes the stream over is not delivered. Bounded:
 *   every stream answering a POST, a request's, a batch's, and a POSTed notification's or
 *   JSON-RPC response's (exchange.ts hasCumulativeBound; these had no total: 271 MB reached the host
 *   with the limit at 1 MB, test/regressions/sse-notification-answer-unbounded.test.ts). The
 *   standalone GET stream and long-lived streams have no cumulative bound (keep-alives there
 *   are normal). A rewrite of the response event counts too: a lift whose
 *   added bytes would take the count (this event's token included) over the bound, or whose
 *   data would be over `max_sse_event_bytes`, is not made; the seller's data goes out, and
 *   the exchange's `text_not_lifted` names the bound (rewrite-room.ts eventRewriteOverBound,
 *   recordLiftSkippedForRoom).
 * - undelivered (a stream without a cumulative bound): its decoded bytes taken for nothing,
 *   each frame queued for the host lowering the count by 64 x what it carries (an event's
 *   frame but its id line: `framedEvent`; a raw run, a pending id's token: `framed`; a comment
 *   or a `retry:` at its line's end: `sendEncodedFrame`, sse-frame-lines.ts), against `max_response_bytes` plus the per-event cap below (so that an
 *   event the cap accepts goes out after up to `max_response_bytes` of bytes delivered as
 *   nothing); the next byte past it ends the stream
 *   plainly, `sse_undelivered` (sse-undelivered.ts; `take`, `endUndelivered`). Dropped
 *   events, skipped bytes, unknown-field lines and id-only blocks decoded for nothing had no
 *   bound but one over-cap event's skip (hostile trial 37, F1). Such a stream takes its parsed
 *   blocks one at a time, so that a frame clears its own block, and holds (sse-held-block.ts),
 *   forwards raw or reads as a simple block only what fits under that limit.
 * - per event: an event's data bytes against `max_sse_event_bytes` -> `sse_event`. An
 *   incomplete line waits as the raw bytes it arrived in (SseLineFeeder: no decoded copy, no
 *   concatenation), capped at that bound + SSE_PENDING_SLACK_BYTES, and so is the parser's
 *   own buffer (the data lines of the event so far): one endless `data:` line (the 100 MiB
 *   attack) costs its bytes up to the cap, then `sse_event` (or `sse_cumulative` first, when
 *   the response limit is the lower), without waiting for the line to end; its
 *   `observed_bytes` is the line's bytes read by then (`parserCapBreached`).
 * - structure: every event's data, whatever its `event:` name, is checked for depth/node
 *   bounds before JSON.parse (the scan of sse-message.ts, skipped where
 *   withinJsonBounds (mcp/json-bounds.ts) proves it would pass; a raw block proves it from its
 *   bytes: sse-event-judge.ts). Before, only an event with no name or `message` was (a new
 *   user's trial 9, F1: `event: x-custom` carried 5,000-deep JSON, and responses, to the
 *   host; see sse-event-judge.ts namedEvent).
 * - time: `sse_idle_timeout_ms` (no byte at all while the stage waits for the seller) ->
 *   `sse_idle`, `sse_deadline_ms` (whole stream) -> `sse_deadline`; either one running out
 *   while the stage waits for the host (below) -> `host_not_reading` (sse-stream-timers.ts).
 * - memory: what the stream holds of the event not yet dispatched counts against the agent's
 *   `max_buffered_response_bytes` (src/admission/agent-guard.ts), and so does a bounded
 *   stream's brotli decoder, from before its first byte is decoded to its end (decode.ts; a
 *   hostile new user's trial 15, H2: 30 such streams at lgwin 24 held 659 MB RSS, counted
 *   nowhere): the incomplete line, the block held as bytes, and the complete `data` lines the parser has joined
 *   (SseLineFeeder.openDataBytes; a hostile new user's trial 10, F3: an endless event of
 *   complete lines held up to the parser's bound per stream uncounted,
 *   test/regressions/sse-event-lines-escape-buffer-cap.test.ts). Over it, the next chunk is
 *   read once the agent's other responses release enough (no idle timeout meanwhile).
 * - host back-pressure: once the host's response holds SSE_HOST_BUFFER_BYTES (sse-host-writer.ts) written
 *   but not yet taken by its socket, the next chunk is read after it drains (TCP back-pressure
 *   on the seller, whose bytes then wait in the kernel, not in the gateway). The seller is
 *   not waited for meanwhile, so the idle time is the host's: `sse_idle_timeout_ms` without
 *   a drain, or `sse_deadline_ms` running out during the wait, is `host_not_reading` (its
 *   connection reset: errors/local-reply.ts). Reported failure: such a host was logged and
 *   counted as the seller's `sse_idle`
 *   (test/regressions/sse-host-stops-reading-not-seller-idle.test.ts).
 *
 * Which events pass (sse-event-judge.ts, whose doc holds the rules and their reported
 * failures): a JSON-RPC response to another id, or any message that is no request,
 * notification or response to the request, ends a request's stream `upstream_not_mcp` (a
 * batch's: for id null); no response passes on the standalone GET stream or on a POSTed
 * notification's or response's stream (dropped, `get_stream_response`,
 * `notification_stream_response`); data naming no kind of message is dropped
 * (`message_without_kind`).
 *
 * Ending: once the response to the request's id has passed, the host's stream ends and the
 * upstream request is aborted (SDK servers may keep a resumed stream open: ARCHITECTURE §5).
 * A batch's stream ends so once each request in the batch has had its response
 * (batch-answers.ts; MCP 2025-03-26: the server SHOULD close the stream after all responses
 * have been sent), and a batch without requests ends normally with the seller's stream.
 * Reported failure: every batch's stream ended with `upstream_reset`, or `resumable_end`,
 * all its answers received (test/regressions/sse-batch-answer-never-ends-cleanly.test.ts).
 * A batch's tokens carry the requests still awaited after their event (`mintEventId`'s
 * `awaited`; resume/token.ts `w`), so a resumed batch's stream ends so too (a reviewer:
 * test/regressions/sse-batch-resumed-stream-never-ends-cleanly.test.ts).
 * If the seller's stream ends or breaks after an event id was forwarded but before that
 * response, the host's stream ends plainly so the client resumes with `Last-Event-ID`
 * (ARCHITECTURE §3 exception); before any event id it is `upstream_reset`. An event the
 * seller's stream ends before its blank line is never dispatched, on any stream (WHATWG HTML
 * §9.2.6; `onEvent`): not forwarded, not the response, so a response cut off so is a stream
 * ending without its response (a hostile new user's trial 10, F5). The resume token
 * of the event carrying the response says so (`final`): a resume from it is answered with an
 * empty stream without contacting the seller (routing/handler.ts), never with this stage's
 * `upstream_reset` or `sse_idle` for an id the host has its answer for
 * (test/regressions/sse-resume-from-final-response-token.test.ts).
 *
 * A breach on a stream answering a POSTed notification or JSON-RPC response (no id to answer)
 * ends it as on a request's stream, with one final event: the error for id null (the body
 * such a POST gets as HTTP 502 before anything is sent; errors/local-reply.ts). A breach on
 * the standalone GET stream (no request to answer) drops that one event, counts it for the
 * stream's throttled warnings (sse-drop-log.ts: the first drop's "SSE stream: event
 * dropped", with the reason and observed_bytes, then summaries of the counts by reason; a new
 * user's trial 9, F5), for the exchange line (its `reason`, the last drop's, and
 * `events_dropped`) and in `adcp_gateway_sse_events_dropped_total` (per drop), and
 * keeps the stream open, as a response there (above) is dropped: ending it would only make the
 * client reconnect into the same event. That holds for an endless `data:` line too: the
 * rest of that event is skipped up to the next blank line, then parsing resumes; what is
 * dropped and skipped counts as undelivered (Bounds, above), which ends the stream past
 * `max_response_bytes` + the per-event cap.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { feedWithoutStacks } from './sse-parser-feed.js';
import { hasCumulativeBound, isRequestStream, openBufferLease, type Exchange } from '../exchange.js';
import { answerWithLocalError, type LocalErrorInput } from '../errors/local-reply.js';
import type { DropReason, EndReason } from '../errors/codes.js';
import { CR, LF } from '../mcp/json-bytes.js';
import { ByteBudget } from './byte-budget.js';
import { SseBoundaryScanner, SseIdFieldWatch, SseLineFeeder, blankLineEnds } from './sse-boundaries.js';
import { dataBytesOf } from './sse-event-data-bytes.js';
import { clampSseRetryMs, encodeSseComment, encodeSseIdOnly, encodeSseRetry } from './sse-encode.js';
import { dataLineCount, encodedEventBytes, encodedIdOnlyBytes } from './sse-encoded-size.js';
import { SseIdOnlyBlocks } from './sse-id-only.js';
import { TokenCredit } from './sse-token-credit.js';
import { UndeliveredBytes } from './sse-undelivered.js';
import { FRAME_LINE_HEAD_BYTES, frameLineEnds } from './sse-frame-lines.js';
import { planRawEventsFast } from './sse-raw-plan.js';
import { HELD, NOT_HELD, SseHeldBlock } from './sse-held-block.js';
import { ID_ONLY, NOT_SIMPLE, simpleBlock, simpleValueStart, type SimpleBlockKind } from './sse-simple-block.js';
import type { UpstreamResponse } from './json-stage.js';
import { DirectChunks, bodyErrorToLocal } from './body-source.js';
import { drainOrClose } from './drain.js';
import { releaseBody, type DecoderRoom } from './decode.js';
import { bodyPool } from './body-pool.js';
import { eventRewriteOverBound, recordLiftSkippedForRoom } from './rewrite-room.js';
import { BatchAnswers } from './batch-answers.js';
import { SseDropLog } from './sse-drop-log.js';
import { SseEventIds } from './sse-event-ids.js';
import { SseEncodingCharge } from './sse-encoding-charge.js';
import { EVENT_REFUSED, SseEventJudge } from './sse-event-judge.js';
import { SseStreamTimers } from './sse-stream-timers.js';
import { SseHostWriter } from './sse-host-writer.js';
import type { PipelineHooks } from './pipeline.js';

/** Slack over `max_sse_event_bytes` for the parser's pending line buffer (field names, line breaks). */
export const SSE_PENDING_SLACK_BYTES = 64 * 1024;

/** The blank line that ends a raw (LF-only) event block (sse-raw-events.ts). */
const LF_LF = Buffer.from('\n\n', 'latin1');
/** UTF-8 length of the event type `message` (the usual one, not measured). */
const MESSAGE_TYPE_BYTES = 7;

/** Bytes of an event's `event:` type as encodedEventBytes takes them: -1 for none, 7 for `message`. */
function eventTypeBytes(event: string | undefined): number {
  return event === undefined ? -1 : event === 'message' ? MESSAGE_TYPE_BYTES : Buffer.byteLength(event);
}

/** The fewest bytes an event's frame has besides its data: `data: `, its LF, the blank line (sse-encoded-size.ts encodedEventBytes). */
const EVENT_FRAME_MIN_BYTES = 8;

/**
 * Streams a seller's `text/event-stream` body to the host through the SSE stages (module doc).
 * Takes over the reply (`reply.hijack()`), commits the SSE headers at once (they leave with
 * the first events written in the same turn of the event loop, else alone at its end), then
 * writes the events;
 * resolves when the host's stream is over, whatever ended it (never rejects: every failure is
 * answered through the local-reply writer, ARCHITECTURE §3, or ends the stream plainly).
 */
export async function handleSseBody(
  exchange: Exchange,
  reply: FastifyReply,
  res: UpstreamResponse,
  log: FastifyBaseLogger,
  hooks: PipelineHooks,
): Promise<void> {
  const { limits, rpc } = exchange;
  const raw = reply.raw;
  const requestStream = isRequestStream(rpc);
  // Every stream but the standalone GET stream and long-lived ones: a breach ends it (`fail`),
  // and it has the cumulative bound and the deadline (exchange.ts hasCumulativeBound). Decided
  // once per stream: nothing more per event than a request's stream did before.
  const bounded = hasCumulativeBound(rpc);
  const perEventLimit = limits.max_sse_event_bytes;
  // The stream's count, seeded from its resume token on a Last-Event-ID reconnect.
  const cumulative = bounded ? new ByteBudget(limits.max_response_bytes, 'sse_cumulative', exchange.stream.usedBytes) : undefined;
  // What tokens add is bounded by the seller's bytes (sse-token-credit.ts), on every stream:
  // the cumulative bound alone let a bounded stream's host get ~14x the seller's bytes.
  const credit = new TokenCredit();
  /**
   * A stream without a total: its decoded bytes taken since the last frame queued for the host,
   * against `max_response_bytes` plus the per-event cap (the event being read counts too:
   * sse-undelivered.ts; hostile trial 37, F1). Past it the stream ends plainly,
   * `sse_undelivered` (`take`, `endUndelivered`).
   */
  const undelivered = bounded ? undefined : new UndeliveredBytes(limits.max_response_bytes, perEventLimit + SSE_PENDING_SLACK_BYTES);
  /** `n` seller bytes taken, each byte once wherever it is taken: the token credit's earnings and the undelivered count. */
  const earn = (n: number): void => {
    credit.earn(n);
    undelivered?.take(n);
  };
  /**
   * After every frame queued for the host (an event, a raw run, an id-only block's token, a
   * comment, a `retry:` line): records what the host received on a bounded stream
   * (SseEventIds.noteDelivered, for its resume tail: sse-event-ids.ts); on the others
   * lowers the undelivered count by a multiple of `bytes`, what the frame carries to the host
   * (an event's frame but its id line: `framedEvent`; a raw run's bytes, a token's, a comment
   * or `retry:` frame as written:
   * sse-undelivered.ts UNDELIVERED_FRAME_CREDIT; a `:\n` or an empty event every so many bytes
   * reset it: review of e72ea9d, hostile trial 40, F1). Callers on a bounded stream may pass 0.
   */
  const framed = (bytes: number): void => {
    if (cumulative !== undefined) ids.noteDelivered();
    else undelivered!.forwarded(bytes);
  };
  /**
   * {@link framed} for an event queued with the type `event` and `data` (as written: text, or
   * its UTF-8 bytes). On a stream without a total the count is lowered by the event's frame as
   * the host gets it, its id line aside (a token the gateway mints; sse-encoded-size.ts
   * encodedEventBytes): its `event:` line, `data: ` prefixes, data bytes, line breaks. For a
   * block the raw path may forward that is the block's bytes, what a raw run is credited
   * (`takePlanned`), so an event forgives the same whether it goes out raw (whole in a chunk),
   * held (sse-held-block.ts) or parsed (cut). Before, a parsed or held event was credited its
   * data alone, a parsed one in UTF-16 units: after bytes taken for nothing, a notification cut
   * inside forgave less than whole, and the stream's end depended on the cut
   * (test/regressions/get-stream-event-credit-depends-on-chunks.test.ts). Computed only when
   * the lower bound, the data's length (UTF-16 units or bytes, no more than its bytes) + 8
   * (`data: `, its LF, the blank line), does not bring the count to 0 already: a comparison per
   * event otherwise.
   */
  const framedEvent = (event: string | undefined, data: string | Buffer): void => {
    if (undelivered === undefined) return framed(0);
    if (undelivered.clearedBy(data.length + EVENT_FRAME_MIN_BYTES)) return;
    const eventBytes = eventTypeBytes(event);
    undelivered.forwarded(encodedEventBytes(-1, eventBytes, dataLineCount(data), typeof data === 'string' ? Buffer.byteLength(data) : data.length));
  };

  // The head is committed now (sse-host-writer.ts); the frames of each input chunk go out
  // together when it is done (`host.flush`), before the next chunk is awaited.
  const host = new SseHostWriter(reply, res.statusCode, exchange);
  exchange.sseStarted = true;
  const batch = host.batch;
  const answer = (input: LocalErrorInput): void => {
    host.flush();
    // A batch's stream: the error answers each request still awaited, one event each
    // (errors/local-reply.ts batchAnswered), not one for id null that answers none.
    answerWithLocalError(exchange, reply, batchAnswers === undefined ? input : { ...input, awaited: batchAnswers.unanswered() });
  };
  /** The stream's drop warnings (sse-drop-log.ts), made at its first drop. */
  let dropLog: SseDropLog | undefined;
  /**
   * Drops one event from a stream that answers no request (the standalone GET stream, a
   * long-lived one), or, on any stream, one whose data names no kind of message at all
   * (`message_without_kind`: kindless-event.ts): counted by reason for the throttled warnings (sse-drop-log.ts: the
   * stream's first drop logged at once with the agent, the reason and the event's observed
   * bytes, then at most one summary per interval and one at the end) and the exchange line's
   * `events_dropped`; the exchange line's `reason`;
   * `adcp_gateway_sse_events_dropped_total{agent,reason}`, per drop. The stream goes on. No
   * line per drop: a seller's flood of tiny responses filled the log buffer and lost lines,
   * the stream's exchange line among them (a new user's trial 9, F5).
   */
  const drop = (reason: DropReason, observedBytes: number | undefined): void => {
    (dropLog ??= new SseDropLog(exchange, log)).drop(reason, observedBytes);
    exchange.reason = reason;
    hooks.onSseEventDropped(reason);
  };
  const fail = (input: LocalErrorInput): void => {
    if (bounded) answer(input);
    else drop(input.reason, input.observedBytes);
  };
  const endPlainly = (outcome: 'ok' | 'rewritten' | 'resumable_end'): void => {
    if (exchange.finished) return;
    // The host resumes from the seller's last id (a shutdown, an idle GET stream, its end).
    writePendingId();
    if (exchange.finished) return;
    host.end(outcome);
  };

  // Only a `request` can be answered by an event; `maxDataChars`: below it, an event's data
  // cannot exceed the per-event bound (UTF-8 needs at most 3 bytes per UTF-16 unit).
  const answerable = exchange.rpc.kind === 'request';
  // The standalone GET stream (a GET without Last-Event-ID, or resuming that stream: kind
  // 'none'; a DELETE's SSE answer never gets here): no response may pass on it (module doc),
  // so events that may be one are read too (sse-message.ts standaloneVerdict).
  const standalone = exchange.rpc.kind === 'none';
  // A stream answering a POSTed notification or JSON-RPC response (`notification`; resumed
  // with its token too): no request to answer, so no response may pass on it either, as on the
  // standalone GET stream (sse-message.ts standaloneVerdict; a new user's trial 8, F4: a
  // response to a pending call came on it, past that call's limits and rewrite). Dropped with
  // its own reason, `notification_stream_response`.
  const answersNoRequest = standalone || exchange.rpc.kind === 'notification';
  // A batch's stream is answered once each of its requests has had its response
  // (batch-answers.ts; on a resumed one, those its token says were still awaited: resume/token.ts
  // `w`; a token without them gives no ids); made for batches only.
  const batchIds = exchange.rpc.batchRequestIds;
  const batchAnswers = batchIds === undefined ? undefined : new BatchAnswers(batchIds);
  /**
   * The stream answers a batch whose request ids are known: events that may hold a response
   * are read, to end the stream once each request has its response and to refuse a response
   * for an id not awaited (batch-answers.ts), a batch without requests included (every
   * response there answers none).
   */
  const awaitsBatch = batchAnswers !== undefined;
  const maxDataChars = Math.floor(perEventLimit / 3);
  /** Each event's data judged before it goes out (sse-event-judge.ts). */
  const judge = new SseEventJudge(exchange, { answerable, standalone, answersNoRequest }, res.statusCode, raw, batchAnswers, hooks.wantsResponseMessage, fail, drop);

  /** An event from eventsource-parser. */
  const onEvent = (ev: EventSourceMessage): void => {
    // The event's one data line, when it was held over chunk edges: its bytes are the data's.
    const line = lines.takeCompletedLine();
    idOnly.eventDispatched();
    // Dispatched by the line break SseLineFeeder.finish adds at the seller's end: the seller
    // never completed this event with its blank line, so it is no event (WHATWG HTML §9.2.6:
    // "If the file ends in the middle of an event, before the final empty line, the
    // incomplete event is not dispatched"; the MCP SDK client never sees it). Not forwarded,
    // not judged as the answer: the stream then ends as one without its response does
    // (`onUpstreamEnd`: `upstream_reset` for a request's stream, a plain end for the others).
    // Reported failure (a hostile new user's trial 10, F5): `data: <response>\n` and then the
    // end went out completed by the gateway as the answer, logged ok, where the same cut
    // without its LF got `upstream_reset`
    // (test/regressions/sse-unterminated-event-delivered.test.ts).
    if (exchange.finished || streamEnded) return;
    deliver(ev.event, ev.id, ev.data, dataBytesOf(ev.data, line));
  };

  /**
   * One event to the host, after its checks and rewrite: `data` as text, or `bytes` (its
   * UTF-8 encoding, when the caller has it), or both.
   */
  const deliver = (event: string | undefined, id: string | undefined, data: string | undefined, bytes: Buffer | undefined): void => {
    // Short data is within the bound whatever its characters: not measured.
    const dataBytes = bytes !== undefined ? bytes.length : data!.length <= maxDataChars ? -1 : Buffer.byteLength(data!);
    if (dataBytes > perEventLimit) {
      fail({ reason: 'sse_event', limitBytes: perEventLimit, observedBytes: dataBytes });
      return;
    }
    /** The data as UTF-8 bytes to send instead of `data`, when the checks produced them. */
    let out: Buffer | undefined;
    // Judged (sse-event-judge.ts): refused, it was reported (`fail`, `drop`) and nothing of it goes out.
    const verdict = judge.judge(event, data, bytes);
    if (verdict === EVENT_REFUSED) return;
    // A batch's stream: the responses it holds; the one completing the batch makes the event final.
    const completesBatch = batchAnswers !== undefined && judge.judgeBatch(event, data, bytes, dataBytes, verdict);
    if (completesBatch === EVENT_REFUSED) return;
    let final = completesBatch;
    const content = data ?? bytes!;
    // A non-empty seller id goes out as a resume token carrying the exact count through this
    // event (a chunk that may hold an id line is fed one event block at a time: see `takeChunk`;
    // the LF of a CR LF cut from its CR: `tokenCount`); an empty `id:` passes unchanged. In the
    // range that crosses the cumulative bound only the bytes up to the limit are parsed
    // (`take`), so an event dispatched there ends within it: its count is at most the limit
    // (counting through the limit point only over-counts; a token cannot carry more than its
    // limit). Reported failure: such an event with CR-only line endings lost its id
    // (test/regressions/sse-new-user-findings.test.ts). The token is minted once the event
    // passed its own bounds and before a response is recorded as delivered: when its length
    // takes the stream over the cumulative bound (`chargeToken`), the exchange is finished and
    // the event is not delivered.
    // What the encoding adds over the seller's block is charged first (`encoding.charge`), so
    // that this event's token counts it; the data as the seller sent it (a rewrite is counted
    // below), the id as the seller's (the token's own addition: `chargeToken`).
    const sellerData = verdict?.kind === 'response' ? verdict.bytes : verdict?.kind === 'forward' && verdict.bytes !== undefined ? verdict.bytes : content;
    let dataLines: number | undefined;
    if (cumulative !== undefined) {
      dataLines = dataLineCount(sellerData);
      const sellerDataBytes = typeof sellerData !== 'string' ? sellerData.length : dataBytes >= 0 ? dataBytes : Buffer.byteLength(sellerData);
      const eventBytes = eventTypeBytes(event);
      if (!encoding.charge(encodedEventBytes(id === undefined ? -1 : Buffer.byteLength(id), eventBytes, dataLines, sellerDataBytes))) return;
    }
    // The id it goes out with: its own, or the stream's pending id, as a resume token within
    // the stream's token budget, or none (sse-event-ids.ts).
    id = ids.eventId(id, final || verdict?.kind === 'response');
    if (exchange.finished) return;
    if (verdict?.kind === 'forward') out = verdict.bytes;
    else if (verdict?.kind === 'response') {
      final = true;
      out = verdict.out;
      let message = verdict.message;
      if (verdict.changed) {
        // A rewrite may be written into a pooled buffer (body-pool.ts splice): it serves
        // another body once the host's response has closed (its writes flushed or dropped).
        bodyPool.recycleAfterSend(raw, out);
        // A lift that would not fit (rewrite-room.ts): the seller's data goes out instead. It is
        // judged on the stream's count as the bound keeps it: the seller's bytes through this
        // event, with what every resume token added (this event's, charged above, included).
        const overBound = eventRewriteOverBound(out.length, verdict.dataBytes, perEventLimit, cumulative, lines.lfExpected ? 1 : 0);
        if (overBound !== undefined) {
          out = verdict.bytes;
          message = verdict.sellerMessage;
          // The skipped lift is reported (the exchange line's text_not_lifted, the metric).
          recordLiftSkippedForRoom(exchange, verdict.action, overBound);
        } else {
          exchange.bytesSaved += verdict.dataBytes - out.length;
          exchange.actions.push(verdict.action);
          // The count goes on with the bytes sent (this event's token was minted before: a
          // token's count leaves out its own event's rewrite, and this event ends the stream).
          if (cumulative !== undefined) cumulative.used += out.length - verdict.dataBytes;
        }
      }
      if (message !== undefined) hooks.onResponseMessage(message, out.length);
    }
    if (out === undefined && data === undefined) out = bytes;
    // The line count is the seller data's: a rewrite never adds a line break (JSON text as
    // serialized has none; a splice keeps the seller's), so it is passed on only when it is that data.
    if (out !== undefined) batch.eventBytes({ id, event }, out, out === sellerData ? dataLines : undefined);
    else batch.event({ id, event, data: data! }, dataLines);
    framedEvent(event, out ?? data!);
    // The responses it holds are the host's now (written before any later error event).
    batchAnswers?.delivered();
    ids.eventSent(id, final);
    if (final) endPlainly(exchange.actions.length > 0 ? 'rewritten' : 'ok');
  };

  /**
   * Queues a comment or `retry:` frame the stage encodes itself for the host, once
   * `encoding.charge` (sse-encoding-charge.ts) has charged its `outBytes` (UTF-8) on a bounded
   * stream; on the others those bytes lower the undelivered count (`framed`).
   */
  const sendEncodedFrame = (frame: string, outBytes: number): void => {
    if (!encoding.charge(outBytes)) return;
    batch.frame(frame);
    framed(outBytes);
  };

  /** True from a per-event cap breach (an endless line) to the next event boundary (see `take`). */
  let skippingToBoundary = false;
  /**
   * The per-event cap (`max_sse_event_bytes` + {@link SSE_PENDING_SLACK_BYTES}) broke before
   * the event ended. `observedBytes`, the bytes of the line that broke it as read so far, its
   * field name included, its line break not: for a line still incomplete over the line
   * feeder's cap, through the end of the range that crossed (SseLineFeeder.droppedLineBytes);
   * for the data of an event over the parser's buffer (eventsource-parser counts UTF-16
   * units, and clears its buffer before it reports), the data line just handed over when the
   * feeder held it across chunks (`takeCompletedLine`), and never less than the cap plus one
   * (the least that data holds in bytes; all that is known when its lines came whole in one
   * chunk). Before, the count stopped at the cap plus one, whatever had been read
   * (test/regressions/sse-event-cap-observed-bytes.test.ts).
   */
  const parserCapBreached = (observedBytes: number): void => {
    if (skippingToBoundary || exchange.finished) return;
    // A bounded stream ends here (fail answers the request, or id null); the standalone GET stream drops
    // the rest of this event and is reset at the next event boundary (see `take`).
    skippingToBoundary = true;
    fail({ reason: 'sse_event', limitBytes: perEventLimit, observedBytes });
  };
  /**
   * The line feeder dropped a line over its cap (`lines.push` returned false). The data lines
   * the parser joined before it are dropped now, with their event, not at the next boundary:
   * while skipping, the stream holds nothing (its lease counts nothing: see the read loop).
   */
  const lineCapBreached = (): void => {
    parserCapBreached(lines.droppedLineBytes);
    parser.reset();
    startParser();
  };
  const parser = createParser({
    onEvent,
    onComment: (c) => {
      if (exchange.finished) return;
      const frame = encodeSseComment(c);
      sendEncodedFrame(frame, Buffer.byteLength(frame));
    },
    onRetry: (ms) => {
      if (exchange.finished) return;
      // Clamped (sse-encode.ts clampSseRetryMs: a seller's `retry: 1` made the host reconnect
      // every millisecond), at most half the resume token lifetime (sseRetryCeilingMs: a longer
      // wait brought the host back with an expired token); what the clamped frame adds over the
      // seller's bytes is charged.
      const frame = encodeSseRetry(clampSseRetryMs(ms, exchange.sseRetryMaxMs));
      sendEncodedFrame(frame, frame.length);
    },
    onError: (err: ParseError) => {
      // The parser is then terminated (it throws on the next feed): `lines` stops feeding it.
      if (err.type === 'max-buffer-size-exceeded') parserCapBreached(Math.max(perEventLimit + SSE_PENDING_SLACK_BYTES + 1, lines.takeCompletedLine()?.bytes.length ?? 0));
      else log.debug({ agent: exchange.agent.name, err: err.message }, 'ignored malformed SSE line');
    },
    maxBufferSize: perEventLimit + SSE_PENDING_SLACK_BYTES,
  });
  // eventsource-parser drops "\u00ef\u00bb\u00bf" (a BOM's bytes read as Latin-1) from the start
  // of the first text it is fed after creation or reset. Its text here is decoded UTF-8, where
  // those are the seller's characters, and which text comes first depends on the chunking
  // (raw-forwarded and held blocks never reach it): fed an empty text first, it drops nothing.
  const startParser = (): void => parser.feed('');
  startParser();
  /**
   * A block with an id and no data (sse-id-only.ts): it dispatches no event, it only sets the
   * last event ID (WHATWG HTML §9.2.6), so nothing goes to the host for it now: its id becomes
   * the stream's pending id, which the next event without an id of its own carries (`deliver`)
   * or the stream's end writes (`writePendingId`). Before, each such block went out as its own
   * resume token: a seller's `id:N` blocks of ~9 bytes each became ~180-byte tokens, 20.4x the
   * seller's bytes on the standalone GET stream, without bound, and their HMACs slowed other
   * agents' calls (a new user's trial 9, F3:
   * test/regressions/get-stream-id-only-token-amplification.test.ts).
   * On a bounded stream the block's frame (`id: <seller id>` and a blank line, what the id
   * adds wherever it goes out) is charged against the block's bytes here, as when it was
   * written here: its bytes and counts do not depend on where the id goes out. No per-event or
   * structure bound applies; its bytes count like every other byte (`take`). Not at the
   * stream's end: the blank line SseLineFeeder.finish adds is none of the seller's, and a
   * block the response cut off sets no last event ID
   * (test/regressions/sse-truncated-block-id-token.test.ts).
   */
  const onIdOnly = (id: string): void => {
    if (streamEnded || skippingToBoundary || exchange.finished) return;
    if (!encoding.charge(encodedIdOnlyBytes(cumulative === undefined ? 0 : Buffer.byteLength(id)))) return;
    ids.pendingId = id;
  };
  /**
   * The pending id, if any, to the host as a block of its own (`id: <token>` and a blank
   * line; an empty id as `id`), before the stream ends plainly, so that the host resumes from
   * the seller's last id: one per stream at most, whatever the token budget (its frame was
   * charged with its block: `onIdOnly`). Its token carries the count through the bytes taken
   * so far.
   */
  const writePendingId = (): void => {
    if (ids.pendingId === undefined || exchange.finished) return;
    // At the seller's end, the LF a frame was matched against will not come: charged now.
    if (streamEnded) encoding.settleAtEnd();
    const out = ids.takePendingToken();
    if (out === undefined || exchange.finished) return;
    batch.frame(encodeSseIdOnly(out));
    framed(out.length);
    if (out !== '') exchange.lastEventIdSent = out;
  };
  /** The seller's stream ended (`onIdOnly`). */
  let streamEnded = false;
  const idOnly = new SseIdOnlyBlocks((text) => {
    if (!skippingToBoundary && !exchange.finished) feedWithoutStacks(parser, text);
  }, onIdOnly);
  // Complete lines go to the parser as they arrive (through `idOnly`); an incomplete line
  // waits as raw bytes, capped like the parser's own buffer (sse-boundaries.ts).
  const lines = new SseLineFeeder((text) => {
    if (!skippingToBoundary && !exchange.finished) idOnly.feed(text);
  }, perEventLimit + SSE_PENDING_SLACK_BYTES);
  /** What the re-encoding adds to a bounded stream's count (sse-encoding-charge.ts). */
  const encoding = new SseEncodingCharge(cumulative, lines, answer);
  /** The stream's event ids and their resume tokens (sse-event-ids.ts). */
  const ids = new SseEventIds(exchange, log, hooks, encoding, credit, batchAnswers);

  const onTimeout = (input: LocalErrorInput): void => {
    if (exchange.finished) return;
    // A host that is not reading cannot take a plain end either: it would wait behind the
    // bytes already written, and this stage in its drain wait, for good (the standalone GET
    // stream wrote no exchange line and held its connection until the host left). So its
    // connection is reset on every stream (errors/local-reply.ts), as on a request's.
    if (bounded || input.reason === 'host_not_reading') answer(input);
    else {
      exchange.reason = input.reason;
      endPlainly('resumable_end');
    }
  };
  const timers = new SseStreamTimers(exchange, raw, bounded, onTimeout);
  /**
   * The timers (sse-stream-timers.ts), made when the stage first waits (for the seller, a
   * drain, the agent guard), with the head's flush at the end of this turn.
   */
  const startTimers = (): void => {
    if (timers.started) return;
    host.flushHeadSoon();
    timers.start();
  };
  // Shutdown (pipeline.ts SseShutdownEnd): end plainly so the client resumes with its last
  // token; a request stream that sent no event id yet has nothing to resume from, so its
  // request is answered instead. So is every request stream when the tokens die with this
  // process (`tokensOutlive` false: the random per-process secret): a resume anywhere is
  // refused `resume_token_invalid` (HTTP 400, id null), which answers no pending call. An id
  // still pending is then not minted: a token no process verifies only sends the client into
  // that refusal (a stream answering no request, its client given no id before, reconnects
  // without one). Reported failure (a hostile new user's trial 13, M1): such streams ended
  // plainly, the MCP SDK client retried its resume 5 times against the restarted gateway and
  // the call hung until the client's own timeout
  // (test/regressions/restart-without-secret-hangs-sdk-call.test.ts).
  hooks.onSseStart((tokensOutlive) => {
    if (exchange.finished) return;
    if (!tokensOutlive) {
      exchange.shutdownResumeSecret = 'per_process';
      ids.pendingId = undefined;
    }
    writePendingId();
    if (exchange.finished) return;
    if (requestStream && (!tokensOutlive || exchange.lastEventIdSent === undefined)) answer({ reason: 'gateway_shutdown' });
    else endPlainly('resumable_end');
  });

  /**
   * Counts and parses `chunk[start, end)`; false once the stream is over (the cumulative
   * bound broke, or the exchange finished). `atBoundary`: the range ends with an event's
   * blank line (SseBoundaryScanner). The count is taken per range, so while an event's block
   * is parsed `cumulative.used` is the exact count through its end (its resume token).
   *
   * After a per-event cap breach (an endless line), the rest of that event is dropped
   * unparsed up to the next event boundary, where the parser and the line feeder (with its
   * UTF-8 decoder) are reset, so later events on the standalone GET stream still flow (before
   * this, the terminated parser threw on the next feed and ended the GET stream:
   * test/regressions/get-stream-oversized-event.test.ts). Line endings that are CR only are
   * not seen as boundaries (sse-boundaries.ts): on such a stream the rest is dropped. Skipping
   * is decoding too, with nothing sent to slow the seller: on a stream without a total the
   * skipped bytes count as undelivered (sse-undelivered.ts), so an event still going
   * `max_response_bytes` + the per-event cap past the last byte delivered ends the stream (hostile trial 32, L1:
   * `gzip, gzip` made 6,392 bytes decode to 536,870,920 while skipped; trial 37, F1: many such
   * events, each ending within that allowance, were decoded for nothing without end). A
   * bounded stream never gets here skipping (its breach answered it).
   */
  const take = (chunk: Buffer, start: number, end: number, atBoundary: boolean, blockEnd = atBoundary): boolean => {
    if (undelivered !== undefined && !skippingToBoundary) {
      // A stream without a total: a piece ends at each comment or `retry:` line's end, so that
      // its frame lowers the undelivered count by the bytes through its own line only, not by
      // those after it in the range (sse-frame-lines.ts; review of e72ea9d: whole, a block's
      // bytes after a comment line were forgiven, cut after that line they were not).
      for (const cut of frameLineEnds(chunk, start, end, lines.heldHead(FRAME_LINE_HEAD_BYTES))) {
        if (cut === end) break;
        if (!takeCounted(chunk, start, cut, false, false)) return false;
        start = cut;
      }
      // A range ending with CR LF (an event's blank line, dispatched at its CR): the LF is
      // counted after the frame, as when the seller's bytes are cut between them (and as a
      // comment's: frameLineEnds). Before, whole, the event's frame forgave it with the block
      // (test/regressions/get-stream-crlf-blank-line-lf-undelivered-chunks.test.ts).
      if (end - start > 1 && chunk[end - 1] === LF && chunk[end - 2] === CR) {
        if (!takeCounted(chunk, start, end - 1, false, false)) return false;
        start = end - 1;
      }
    }
    return takeCounted(chunk, start, end, atBoundary, blockEnd);
  };
  /** `take` for a range that holds no comment or `retry:` line's end before its own end, on a stream without a total. */
  const takeCounted = (chunk: Buffer, start: number, end: number, atBoundary: boolean, blockEnd: boolean): boolean => {
    // A range that would take the undelivered count past its limit: taken up to the limit point (sse-undelivered.ts).
    if (undelivered !== undefined && end - start > undelivered.room) {
      return undelivered.takeUpToLimit(start, end, (from, to, last) => takeCounted(chunk, from, to, last && atBoundary, last && blockEnd), endUndelivered);
    }
    earn(end - start);
    if (cumulative) {
      // Counted with the LF a frame was matched against, or that ended the last block (sse-encoding-charge.ts).
      const fit = encoding.takeRange(chunk, start, end);
      if (fit < end - start) {
        // Events complete before the limit point are still delivered; nothing past it is parsed.
        if (fit > 0 && !skippingToBoundary && !lines.push(chunk, start, start + fit)) lineCapBreached();
        answer({ reason: 'sse_cumulative', limitBytes: cumulative.limit, observedBytes: cumulative.used });
        return false;
      }
    }
    if (!skippingToBoundary && !lines.push(chunk, start, end)) lineCapBreached();
    // The range's blocks are all written: the next block's growth is its own (sse-encoding-charge.ts).
    if (blockEnd) encoding.blocksEnded(chunk, end);
    // Skipping (from before, or from a breach while completing the held line in this range):
    // the dropped event ends at this boundary.
    if (skippingToBoundary && atBoundary) {
      parser.reset();
      startParser();
      lines.reset();
      idOnly.reset();
      skippingToBoundary = false;
    }
    return !exchange.finished;
  };
  /** The reason a stream without a total ends with at its undelivered limit (errors/codes.ts END_REASONS). */
  const UNDELIVERED: EndReason = 'sse_undelivered';
  /**
   * Ends a stream without a total at its undelivered limit (sse-undelivered.ts): plainly, so
   * that the host resumes (its pending id goes out first), reason `sse_undelivered`.
   */
  const endUndelivered = (): void => {
    exchange.reason = UNDELIVERED;
    endPlainly('resumable_end');
  };
  /** An event block spanning chunks, held as bytes while it is in the form MCP servers write (sse-held-block.ts). */
  const held = new SseHeldBlock(lines.maxLineBytes);
  const boundaries = new SseBoundaryScanner();
  const idFields = new SseIdFieldWatch();
  /** The bytes so far are whole event blocks: the parser and the line feeder hold nothing. */
  let atEventStart = true;
  // A block that may hold an `id` member (an `"id` in any ASCII case: a request's or a batch's
  // response) is read too (sse-raw-events.ts `answerable`), one that may hold a response's
  // key, in any case (`responseKeys`), and one whose data is not proved to name a method
  // (`methodNamed`: an id-only message, or no message at all, which a host reads as a
  // response or cannot read: mayLackMethod), where responses are judged: the standalone GET
  // stream and a POSTed notification's or response's stream (none may pass:
  // answersNoRequest; the `"id` hint there since the hostile trials' id-only messages:
  // test/regressions/id-only-message-on-request-stream-passes.test.ts; the method proof since a
  // review's kindless ones: test/regressions/seller-message-without-kind-forwarded.test.ts), a
  // request's or a batch's (one without an `id` is refused, and the `"id` hint does not see it).
  const judged = answerable || awaitsBatch || answersNoRequest;
  const rawLimits = {
    maxEventBytes: perEventLimit,
    maxDepth: limits.max_json_depth,
    maxNodes: limits.max_json_nodes,
    answerable: judged,
    responseKeys: judged,
    methodNamed: judged,
  };

  /**
   * Parses one input chunk; false once the stream is over.
   *
   * A chunk with a complete event block and no CR (and not crossing the cumulative bound,
   * not skipping) is planned (sse-raw-events.ts): runs of blocks the gateway neither reads
   * nor changes go to the host as the seller's bytes, unparsed; the other blocks are parsed,
   * those that may carry an id one block at a time (the resume token's exact count).
   *
   * Otherwise event blocks are taken one at a time where an event may carry an id, while
   * skipping to a boundary, where the cumulative bound breaks, and on a stream without a total
   * (its undelivered count: sse-undelivered.ts); else the chunk is taken in
   * one piece, after the block that completes a held line (the only place where a cap
   * breach can happen before the chunk's last boundary: test/unit/sse-stage-batching).
   */
  const takeChunk = (chunk: Buffer): boolean => {
    const n = chunk.length;
    // The chunk that crossed the cumulative bound is also taken block by block: the error
    // reports the count through the block that crossed (sse-split-across-events.test.ts).
    const crossing = cumulative !== undefined && cumulative.used + n > cumulative.limit;
    // Held bytes are counted, not parsed: a chunk that may take a stream's total or its
    // undelivered count (sse-undelivered.ts) past the limit goes to `take`, which parses up
    // to the limit point and ends the stream there.
    const holdable = !crossing && (undelivered === undefined || n <= undelivered.room);
    if (held.bytes > 0) {
      const end = holdable ? held.extend(chunk) : NOT_HELD;
      if (end === HELD) {
        passHeld(chunk);
        return true;
      }
      const ev = end === NOT_HELD ? undefined : held.complete(chunk, end);
      if (ev === undefined) {
        // Not in the held form after all: the feeder takes the held bytes as if they came now
        // (they are within its cap: the held block's bound is the same).
        releaseHeld();
      } else {
        // The rest starts at an event start (blank lines there: see leadingLfs).
        passHeld(end === n ? chunk : chunk.subarray(0, end));
        atEventStart = true;
        lines.passedRaw();
        deliver(ev.event, undefined, undefined, ev.data);
        encoding.clearRoom();
        // The host's stream is over (the answer, or an error): nothing reads the data after it.
        if (exchange.finished) bodyPool.recycleAfterSend(raw, ev.data);
        return !exchange.finished && (end === n || takeChunk(chunk.subarray(end)));
      }
    }
    lines.nextChunk();
    const last = boundaries.lastEnd(chunk);
    // The event that starts after the chunk's last boundary and goes on past it, in the form
    // held as bytes (sse-held-block.ts): the chunk up to that start is taken alone.
    const tail = last !== -1 ? last : atEventStart ? 0 : -1;
    const valueAt = tail !== -1 && tail < n && !skippingToBoundary && holdable ? held.valueOffset(chunk, tail) : -1;
    if (valueAt !== -1) {
      if (tail > 0 && !takeChunk(chunk.subarray(0, tail))) return false;
      const rest = tail === 0 ? chunk : chunk.subarray(tail);
      // The resume tokens of the blocks before it may have taken the room (chargeToken): the
      // rest then crosses the bound (`take` answers; it completes no event).
      if (cumulative !== undefined && cumulative.used + rest.length > cumulative.limit) return take(rest, 0, rest.length, false);
      held.begin(rest, valueAt);
      passHeld(rest);
      atEventStart = false;
      return true;
    }
    const fromEventStart = atEventStart;
    atEventStart = last === n;
    if (last !== -1 && !skippingToBoundary && !crossing && chunk.indexOf(CR) === -1) {
      // Blank lines at an event start dispatch nothing; the planner, which stops at a lone LF
      // at a chunk's start, begins after them (else an id event after them was parsed with the
      // rest of the chunk, its token counted through the chunk's end: review of 6e630d2).
      const from = fromEventStart ? leadingLfs(chunk) : boundaries.firstEnd(chunk);
      boundaries.advance(chunk);
      idFields.pass(chunk, last);
      return takePlanned(chunk, from, last);
    }
    const withIds = idFields.check(chunk, last);
    // A chunk with a CR is taken block by block, blank lines ended by a CR alone included (the
    // boundary scanner leaves them out): on a request's stream so that each block's growth is
    // counted against its own bytes (`encoding.charge`), on a stream without a total so that a
    // frame clears only its own block from the undelivered count (sse-undelivered.ts; a
    // CR-only stream's chunk was one piece: a comment at its start cleared it all). `ends`
    // stay the boundaries `take` resets a skipped event at. A stream without a total takes
    // every chunk block by block, for that count.
    const blocks = chunk.indexOf(CR) !== -1 ? blankLineEnds(chunk, ...boundaries.lastBytes) : undefined;
    const ends =
      blocks !== undefined || withIds || skippingToBoundary || crossing || undelivered !== undefined
        ? boundaries.endsIn(chunk)
        : lines.pendingBytes > 0 && last !== -1
          ? [boundaries.firstEnd(chunk)]
          : [];
    boundaries.advance(chunk);
    if (blocks !== undefined) return takeBlocks(chunk, blocks, ends);
    let start = 0;
    for (const end of ends) {
      if (!take(chunk, start, end, true)) return false;
      start = end;
    }
    return takeRest(chunk, start, last);
  };

  /**
   * Counts bytes that went to the held block (they never cross the cumulative bound or the
   * undelivered limit: a chunk that would, or whose held tail would once the resume tokens
   * before it are counted, is given to the feeder instead) and moves the scanners past them.
   */
  const passHeld = (bytes: Buffer): void => {
    cumulative?.take(bytes.length);
    earn(bytes.length);
    encoding.addRoom(bytes.length);
    boundaries.advance(bytes);
    idFields.passWithoutId(bytes);
  };
  /** The held bytes to the line feeder, in order, as if they had just arrived. */
  const releaseHeld = (): void => {
    for (const piece of held.release()) lines.push(piece, 0, piece.length);
  };

  /**
   * `takeChunk` for a chunk without CR whose first event start is `from` (0, or the end of
   * the block that completes what earlier chunks began) and last boundary `last`.
   *
   * Each segment of blocks for the parser (one block, or a run of canonical blocks holding
   * invalid UTF-8: sse-raw-events.ts) is taken alone, on every stream. On a request's stream
   * so that what its encoding adds is counted against its own bytes (`encoding.charge`: a
   * block's slack, such as a comment-only block's dropped blank line, does not pay for the
   * next one's growth, so the counts do not depend on where the seller's chunks are cut) and a
   * resume token counts exactly through its event's end. On a stream without a total so that
   * an event's frame clears its own block from the undelivered count, not the blocks after it
   * (sse-undelivered.ts; before, the standalone GET stream took them together up to the next
   * raw run or id line, as it counted nothing); there a run holding invalid UTF-8 is taken one
   * block at a time too (`takeRunBlocks`; before, whole, the frame of an event in the run
   * forgave the run's blocks after it, an event dropped there included, cut in the run it did
   * not: test/regressions/get-stream-invalid-utf8-run-undelivered-chunks.test.ts).
   */
  const takePlanned = (chunk: Buffer, from: number, last: number): boolean => {
    if (from > 0 && !take(chunk, 0, from, true)) return false;
    // Blocks that may hold a response's key are parsed (rawLimits.responseKeys).
    const plan = planRawEventsFast(chunk, from, rawLimits);
    let segmentStart = from;
    let simple: SimpleBlockKind;
    /** The next run sent to the parser for its invalid UTF-8 (an index into `plan.invalidUtf8Runs`). */
    let invalidRun = 0;
    for (let k = 0; k < plan.ends.length; k++) {
      const end = plan.ends[k]!;
      if (plan.raw[k]) {
        // The run's first event carries the stream's pending id (`deliver`): it is parsed.
        if (ids.pendingId !== undefined) {
          const first = chunk.indexOf(LF_LF, segmentStart) + 2;
          if (!take(chunk, segmentStart, first, true)) return false;
          segmentStart = first;
          if (first === end) continue;
        }
        const bytes = end - segmentStart;
        // The chunk's seller bytes fit, but the resume tokens of blocks before this run may
        // have taken the room (chargeToken), or the run may take the undelivered count past
        // its limit before its first event's end (sse-undelivered.ts): then the run is parsed
        // up to the limit point (`take`), as any range that crosses the bound: the request
        // answered, or the stream ended unless an event before that point went out.
        if ((cumulative !== undefined && cumulative.used + bytes > cumulative.limit) || (undelivered !== undefined && bytes > undelivered.room)) {
          if (!take(chunk, segmentStart, end, true)) return false;
        } else {
          cumulative?.take(bytes);
          earn(bytes);
          batch.raw(chunk, segmentStart, end);
          framed(bytes);
          lines.passedRaw();
        }
      } else if (plan.invalidUtf8Runs?.[invalidRun] === k) {
        invalidRun++;
        if (!(undelivered === undefined ? take(chunk, segmentStart, end, true) : takeRunBlocks(chunk, segmentStart, end))) return false;
      } else if ((simple = simpleBlock(chunk, segmentStart, end)) !== NOT_SIMPLE && takeSimpleReady(end - segmentStart)) {
        // An id-only or comment-only block of one ASCII line (sse-simple-block.ts), read here
        // (`takeSimple`), on every stream (the standalone GET stream took comments with the
        // parsed blocks around them, before it took them one at a time).
        if (!takeSimple(chunk, segmentStart, end, simple)) return false;
      } else if (!take(chunk, segmentStart, end, true)) return false;
      segmentStart = end;
    }
    return takeRest(chunk, segmentStart, last);
  };

  /**
   * `take` for the run of canonical blocks `chunk[start, end)` that the plan sent to the parser
   * for its invalid UTF-8 (sse-raw-events.ts RawEventPlan.invalidUtf8Runs), on a stream without
   * a total: one block at a time, each ending at its blank line (LF LF: a canonical block has
   * no other), so that each event's frame lowers the undelivered count by the bytes through
   * its own block only, as when the run arrives cut (takePlanned). Cost: one native search per
   * block of such a run; nothing for any other segment.
   */
  const takeRunBlocks = (chunk: Buffer, start: number, end: number): boolean => {
    while (start < end) {
      const blank = chunk.indexOf(LF_LF, start);
      const blockEnd = blank === -1 || blank + 2 > end ? end : blank + 2;
      if (!take(chunk, start, blockEnd, true)) return false;
      start = blockEnd;
    }
    return true;
  };

  /**
   * Whether {@link takeSimple} may take a planned block of `bytes` now: the parser, the line
   * feeder and the id-only watch hold nothing of an open block (true at every planned block's
   * start, as the raw path assumes; checked all the same), and the block does not cross the
   * cumulative bound or the undelivered limit (a crossing range is `take`'s: its count and its
   * answer, or its end: sse-undelivered.ts).
   */
  const takeSimpleReady = (bytes: number): boolean =>
    !skippingToBoundary &&
    !exchange.finished &&
    lines.atBlockStart &&
    idOnly.atBlockStart &&
    (cumulative === undefined ? bytes <= undelivered!.room : encoding.fitsSimpleBlock(bytes));

  /**
   * `take` for a planned block `chunk[start, end)` of {@link simpleBlock}'s `kind` (an id-only
   * or comment-only block of one ASCII line, LF line endings) when {@link takeSimpleReady}:
   * the same counts, frames and state, from its bytes, without decoding them or feeding the
   * parser (sse-simple-block.ts; issue 5, a hostile trial's floods of such blocks). What `take`
   * does with such a block, step by step: the credit and the count (its first byte is no LF:
   * nothing paid, a pending `lfDebt` charged), the feeder's state after its text
   * (SseLineFeeder.passedBlock), then what the parser's pass would call: `onIdOnly` with the id
   * (sse-id-only.ts idValue), or `onComment`'s frame with the comment's text; then the block's
   * end (`room` 0; it ends with LF).
   */
  const takeSimple = (chunk: Buffer, start: number, end: number, kind: SimpleBlockKind): boolean => {
    const bytes = end - start;
    // A comment's frame lowers the undelivered count through its line; the blank line counts after it (as `take`'s pieces).
    const afterFrame = kind === ID_ONLY || undelivered === undefined ? 0 : 1;
    earn(bytes - afterFrame);
    if (cumulative !== undefined) encoding.takeSimpleBlock(bytes);
    lines.passedBlock(start);
    const value = simpleValueStart(chunk, start, end, kind);
    if (kind === ID_ONLY) onIdOnly(chunk.toString('latin1', value, end - 2));
    else if (!exchange.finished) {
      // encodeSseComment of the text: the seller's line and its LF when written so (`: text`, or `:` alone).
      const canonical = value === end - 2 ? value === start + 1 : value === start + 2;
      const frame = canonical ? chunk.toString('latin1', start, end - 1) : encodeSseComment(chunk.toString('latin1', value, end - 2));
      sendEncodedFrame(frame, frame.length);
    }
    earn(afterFrame);
    encoding.clearRoom();
    return !exchange.finished;
  };

  /**
   * Takes `chunk` in pieces ending at each of `blocks` (blankLineEnds, ascending), then its
   * rest; a piece ending at one of `ends` (SseBoundaryScanner.endsIn, ascending) is taken as
   * at a boundary.
   */
  const takeBlocks = (chunk: Buffer, blocks: number[], ends: number[]): boolean => {
    let start = 0;
    let k = 0;
    for (const end of blocks) {
      while (k < ends.length && ends[k]! < end) {
        if (!take(chunk, start, ends[k]!, true)) return false;
        start = ends[k++]!;
      }
      const atBoundary = k < ends.length && ends[k] === end;
      if (atBoundary) k++;
      if (!take(chunk, start, end, atBoundary, true)) return false;
      start = end;
    }
    for (; k < ends.length; k++) {
      if (!take(chunk, start, ends[k]!, true)) return false;
      start = ends[k]!;
    }
    return start < chunk.length ? take(chunk, start, chunk.length, false) : true;
  };

  /**
   * Takes `chunk[start, n)`, where `last` is the chunk's last event boundary (-1: none): the
   * complete blocks, then the block that goes on in the next chunk on its own, so that its
   * bytes are its own room (`encoding.charge`) and not those of the blocks before it.
   */
  const takeRest = (chunk: Buffer, start: number, last: number): boolean => {
    const n = chunk.length;
    if (start >= n) return true;
    if (last > start && last < n && !take(chunk, start, last, true)) return false;
    return last > start && last < n ? take(chunk, last, n, false) : take(chunk, start, n, last === n);
  };

  const source = res.body;
  // The agent's buffered-bytes cap counts what this stream holds of its open event (agent-guard.ts; module doc, memory).
  const lease = openBufferLease(exchange);
  // An uncoded body is read with the stream's own read() (body-source.ts DirectChunks: no
  // async iterator); a coded one through its decoders (decode.ts).
  const direct = source.direct ? new DirectChunks(source) : undefined;
  // A br body's decoder is charged to the same lease, from before its first byte (decode.ts
  // DecoderRoom). Only a bounded stream's: `br` is offered to no other (exchange.ts
  // offeredCodings), and its deadline bounds the wait for room (the stream ends, its lease is
  // released), where the standalone GET stream has no deadline (the review of 9e985ac: one
  // waiting for room for its decoder after its head went out waited for good,
  // test/regressions/decoder-wait-has-no-deadline.test.ts). Waiting for that room is the
  // gateway's wait, not the seller's silence: no idle timeout meanwhile, as for the lease's
  // waits below.
  const decoderRoom: DecoderRoom | undefined =
    lease === undefined || direct !== undefined || !bounded
      ? undefined
      : {
          chargeDecoders: async (n, waitingBytes, stream) => {
            if (!lease.mustWaitForDecoders(n)) return lease.chargeDecoders(n, waitingBytes, stream);
            timers.pauseIdle();
            const outcome = await lease.chargeDecoders(n, waitingBytes, stream);
            timers.armIdle();
            return outcome;
          },
          unchargeDecoders: (n) => lease.unchargeDecoders(n),
          get shedRetryAfterS() {
            return lease.shedRetryAfterS;
          },
        };
  const decodedChunks = direct === undefined ? source.chunksWithin(decoderRoom) : undefined;
  if (decodedChunks !== undefined) startTimers(); // its first chunk is awaited
  try {
    while (true) {
      let chunk: Buffer | null | undefined;
      if (direct !== undefined) {
        while ((chunk = direct.read()) === null) {
          // The first wait is the rest of this turn (DirectChunks.waited): no timer could fire.
          if (direct.waited) startTimers();
          await direct.wait();
        }
      } else {
        const next = await decodedChunks!.next();
        chunk = next.done === true ? undefined : next.value;
      }
      if (chunk === undefined || exchange.finished) break;
      timers.armIdle();
      const open = takeChunk(chunk);
      host.flush();
      if (!open || exchange.finished) break;
      if (host.needDrain) {
        host.needDrain = false;
        startTimers();
        // The host, not the seller, holds the stream back: its idle time starts now (onIdleTimer).
        timers.waitingForHost = true;
        timers.armIdle();
        await drainOrClose(raw);
        timers.waitingForHost = false;
        timers.armIdle();
      }
      if (lease !== undefined) {
        // While skipping an event over its cap, the parser holds none of it (it dropped its
        // data, or was reset at the line's breach: `lineCapBreached`).
        lease.set(lines.pendingBytes + held.bytes + (skippingToBoundary ? 0 : lines.openDataBytes));
        if (lease.mustWait) {
          // The gateway, not the seller, is the one not reading: no idle timeout meanwhile.
          startTimers();
          timers.pauseIdle();
          await lease.ready(source.stream);
          // Shed while it waited (agent-guard.ts, load shedding): the events so far went out.
          if (lease.shedRetryAfterS !== undefined) {
            answer({ reason: 'agent_backoff_shed', retryAfterS: lease.shedRetryAfterS });
            break;
          }
          timers.armIdle();
        }
      }
    }
    if (!exchange.finished && !skippingToBoundary) {
      // An incomplete last line goes to the parser, then a line break (SseLineFeeder.finish).
      releaseHeld();
      streamEnded = true;
      lines.finish();
      host.flush();
    }
    if (!exchange.finished) onUpstreamEnd();
  } catch (err) {
    const local = bodyErrorToLocal(exchange, err, limits.max_response_bytes, cumulative?.used ?? source.decoded.used);
    // A body its Content-Encoding cannot undo ends the stream as a breach does (the events
    // before it went out): the error on a bounded stream; a plain end on the standalone GET
    // stream or a long-lived one, as sse_idle ends them (no id to answer, nothing to drop:
    // the rest is unreadable). Trial 8, F9: it was upstream_reset, or a plain end, outcome ok.
    if (local?.reason === 'upstream_encoding_invalid' && !bounded) {
      exchange.reason = local.reason;
      endPlainly('resumable_end');
    } else if (local && local.reason !== 'upstream_reset') fail(local);
    if (!exchange.finished) onUpstreamEnd();
  } finally {
    // The drops and untokenized ids not yet logged get their summaries as the stream ends (before any await).
    dropLog?.end();
    ids.end();
    // Closes the decoders' generator as `for await` would (a no-op once it is done).
    if (decodedChunks !== undefined) await decodedChunks.return(undefined);
    host.headSent();
    lease?.release();
    hooks.onSseEnd();
    timers.clear();
    // An upstream request that ended whole is left to end; one still open is aborted (decode.ts).
    releaseBody(source.stream);
  }

  function onUpstreamEnd(): void {
    // Before the ending is chosen: a request's stream with an id is resumable.
    writePendingId();
    if (exchange.finished) return;
    // A batch without requests waits for nothing: its stream ends as a notification's.
    if (!requestStream || batchAnswers?.done === true) return endPlainly('ok');
    if (exchange.lastEventIdSent !== undefined) return endPlainly('resumable_end');
    answer({
      reason: 'upstream_reset',
      limitBytes: limits.max_response_bytes,
      observedBytes: cumulative?.used ?? source.raw.used,
    });
  }
}

/** The number of LF bytes at the start of `chunk`. */
function leadingLfs(chunk: Buffer): number {
  let k = 0;
  while (k < chunk.length && chunk[k] === LF) k++;
  return k;
}
