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
 *   (`: keepalive`), in a planned chunk, is read from its bytes (sse-chunk-taker.ts
 *   `takeSimple`, sse-simple-block.ts), not decoded and parsed: the same counts and frames at
 *   ~half the cost (bench/sse-loop.ts; a hostile trial's floods of them).
 * - A chunk without CR is planned block by block (raw or parsed); otherwise it is parsed in
 *   one piece unless an event in it may carry an id (its resume token needs the exact count
 *   through its end), it crosses the cumulative bound, or the stream has no total (its
 *   undelivered count: below); then one event block at a time. How each chunk is cut into
 *   ranges and counted is sse-chunk-taker.ts's (SseChunkTaker, its module doc).
 *
 * Event ids (ARCHITECTURE §4; sse-event-ids.ts): an event's non-empty id goes out as a resume
 * token carrying the count through the event; an id-only block's id is the stream's pending
 * id, which the next event without an id of its own carries, or the stream's plain end writes
 * alone (`writePendingId`). A raw run that the pending id would go with has its first event
 * parsed (sse-chunk-taker.ts `takePlanned`), an event held as bytes gets it when dispatched.
 * Tokens are minted within the stream's token budget (sse-token-credit.ts), and a bounded stream notes its
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
 *   bytes and cost nothing more), and 1,024 bytes for each line the parser ignores with an
 *   error, an unknown field or an invalid `retry:` (`chargeWork`, sse-ignored-lines.ts:
 *   hostile trial 52, F2, such lines cost ~300 ns per byte), and 1,024 bytes for each event
 *   dispatched and dropped but a connection's first `{}` (`refused`: trial 52's leftover, ~1-2
 *   µs each); on streams without a total these charges go to the undelivered count below. So the host never receives more than the bound however the
 *   seller's events are shaped. A block's growth is counted against its own bytes (on a
 *   bounded stream the parsed blocks are taken one at a time: a block's slack does not pay
 *   for the next one's growth) and before its token is minted (the token's count includes
 *   it). Events completed before the limit point are delivered; the bytes past it are never
 *   parsed, nor a CR at it whose LF is past it (a CR ending the bytes at the limit waits for
 *   the next byte: sse-chunk-taker.ts `heldCr`, `releaseCrAtLimit`); an event whose encoding
 *   or token takes the stream over is not delivered. Bounded:
 *   every stream answering a POST, a request's, a batch's, and a POSTed notification's or
 *   JSON-RPC response's (exchange.ts hasCumulativeBound; these had no total: 271 MB reached the host
 *   with the limit at 1 MB, test/regressions/sse-notification-answer-unbounded.test.ts). The
 *   standalone GET stream and long-lived streams have no cumulative bound (keep-alives there
 *   are normal). A rewrite of the response event counts too: a lift whose
 *   added bytes (its data's, and 6 for each `data:` line it would add) would take the count
 *   (this event's token included) over the bound, or whose
 *   data would be over `max_sse_event_bytes`, is not made; the seller's data goes out, and
 *   the exchange's `text_not_lifted` names the bound (rewrite-room.ts eventRewriteOverBound,
 *   recordLiftSkippedForRoom).
 * - undelivered (a stream without a cumulative bound): its decoded bytes taken for nothing,
 *   each frame queued for the host lowering the count by 64 x what it carries (an event's
 *   frame but its id line: `framedEvent`; a raw run, a pending id's token: `framed`; a comment
 *   or a `retry:` at its line's end: `sendEncodedFrame`, sse-frame-lines.ts), against `max_response_bytes` plus the per-event cap below (so that an
 *   event the cap accepts goes out after up to `max_response_bytes` of bytes delivered as
 *   nothing); the next byte past it ends the stream
 *   plainly, `sse_undelivered` (sse-undelivered.ts; sse-chunk-taker.ts `take`;
 *   `endUndelivered`). Dropped events, skipped bytes, unknown-field lines and id-only blocks decoded for nothing had no
 *   bound but one over-cap event's skip (hostile trial 37, F1). Such a stream takes its parsed
 *   blocks one at a time, so that a frame clears its own block, and holds (sse-held-block.ts),
 *   forwards raw or reads as a simple block only what fits under that limit.
 * - wire (routing/wire-meter.ts, on the connection, before undici parses the bytes): on a
 *   bounded stream its wire bytes per response (head, chunk framing and extensions) within
 *   6 x `max_response_bytes` + 64 KiB, past it `raw_bytes` (observed_bytes the wire bytes); on
 *   a stream without a total its framing within 128 KiB + 5 x the body bytes delivered, past it a
 *   plain end, `sse_wire_overhead` (review 37, F1).
 * - per event: an event's data bytes against `max_sse_event_bytes` -> `sse_event`. An
 *   incomplete line waits as the raw bytes it arrived in (SseLineFeeder: no decoded copy, no
 *   concatenation), capped at that bound + SSE_PENDING_SLACK_BYTES, and so is the parser's
 *   own buffer (the data lines of the event so far): one endless `data:` line (the 100 MiB
 *   attack) costs its bytes up to the cap, then `sse_event` (or `sse_cumulative` first, when
 *   the response limit is the lower), without waiting for the line to end; its
 *   `observed_bytes` is the line's bytes read by then (SseChunkTaker.capBreached). What the
 *   parser holds for the event's complete `data` lines and its last `event` and `id` values,
 *   counted as memory (their texts' bytes and the parser's strings per `data` line:
 *   sse-open-event.ts), is bounded at four times that cap -> `sse_event_memory`
 *   (SseLineFeeder.maxOpenBytes; hostile trial 52, F1: 4.1M empty `data:` lines, 25 MB, held
 *   ~130 MB of ConsStrings, counted 4.1 MB; a re-read of that fix, A: `event:` and `id:`
 *   values of up to that cap each were counted nowhere).
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
 *   nowhere): the incomplete line, the block held as bytes, and the memory the parser holds
 *   for the complete `data` lines it has joined and the event's last `event` and `id` values
 *   (SseLineFeeder.openDataBytes, sse-open-event.ts: their texts' bytes and 104 bytes per
 *   `data` line, 64 for a one-byte ASCII value, 32 for an empty one; hostile trial 52, F1, and
 *   a re-read of its fix, A; a hostile new user's trial 10, F3: an endless event of
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
 * `events_dropped`) and in `adcp_gateway_sse_events_dropped_total` (every drop, added once
 * per chunk taken: sse-drop-metric.ts), and
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
import { ByteBudget } from './byte-budget.js';
import { SseLineFeeder } from './sse-boundaries.js';
import { dataBytesOf } from './sse-event-data-bytes.js';
import { clampSseRetryMs, encodeSseComment, encodeSseIdOnly, encodeSseRetry, type SseFrameBatch } from './sse-encode.js';
import { dataLineCount, encodedEventBytes, encodedIdOnlyBytes } from './sse-encoded-size.js';
import { SseIdOnlyBlocks } from './sse-id-only.js';
import { TokenCredit } from './sse-token-credit.js';
import { UndeliveredBytes } from './sse-undelivered.js';
import { SSE_DROPPED_EVENT_CHARGE_BYTES, SSE_IGNORED_LINE_CHARGE_BYTES, isIgnoredLineError } from './sse-ignored-lines.js';
import type { UpstreamResponse } from './json-stage.js';
import { hostStatusOf } from './accepted-answer.js';
import { DirectChunks, bodyErrorToLocal } from './body-source.js';
import { WireOverheadError } from '../routing/wire-meter.js';
import { drainOrClose } from './drain.js';
import { releaseBody, type DecoderRoom } from './decode.js';
import { bodyPool } from './body-pool.js';
import { eventRewriteAddedBytes, eventRewriteOverBound, recordLiftSkippedForRoom } from './rewrite-room.js';
import { BatchAnswers } from './batch-answers.js';
import { SseDropLog } from './sse-drop-log.js';
import { isEmptyObjectData } from './kindless-event.js';
import { SseDropMetric } from './sse-drop-metric.js';
import { SseEventIds, pendingIdFor } from './sse-event-ids.js';
import { SseEncodingCharge } from './sse-encoding-charge.js';
import { EVENT_REFUSED, SseEventJudge } from './sse-event-judge.js';
import { SseStreamTimers } from './sse-stream-timers.js';
import { CANCELLED_METHOD, sellerCancelledIdOf, serverRequestIdOf } from './server-request-id.js';
import { canonicalRequestId } from './json-value-at.js';
import type { ScannedMembers } from './sse-message.js';
import { sessionKeyOf, type StreamHostWaits } from '../routing/host-answer-waits.js';
import { agentKeyOf } from '../config/agent-url-key.js';
import { SseHostWriter } from './sse-host-writer.js';
import { SseChunkTaker } from './sse-chunk-taker.js';
import { shutdownRetryFrame } from './shutdown-retry.js';
import type { PipelineHooks } from './pipeline.js';

/** Slack over `max_sse_event_bytes` for the parser's pending line buffer (field names, line breaks). */
export const SSE_PENDING_SLACK_BYTES = 64 * 1024;

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
   * `sse_undelivered` (sse-chunk-taker.ts `take`, `endUndelivered`).
   */
  const undelivered = bounded ? undefined : new UndeliveredBytes(limits.max_response_bytes, perEventLimit + SSE_PENDING_SLACK_BYTES);
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
   * (sse-chunk-taker.ts `takePlanned`), so an event forgives the same whether it goes out raw
   * (whole in a chunk), held (sse-held-block.ts) or parsed (cut). Before, a parsed or held event was credited its
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
  // together when it is done (`host.flush`), before the next chunk is awaited. The seller's
  // status, but 200 for a 202 answering a request (accepted-answer.ts hostStatusOf: hostile trial 57, F1),
  // whose head waits for the body's first byte, at most ACCEPTED_HEAD_WAIT_MS (sse-host-writer.ts,
  // Deferred head): a body that ends with none is an empty 202 (`onUpstreamEnd`; hostile trial
  // 59, F1, and the review of its fix).
  const accepted = res.accepted;
  const host = new SseHostWriter(
    reply,
    hostStatusOf(res),
    exchange,
    accepted === undefined
      ? undefined
      : () => {
          accepted.headWritten();
          exchange.sseStarted = true;
        },
  );
  if (accepted === undefined) exchange.sseStarted = true;
  const batch = host.batch;
  // A discovery request's answer is measured on what the host receives through the response,
  // the events before it included, as `probe` measures it (`responseSize`).
  if (hooks.wantsResponseMessage) batch.countAnswer();
  const answer = (input: LocalErrorInput, asEmpty = false): void => {
    // A deferred head (a 202's: sse-host-writer.ts) goes out now, but for the answer to a body
    // that ended with no byte (`asEmpty`: onUpstreamEnd).
    if (!asEmpty) host.startStream();
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
   * `adcp_gateway_sse_events_dropped_total{agent,reason}`, every drop, added per chunk
   * (sse-drop-metric.ts: one increment per drop cost ~1 µs; hostile trial 52, F2). `quiet`: an SDK's
   * priming event (data `{}`), whose lines are debug (sse-drop-log.ts). The stream goes on. No
   * line per drop: a seller's flood of tiny responses filled the log buffer and lost lines,
   * the stream's exchange line among them (a new user's trial 9, F5).
   */
  const drop = (reason: DropReason, observedBytes: number | undefined, quiet?: boolean): void => {
    (dropLog ??= new SseDropLog(exchange, log)).drop(reason, observedBytes, quiet);
    exchange.reason = reason;
    dropMetric.drop(reason);
  };
  /** The stream's drops on their way to the metric, added after each chunk and at the end (sse-drop-metric.ts). */
  const dropMetric = new SseDropMetric((reason, n) => hooks.onSseEventDropped(reason, n));
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

  /** No event with data `{}` was dropped on this connection yet: the first is not charged (`refused`). */
  let primingFree = true;
  /**
   * An event dispatched to {@link deliver} (parsed, or held as bytes) that does not go out, its
   * data `content`: refused by the per-event bound or the judge (sse-event-judge.ts). Unless
   * that finished the exchange (a bounded stream's breach is answered), the event was dropped
   * (`get_stream_response`, `notification_stream_response`, `message_without_kind`; on a stream
   * without a total a breach too: `sse_event`, `json_depth`, `json_nodes`, `upstream_not_mcp`)
   * and counts SSE_DROPPED_EVENT_CHARGE_BYTES more (sse-ignored-lines.ts; `chargeWork`), once
   * per event, at its dispatch: after its block's bytes were counted and before anything after
   * it, however the seller's bytes were cut. Not the connection's first dropped event whose
   * data is an empty object (`{}`, JSON whitespace allowed: kindless-event.ts): an MCP SDK
   * server's priming event, replayed on a resume. Reported failure (hostile trial 52, its
   * leftover): such events cost ~1-2 µs each and counted only their own bytes
   * (test/regressions/sse-dropped-events-cost-uncharged.test.ts).
   */
  const refused = (content: string | Buffer): void => {
    if (exchange.finished) return;
    if (primingFree && isEmptyObjectData(content)) primingFree = false;
    else chargeWork(SSE_DROPPED_EVENT_CHARGE_BYTES);
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
      return refused(data ?? bytes!);
    }
    /** The data as UTF-8 bytes to send instead of `data`, when the checks produced them. */
    let out: Buffer | undefined;
    // Judged (sse-event-judge.ts): refused, it was reported (`fail`, `drop`) and nothing of it goes out.
    const verdict = judge.judge(event, data, bytes);
    if (verdict === EVENT_REFUSED) return refused(data ?? bytes!);
    // A batch's stream: the responses it holds; the one completing the batch makes the event final.
    const completesBatch = batchAnswers !== undefined && judge.judgeBatch(event, data, bytes, dataBytes, verdict);
    if (completesBatch === EVENT_REFUSED) return refused(data ?? bytes!);
    let final = completesBatch;
    const content = data ?? bytes!;
    // A non-empty seller id goes out as a resume token carrying the exact count through this
    // event (a chunk that may hold an id line is fed one event block at a time: see
    // SseChunkTaker.takeChunk; the LF of a CR LF cut from its CR: `tokenCount`); an empty `id:`
    // passes unchanged. In the range that crosses the cumulative bound only the bytes up to the
    // limit are parsed (sse-chunk-taker.ts `take`), so an event dispatched there ends within it:
    // its count is at most the limit (counting through the limit point only over-counts; a
    // token cannot carry more than its limit). Reported failure: such an event with CR-only
    // line endings lost its id (test/regressions/sse-new-user-findings.test.ts). The token is minted once the event
    // passed its own bounds and before a response is recorded as delivered: when its length
    // takes the stream over the cumulative bound (`chargeToken`), the exchange is finished and
    // the event is not delivered.
    // What the encoding adds over the seller's block is charged first (`encoding.charge`), so
    // that this event's token counts it; the data as the seller sent it (a rewrite is counted
    // below), the id as the seller's (the token's own addition: `chargeToken`).
    const sellerData = verdict?.kind === 'response' ? verdict.bytes : verdict?.kind === 'forward' ? verdict.bytes : content;
    let dataLines: number | undefined;
    if (cumulative !== undefined) {
      dataLines = dataLineCount(sellerData);
      const sellerDataBytes = typeof sellerData !== 'string' ? sellerData.length : dataBytes >= 0 ? dataBytes : Buffer.byteLength(sellerData);
      const eventBytes = eventTypeBytes(event);
      if (!encoding.charge(encodedEventBytes(id === undefined ? -1 : Buffer.byteLength(id), eventBytes, dataLines, sellerDataBytes))) return;
    }
    // The id it goes out with: its own, or the stream's pending id, as a resume token within
    // the stream's token budget, or none (sse-event-ids.ts).
    /** What the tokens added before this event's, for the discovery size (`responseSize`). */
    const tokensBefore = ids.tokenLineBytes;
    id = ids.eventId(id, final || verdict?.kind === 'response');
    if (exchange.finished) return;
    /** The `data:` lines of `out` when it is a rewrite (counted for its bound, passed to the encoder). */
    let outLines: number | undefined;
    /** The response message as it goes out, for the discovery hooks (set when they want it). */
    let observed: unknown;
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
        // event, with what every resume token added (this event's, charged above, included),
        // and on what the rewrite adds to the host's stream, its framing included (the seller's
        // lines are counted on a bounded stream only: elsewhere only the data's bound applies).
        outLines = dataLineCount(out);
        const rewritten = { bytes: out.length, lines: outLines };
        const seller = { bytes: verdict.dataBytes, lines: dataLines ?? outLines };
        const overBound = eventRewriteOverBound(rewritten, seller, perEventLimit, cumulative, lines.lfExpected ? 1 : 0);
        if (overBound !== undefined) {
          out = verdict.bytes;
          outLines = dataLines;
          message = verdict.sellerMessage;
          // The skipped lift is reported (the exchange line's text_not_lifted, the metric).
          recordLiftSkippedForRoom(exchange, verdict.action, overBound);
        } else {
          exchange.bytesSaved += verdict.dataBytes - out.length;
          exchange.actions.push(verdict.action);
          // The count goes on with the bytes sent (this event's token was minted before: a
          // token's count leaves out its own event's rewrite, and this event ends the stream).
          if (cumulative !== undefined) cumulative.used += eventRewriteAddedBytes(rewritten, seller);
        }
      }
      observed = message;
    }
    if (out === undefined && data === undefined) out = bytes;
    /** What the host was given before this event, when it is a response to measure. */
    const before = observed === undefined ? undefined : batch.answerSoFar();
    // The line count the encoder is told: a rewrite's, counted above; the seller data's when
    // that data goes out (else the encoder counts). No rewrite adds a line break (a lifted
    // text's go out as spaces, lift-line-breaks.ts; JSON text as serialized has none; a splice
    // keeps the seller's): counted all the same, so that the bound holds whatever a rewrite writes.
    if (out !== undefined) batch.eventBytes({ id, event }, out, outLines ?? (out === sellerData ? dataLines : undefined));
    else batch.event({ id, event, data: data! }, dataLines);
    if (observed !== undefined) responseSize(observed, before, tokensBefore);
    framedEvent(event, out ?? data!);
    // The responses it holds are the host's now (written before any later error event).
    batchAnswers?.delivered();
    ids.eventSent(id, final);
    if (final) endPlainly(exchange.actions.length > 0 ? 'rewritten' : 'ok');
    // A request of the seller's to the host (elicitation/create, ...): idle clocks wait for
    // the host's answer (`awaitIfServerRequest`).
    else if (hostAnswers !== undefined) awaitIfServerRequest(sellerData, verdict?.kind === 'forward' ? verdict.scanned : undefined);
  };

  /**
   * The host's answers to the seller's requests (routing/host-answer-waits.ts), in this stream's
   * seller endpoint and session (Exchange.hostAnswers: undefined without a session). A stream
   * with a deadline is a member from its start (`hostWaits`, below, with the timers as its
   * clock) and waits, its idle clock paused: on a request's or a batch's stream, for the
   * requests it carries; on any stream, for those a stream answering no request carried, which
   * that stream shares with its session (a member without a clock from its first). Hostile
   * trial 57, F3: test/regressions/elicitation-wait-hits-sse-idle.test.ts.
   */
  const hostAnswers = exchange.hostAnswers;
  const session = exchange.session;
  const sellerKey = hostAnswers !== undefined ? agentKeyOf(exchange.agent) : '';
  let hostWaits: StreamHostWaits | undefined;
  /** This stream's seller endpoint and session as one key (host-answer-waits.ts sessionKeyOf), made once. */
  const sessionKey = hostAnswers !== undefined ? sessionKeyOf(sellerKey, session!) : '';
  /**
   * Whether a request of the seller's is awaited in this stream's seller endpoint and session:
   * its member's O(1) answer, else one `Map` lookup (a stream without a deadline that carried no
   * request yet).
   */
  const awaitedInSession = (): boolean => (hostWaits !== undefined ? hostWaits.anyAwaited() : hostAnswers !== undefined && hostAnswers.anyAwaitedIn(sessionKey));
  /**
   * Whether planned chunk `chunk` is parsed event by event (no raw run: the taker's `readAll`):
   * a request of the seller's is awaited in the session and the chunk holds
   * `"notifications/cancelled"` (one native search), so that the seller's cancellation of it
   * reaches `deliver` (review of trial 57 F3's fix:
   * test/regressions/seller-cancelled-elicitation-pauses-session-idle.test.ts). Before, every
   * chunk of the session's streams was parsed while anything was awaited (hot-path review of
   * the elicitation tracking). An escaped spelling (PHP's `"notifications\/cancelled"`,
   * `"notifications/\u0063ancelled"`: hostile trial 59, I1) holds a backslash, and on a stream
   * where responses are judged (`judged` below) every block holding one is parsed anyway
   * (sse-raw-events.ts RawEventLimits.answerable), so it is read with no search here
   * (test/regressions/php-escaped-seller-cancel-keeps-stream-paused.test.ts,
   * test/unit/escaped-seller-cancel-parsed-on-judged-streams.test.ts); only on a batch's stream
   * resumed is it not. A search for escaped spellings here (4741ba0) cost ~10x per ordinary
   * chunk while a request was awaited (59 KB of progress events with `\n` in their texts:
   * 108-131 us against 12.6) and was dropped (review of 4741ba0, Medium).
   */
  const readAll = (chunk: Buffer): boolean => awaitedInSession() && chunk.indexOf(CANCELLED_METHOD) !== -1;
  /** The structure bounds a candidate request's data is scanned under (server-request-id.ts). */
  const scanBounds = { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes };
  /**
   * When the data `sellerData` of an event just queued for the host is a JSON-RPC request
   * (server-request-id.ts), the host's answer to it is waited for: by this stream when it
   * answers a request (a long-lived one, with no deadline, does not wait), else by every
   * stream with a deadline in its seller endpoint and session.
   */
  const awaitIfServerRequest = (sellerData: string | Buffer, scanned: ScannedMembers | undefined): void => {
    if (exchange.finished) return;
    // The seller gave up on a request of its own (any stream of its session): no answer is awaited for it.
    if (awaitedInSession()) {
      const cancelled = sellerCancelledIdOf(sellerData, scanBounds, scanned);
      if (cancelled !== undefined) return hostAnswers!.cancelledBySeller(sellerKey, session!, cancelled);
    }
    if (requestStream && hostWaits === undefined) return;
    const id = serverRequestIdOf(sellerData, scanBounds, scanned);
    if (id === undefined) return;
    if (requestStream) hostWaits!.await(id);
    // Kept this stream's idle limit + deadline, or longer for a waiting stream of longer limits (StreamHostWaits.awaitShared).
    else (hostWaits ??= hostAnswers!.openStream(sellerKey, session!, undefined)).awaitShared(id, limits.sse_idle_timeout_ms + limits.sse_deadline_ms);
  };

  /**
   * Hands the response `message`, just queued for the host, to the discovery hooks
   * (PipelineHooks.onResponseMessage) with its size as the host receives it: every byte this
   * stream gave the host through the response's event (`SseFrameBatch.answerSoFar`: written and
   * queued), and what came before that event's block, `before` (the events before it, the bytes
   * before its own lines, the comment lines that open its block included: hostile trial 58, 2,
   * test/regressions/discovery-size-comments-before-response-unexplained.test.ts): what `probe` reads on the wire
   * (probe/rpc.ts `answerBytes`, `before`; mcp/discovery-size.ts BeforeResponse). Counted as
   * the frames are queued (the UTF-8 length of each frame's text; a raw range: a search per
   * event block, within it), nothing serialized again; `answerSoFar` reads the counts, O(1). It measured the response event's data alone: 3,000 progress events
   * before a tiny `tools/list` page, 499,944 bytes to the host, drew no warning and no metric
   * where the probe reported the page over its target (hostile trial 57, F2:
   * test/regressions/discovery-size-ignores-sse-events-before-response.test.ts). The batch
   * counts from the stream's start whenever the hooks want the message (`countAnswer`).
   * Each resume token's `id:` line is not counted (`ids.tokenLineBytes`, through the
   * response's event; `tokensBefore`, before it): the target is about the seller's answer,
   * and 1,000 progress events with short ids (126,843 bytes from the seller) drew the warning at
   * 335,628, what their tokens took them to; the probe counts them alike (probe/rpc.ts
   * `tokenBytes`; review of trial 57 F2's fix:
   * test/regressions/discovery-size-counts-gateway-resume-tokens.test.ts).
   */
  const responseSize = (message: unknown, before: ReturnType<SseFrameBatch['answerSoFar']>, tokensBefore: number): void => {
    const through = batch.answerSoFar();
    if (before === undefined || through === undefined) return;
    hooks.onResponseMessage(message, through.bytes - ids.tokenLineBytes, { events: before.events, bytes: before.bytes - tokensBefore });
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
      if (err.type === 'max-buffer-size-exceeded') taker.capBreached(Math.max(perEventLimit + SSE_PENDING_SLACK_BYTES + 1, lines.takeCompletedLine()?.bytes.length ?? 0));
      else {
        if (isIgnoredLineError(err.type)) chargeWork(SSE_IGNORED_LINE_CHARGE_BYTES);
        log.debug({ agent: exchange.agent.name, err: err.message }, 'ignored malformed SSE line');
      }
    },
    maxBufferSize: perEventLimit + SSE_PENDING_SLACK_BYTES,
  });
  // eventsource-parser drops "\u00ef\u00bb\u00bf" (a BOM's bytes read as Latin-1) from the start
  // of the first text it is fed after creation or reset. Its text here is decoded UTF-8, where
  // those are the seller's characters, and which text comes first depends on the chunking
  // (raw-forwarded and held blocks never reach it): fed an empty text first, it drops nothing.
  parser.feed('');
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
   * structure bound applies; its bytes count like every other byte (sse-chunk-taker.ts
   * `take`). Not at the stream's end: the blank line SseLineFeeder.finish adds is none of the seller's, and a
   * block the response cut off sets no last event ID
   * (test/regressions/sse-truncated-block-id-token.test.ts).
   */
  const onIdOnly = (id: string): void => {
    if (streamEnded || taker.skippingToBoundary || exchange.finished) return;
    if (!encoding.charge(encodedIdOnlyBytes(cumulative === undefined ? 0 : Buffer.byteLength(id)))) return;
    ids.pendingId = pendingIdFor(id);
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
  /**
   * Counts `bytes` more for the gateway's work on seller bytes that reach the host as nothing
   * (sse-ignored-lines.ts): SSE_IGNORED_LINE_CHARGE_BYTES for a line the parser ignored with
   * an error (an unknown field, an invalid `retry:`; hostile trial 52, F2),
   * SSE_DROPPED_EVENT_CHARGE_BYTES for an event dispatched and dropped (`refused`): on a bounded
   * stream against its total (past it, `sse_cumulative`: `encoding.chargeAdded` answers), on
   * the others against the undelivered limit (past it, the stream ends `sse_undelivered`).
   * Not once the seller's stream is over.
   */
  const chargeWork = (bytes: number): void => {
    if (streamEnded || exchange.finished) return;
    if (undelivered === undefined) encoding.chargeAdded(bytes);
    else if (!undelivered.charge(bytes)) endUndelivered();
  };
  /** The seller's stream ended (`onIdOnly`). */
  let streamEnded = false;
  const idOnly = new SseIdOnlyBlocks((text) => {
    if (!taker.skippingToBoundary && !exchange.finished) feedWithoutStacks(parser, text);
  }, onIdOnly);
  // Complete lines go to the parser as they arrive (through `idOnly`); an incomplete line
  // waits as raw bytes, capped like the parser's own buffer (sse-boundaries.ts).
  const lines = new SseLineFeeder((text) => {
    if (!taker.skippingToBoundary && !exchange.finished) idOnly.feed(text);
  }, perEventLimit + SSE_PENDING_SLACK_BYTES);
  /** What the re-encoding adds to a bounded stream's count (sse-encoding-charge.ts). */
  const encoding = new SseEncodingCharge(cumulative, lines, answer);
  /** The stream's event ids and their resume tokens (sse-event-ids.ts). */
  const ids = new SseEventIds(exchange, log, hooks, encoding, credit, batchAnswers);
  /** The reason a stream without a total ends with at its undelivered limit (errors/codes.ts END_REASONS). */
  const UNDELIVERED: EndReason = 'sse_undelivered';
  /** The reason a stream without a total ends with when its framing passes its bound (routing/wire-meter.ts). */
  const WIRE_OVERHEAD: EndReason = 'sse_wire_overhead';
  /**
   * Ends a stream without a total at its undelivered limit (sse-undelivered.ts): plainly, so
   * that the host resumes (its pending id goes out first), reason `sse_undelivered`.
   */
  const endUndelivered = (): void => {
    exchange.reason = UNDELIVERED;
    endPlainly('resumable_end');
  };
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
  /**
   * Each input chunk, in order (sse-chunk-taker.ts): cut into ranges and counted (the
   * cumulative bound, the token credit, the undelivered count), then forwarded raw, held as
   * bytes, read as a simple block, or pushed to the line feeder (`lines`) -> the id-only watch
   * (`idOnly`) -> the parser -> `onEvent`, `onComment`, `onRetry`, `onIdOnly` -> `deliver` (the
   * judge, the encoding charge, the event's id, the rewrite) -> the host's frame batch, written
   * once the chunk is taken (`host.flush`, the read loop).
   */
  const taker = new SseChunkTaker(exchange, judged, cumulative, undelivered, credit, encoding, lines, idOnly, parser, ids, batch, {
    heldEvent: (event, data) => {
      deliver(event, undefined, undefined, data);
      // The host's stream is over (the answer, or an error): nothing reads the data after it.
      if (exchange.finished) bodyPool.recycleAfterSend(raw, data);
    },
    idOnly: onIdOnly,
    encodedFrame: sendEncodedFrame,
    framed,
    fail,
    endUndelivered,
    readAll,
  });

  /**
   * A CR the seller's bytes ended with at the cumulative bound, held until its next byte
   * (sse-chunk-taker.ts `heldCr`), is parsed when that byte will not be read: the seller went
   * silent (a timeout), ended, reset, or the gateway shuts down. No LF came: the CR ends its
   * line (an event it completes goes out, within the bound, as on a CR-only stream).
   */
  const releaseCrAtLimit = (): void => {
    if (!exchange.finished) taker.releaseCrAtLimit();
  };

  const onTimeout = (input: LocalErrorInput): void => {
    if (input.reason !== 'host_not_reading') releaseCrAtLimit();
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
  /**
   * Set by the first shutdown call (pipeline.ts SseShutdownEnd): whether the tokens of this
   * process outlive it (`onUpstreamEnd` reads it, or the gateway's state,
   * `hooks.shutdownTokensOutlive`, for a stream no shutdown call has reached yet); undefined
   * while no shutdown has begun.
   */
  let shutdownTokensOutlive: boolean | undefined;
  /**
   * Ends the stream for a shutdown: plainly so the client resumes with its last token; a
   * request stream that sent no event id yet has nothing to resume from, so its request is
   * answered instead. So is every request stream when the tokens die with this process
   * (`tokensOutlive` false: the random per-process secret): a resume anywhere is refused
   * `resume_token_invalid` (HTTP 400, id null), which answers no pending call. An id still
   * pending is then not minted: a token no process verifies only sends the client into that
   * refusal (a stream answering no request, its client given no id before, reconnects
   * without one). Reported failure (a hostile new user's trial 13, M1): such streams ended
   * plainly, the MCP SDK client retried its resume 5 times against the restarted gateway and
   * the call hung until the client's own timeout
   * (test/regressions/restart-without-secret-hangs-sdk-call.test.ts).
   */
  const endForShutdown = (tokensOutlive: boolean, retryMs?: number): void => {
    // A CR held at the cumulative bound: its next byte will not be read now.
    releaseCrAtLimit();
    if (exchange.finished) return;
    if (!tokensOutlive) {
      exchange.shutdownResumeSecret = 'per_process';
      ids.pendingId = undefined;
    }
    writePendingId();
    if (exchange.finished) return;
    if (requestStream && (!tokensOutlive || exchange.lastEventIdSent === undefined)) return answer({ reason: 'gateway_shutdown' });
    // The client reconnects to the successor: told how long to wait first (shutdown-retry.ts).
    const retry = shutdownRetryFrame(retryMs, exchange.sseRetryMaxMs);
    if (retry !== '') batch.frame(retry);
    endPlainly('resumable_end');
  };
  // Shutdown (pipeline.ts SseShutdownEnd): a request's stream, resumable or not, is left to
  // finish until `final` (the grace nearly over, a second signal), so the seller's answer
  // reaches the host on this process, as a JSON answer does; a stream answering no request is
  // left until no request is in flight (`no_requests`: just before the exit) or `final`.
  // Reported failures: a hostile trial 47, F1 (a call that could not be resumed was answered
  // `gateway_shutdown` at the signal: test/regressions/shutdown-answers-unresumable-sse-call-at-once.test.ts);
  // a hostile operator's trial 49, findings 1 and 2 (with a configured secret a resumable
  // call's stream, and every standalone GET stream, ended at the signal: on a same-port
  // restart the SDK client's reconnect met 503 `draining`, then a refused connection, and it
  // gave up: test/regressions/restart-with-secret-loses-answered-sse-call.test.ts,
  // test/regressions/drain-ends-get-stream-into-draining-refusals.test.ts).
  hooks.onSseStart((tokensOutlive, phase, retryMs) => {
    // Already over (its entry leaves `streams` as this stage ends): not counted as ended now
    // (review 34, item 4: `sse_streams_ended` over-counted, the `nothing in flight` line repeated).
    if (exchange.finished) return false;
    shutdownTokensOutlive = tokensOutlive;
    if (phase === 'grace' || (phase === 'no_requests' && requestStream)) return false;
    endForShutdown(tokensOutlive, retryMs);
    return true;
  });

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
  // A member for the host's answers until its end (`finally`): only a stream with a deadline waits for them.
  // A resume of a request's stream (its call's canonical id) waits for what its call's earlier stream left awaited (HostAnswerWaits.park).
  // The call's id is made only there and at a resumable end (not per stream: hot-path review of the elicitation tracking).
  const callId = (): string | undefined => (exchange.rpc.kind === 'request' ? canonicalRequestId(exchange.rpc) : undefined);
  if (hostAnswers !== undefined && bounded) {
    // Its own idle limit + deadline (a tool's for its call) keep the shared ids it waits for at least that long (StreamHostWaits.awaitShared).
    const keepMs = limits.sse_idle_timeout_ms + limits.sse_deadline_ms;
    hostWaits = hostAnswers.openStream(sellerKey, session!, timers, limits.sse_idle_timeout_ms, exchange.stream.resumeToken !== undefined ? callId() : undefined, exchange.stream.startedAt, keepMs);
  }
  // The host cancelled the call (its `notifications/cancelled` accepted by the seller: routing/
  // in-flight-requests.ts PendingCancellation): it answers none of the requests made for it, so
  // the stream waits for none (StreamHostWaits.hostCancelled; hostile trial 59, F2: it stayed
  // open to sse_deadline_ms). Now, or when the seller accepts one (`onCancelled`, unset below).
  const onCallCancelled = (): void => hostWaits?.hostCancelled();
  if (hostWaits !== undefined && exchange.rpc.kind === 'request') {
    if (exchange.cancelAccepted) onCallCancelled();
    else if (exchange.onCancelled === undefined) exchange.onCancelled = onCallCancelled;
  }
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
      // The body's first byte: a 202's deferred head goes out (sse-host-writer.ts; O(1) after).
      if (chunk.length > 0) host.startStream();
      timers.armIdle();
      const open = taker.takeChunk(chunk);
      host.flush();
      dropMetric.flush();
      if (!open || exchange.finished) break;
      // What the stage holds now, before any wait: an event written to the host is the host's
      // to hold from here (HostHold below), not counted twice. While skipping an event over its
      // cap, the parser holds none of it (it dropped its data, or was reset at the line's
      // breach: sse-chunk-taker.ts `feederBreached`).
      lease?.set(lines.pendingBytes + taker.heldBytes + (taker.skippingToBoundary ? 0 : lines.openDataBytes));
      if (host.needDrain) {
        host.needDrain = false;
        startTimers();
        // The host, not the seller, holds the stream back: its idle time starts now (onIdleTimer).
        timers.waitingForHost = true;
        timers.armIdle();
        // What the host has not taken counts for the agent while the stage waits for it
        // (hostile trial 54, F3); only the timers above cut the host (agent-guard.ts HostHold).
        const hold = exchange.guard?.holdForHost(exchange.agent.name, exchange.agent.guard, raw);
        await drainOrClose(raw);
        hold?.release();
        timers.waitingForHost = false;
        timers.armIdle();
      }
      if (lease !== undefined) {
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
    if (!exchange.finished && !taker.skippingToBoundary) {
      // An incomplete last line goes to the parser, then a line break (SseLineFeeder.finish).
      releaseCrAtLimit();
      taker.releaseHeld();
      streamEnded = true;
      lines.finish();
      host.flush();
    }
    if (!exchange.finished) onUpstreamEnd();
  } catch (err) {
    releaseCrAtLimit();
    // The wire meter's framing bound (routing/wire-meter.ts: only a stream without a total has
    // it): ended plainly, as at its undelivered limit; the host resumes with its last event id.
    if (err instanceof WireOverheadError && !bounded) {
      exchange.reason = WIRE_OVERHEAD;
      endPlainly('resumable_end');
      return;
    }
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
    // The drops and untokenized ids not yet logged get their summaries as the stream ends (before
    // any await), and the drops not yet counted their metric.
    dropLog?.end();
    dropMetric.flush();
    ids.end();
    // Closes the decoders' generator as `for await` would (a no-op once it is done), before the
    // lease its decoders are charged to is released. Were the close to reject, the releases
    // below still run and this stage still resolves (it never rejects: its doc; review 33,
    // item 4: test/regressions/sse-decoders-close-rejects-skips-release.test.ts).
    if (decodedChunks !== undefined) {
      try {
        await decodedChunks.return(undefined);
      } catch {
        // The stream is over, answered or ended: nothing is left to tell the host or the seller.
      }
    }
    host.headSent();
    lease?.release();
    hooks.onSseEnd();
    timers.clear();
    // A stream that is over waits for nothing (its shared requests go with its session's last member).
    // A request's stream that ended resumable leaves its requests still awaited to its call's resume, until its deadline.
    if (exchange.onCancelled === onCallCancelled) exchange.onCancelled = undefined;
    if (hostWaits !== undefined) {
      const call = bounded && exchange.outcome === 'resumable_end' ? callId() : undefined;
      hostWaits.close(call !== undefined ? { call, expiresAt: exchange.stream.startedAt + limits.sse_deadline_ms, startedAt: exchange.stream.startedAt } : undefined);
    }
    // An upstream request that ended whole is left to end; one still open is aborted (decode.ts).
    releaseBody(source.stream);
  }

  function onUpstreamEnd(): void {
    // Shutting down with tokens that die with this process: a request's stream the seller
    // ends after an id (sent or pending) but before its response cannot be resumed anywhere
    // (this gateway no longer listens; any other refuses the token), so its request is
    // answered `gateway_shutdown` rather than ended plainly (`endForShutdown`).
    // A stream that started after the signal may end before any shutdown call reaches it (its
    // head, an event id and its end in one packet): the gateway's state says (review 34, item
    // 1: test/regressions/stream-started-after-signal-ends-into-dead-token.test.ts).
    const tokensOutlive = shutdownTokensOutlive ?? hooks.shutdownTokensOutlive?.();
    if (tokensOutlive === false && requestStream && batchAnswers?.done !== true && (exchange.lastEventIdSent !== undefined || ids.pendingId !== undefined)) {
      return endForShutdown(false);
    }
    // Before the ending is chosen: a request's stream with an id is resumable.
    writePendingId();
    if (exchange.finished) return;
    // A batch without requests waits for nothing: its stream ends as a notification's.
    if (!requestStream || batchAnswers?.done === true) return endPlainly('ok');
    if (exchange.lastEventIdSent !== undefined) return endPlainly('resumable_end');
    // A seller's 202 whose body ended with no byte at all (after decoding) within
    // ACCEPTED_HEAD_WAIT_MS: nothing went to the host (its head deferred: sse-host-writer.ts),
    // and it is answered as an empty 202 of any other type is, `upstream_not_mcp` for its id as
    // a JSON body, no warning (hostile trial 59, F1). A byte (a comment, a cut-off event, a
    // `retry:` line), that wait's end, a reset, a timeout or a bound starts the stream: then the
    // error below on the 200 (review of trial 59 F1's fix, Medium and Low).
    if (host.headDeferred && streamEnded) {
      return answer({ reason: 'upstream_not_mcp', limitBytes: limits.max_response_bytes, observedBytes: cumulative?.used ?? source.raw.used, upstreamStatus: res.statusCode }, true);
    }
    answer({
      reason: 'upstream_reset',
      limitBytes: limits.max_response_bytes,
      observedBytes: cumulative?.used ?? source.raw.used,
    });
  }
}
