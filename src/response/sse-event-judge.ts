/**
 * The SSE stage's judgement of one event's data (sse-stage.ts `deliver`), before anything of
 * it goes out: whether it passes, and how ({@link SseEventJudge.judge}). Every event's data is
 * judged, whatever its `event:` name (a new user's trial 9, F1: a named event skipped every
 * check; {@link namedEvent}):
 * - structure bounds (`max_json_depth`, `max_json_nodes`): proved by withinJsonBounds, else
 *   scanned (sse-message.ts inspectEventData) -> `json_depth` / `json_nodes`;
 * - where responses are judged (a request's stream, the standalone GET stream, a POSTed
 *   notification's or response's stream), data that may be a response or name no method
 *   (sse-response-sniff.ts) is parsed: a response to another id, or the response in a named
 *   event, ends the stream `upstream_not_mcp`; a response where none may pass is dropped
 *   (`get_stream_response`, `notification_stream_response`), and so is data naming no kind of
 *   message (`message_without_kind`: kindless-event.ts);
 * - on a batch's stream, the responses it holds are taken by batch-answers.ts: one for an id
 *   not awaited ends the stream `upstream_not_mcp` (id null), the one completing the batch
 *   makes the event final ({@link SseEventJudge.judgeBatch}, which the stage calls after
 *   {@link SseEventJudge.judge} on such a stream).
 * The reported failures and regression tests behind each rule are in the comments at each
 * step, and in the stage's module doc (its paragraphs on responses to another id, the
 * standalone GET stream and named events).
 *
 * The rules (moved here from sse-stage.ts's module doc with the judgement):
 *
 * A JSON-RPC response to another id on a request's stream (sse-message.ts isForeignResponse:
 * a client routes a response by its id alone, so it would answer another pending call) is
 * never forwarded: it ends the stream with `upstream_not_mcp` for the request's id, as the
 * JSON path answers such a body (docs/errors.md); on a long-lived stream it is dropped as a
 * breach is there (sse-stage.ts). So is a message with a `method` beside its `result` or `error`
 * (no request either), one with `result` or `error` and no `id`, or both of them (no response
 * either: JSON-RPC 2.0 §5; rewrite.ts claimsResponse; its block is parsed, never raw:
 * sse-raw-events.ts RawEventLimits.responseKeys), a message that names no method and has
 * neither member (an id-only message, the request's id or another, or no message at all,
 * `{"jsonrpc":"2.0"}`, an empty `method` naming none: rewrite.ts lacksMethod; its block is
 * raw only when its data proves a method: sse-raw-events.ts RawEventLimits.methodNamed; a
 * review: test/regressions/seller-message-without-kind-forwarded.test.ts), and an array
 * holding such a message, the request's own response in it or not; and a response, or an
 * array holding one, whose message repeats a member name (mcp/repeated-names.ts; on a
 * batch's stream, batch-answers.ts take), whatever its id: a host whose parser keeps the
 * first of two `id` members routes it elsewhere.
 * Reported failures: test/regressions/sse-response-for-another-id.test.ts,
 * sse-method-and-result-for-another-id-forwarded.test.ts,
 * sse-batch-shaped-response-for-another-id-forwarded.test.ts,
 * sse-result-and-error-without-id-forwarded.test.ts (a reviewer, 2026-12-03),
 * response-with-repeated-id-member-accepted.test.ts. On a batch's stream (MCP
 * 2025-03-26), a response for an id that is not one of the batch's request ids, or a second
 * response for an id (batch-answers.ts: one more than the batch holds requests with it), ends
 * the stream so, with the error for id null; the events before it have gone out, the
 * offending event (a whole array, its other responses included) does not. Reported failure (a
 * new user's trial, 2026-12-03: a batch's answer carried a response for another id):
 * test/regressions/batch-answer-for-other-ids-forwarded.test.ts.
 *
 * On the standalone GET stream (`rpc.kind` 'none': a GET without Last-Event-ID, or one
 * resuming that stream with its token) no JSON-RPC response may pass, whatever its id (MCP
 * Streamable HTTP 2025-03-26, 2025-06-18: "The server MUST NOT send a JSON-RPC response on
 * the stream unless resuming a stream associated with a previous client request"): an event
 * whose data is one (a `result` or an `error` member, with or without an `id`, a `method`
 * beside them included; or no method named, an empty one included: an id-only message, or
 * no message at all), or an array holding one, is dropped as a breach is there (sse-stage.ts),
 * reason `get_stream_response` (errors/codes.ts DROP_REASONS), and the stream goes on.
 * Requests and notifications pass unchanged: the raw path keeps every block holding none of
 * `"result`, `"error` (in any case: a Go host reads `"Result"` and `"reſult"` as `result`), `\u`
 * (sse-raw-events.ts RawEventLimits.responseKeys) and `"id` (in any case:
 * RawEventLimits.answerable) whose data provably names a method or is no JSON object or array
 * (RawEventLimits.methodNamed), and only an event whose data may hold such a key or name no
 * method is parsed (sse-response-sniff.ts mayBeResponse,
 * mayLackMethod; sse-message.ts standaloneVerdict).
 * The stream answering a POSTed notification or JSON-RPC response (`rpc.kind` 'notification',
 * resumed or not) follows the same rule, its drops reason `notification_stream_response`: no
 * request of that POST awaits a response (a new user's trial 8, F4:
 * test/regressions/notification-answer-carries-response-forwarded.test.ts).
 * A GET resuming a POST's stream (its token minted there) is that request's stream, with its
 * rules. Reported failure (a new user's trial): a seller held back its POST answer to
 * `tools/call` id 1 and pushed a ~42 KB response for id 1 on the GET stream; the SDK client
 * took it as its call's result, past the tool's 10,000-byte limit, undeduped
 * (test/regressions/get-stream-answers-pending-call.test.ts).
 *
 * A refusal is reported through the stage's `fail` (the error answer on a bounded stream, a
 * drop elsewhere) or `drop`; the caller then delivers nothing of the event. One judge per
 * stream; per event, nothing allocated but what inspectEventData returns (its options objects
 * are made once, at the first event that needs each).
 */
import type { ServerResponse } from 'node:http';
import type { DropReason } from '../errors/codes.js';
import { shownInMessage, type LocalErrorInput } from '../errors/local-reply.js';
import type { Exchange } from '../exchange.js';
import { withinJsonBounds } from '../mcp/json-bounds.js';
import type { BatchAnswers } from './batch-answers.js';
import { bodyPool } from './body-pool.js';
import { isEmptyObjectData, isKindlessEventData } from './kindless-event.js';
import { inspectEventData, type EventDataOptions, type EventDataVerdict } from './sse-message.js';
import { mayBeResponse, mayLackMethod } from './sse-response-sniff.js';

/** {@link SseEventJudge.judge}'s answer for an event refused (failed or dropped): nothing of it goes out. */
export const EVENT_REFUSED = null;

/** The stream's flags that say which events' data the judge parses (sse-stage.ts sets them once per stream). */
export interface SseJudgedStream {
  /** Only a `request` can be answered by an event. */
  readonly answerable: boolean;
  /** The standalone GET stream: a response there is dropped `get_stream_response`. */
  readonly standalone: boolean;
  /** No request to answer (the standalone GET stream, a POSTed notification's or response's stream): no response may pass. */
  readonly answersNoRequest: boolean;
}

export class SseEventJudge {
  private readonly perEventLimit: number;
  private readonly boundsLimits: { readonly maxDepth: number; readonly maxNodes: number };
  private readonly wantsMessage: boolean;
  // inspectEventData's options, made at the first event that needs each (not per event).
  private responseOpts: EventDataOptions | undefined = undefined;
  private otherOpts: EventDataOptions | undefined = undefined;

  /**
   * `stream`: which events' data is parsed; `upstreamStatus`: the seller's HTTP status
   * (reported with `upstream_not_mcp`); `raw`: the host's response (a pooled rewrite refused is
   * given back once it closes); `batchAnswers`: a batch's stream's answers (undefined on any
   * other); `wantsMessage`: the pipeline wants the response's parsed message
   * (PipelineHooks.wantsResponseMessage); `fail`, `drop`: the stage's.
   */
  constructor(
    private readonly exchange: Exchange,
    private readonly stream: SseJudgedStream,
    private readonly upstreamStatus: number,
    private readonly raw: ServerResponse,
    private readonly batchAnswers: BatchAnswers | undefined,
    wantsMessage: boolean,
    private readonly fail: (input: LocalErrorInput) => void,
    private readonly drop: (reason: DropReason, observedBytes: number | undefined, quiet?: boolean) => void,
  ) {
    const limits = exchange.limits;
    this.perEventLimit = limits.max_sse_event_bytes;
    this.boundsLimits = { maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes };
    this.wantsMessage = wantsMessage;
  }

  /**
   * Judges one event of type `event` (eventsource-parser's) whose data is `data` as text, or
   * `bytes` (its UTF-8 encoding, when the caller has it), or both. The event is within the
   * per-event bound (the caller's check). {@link EVENT_REFUSED} when it was refused (reported); else the data's
   * verdict when it was inspected (undefined when not: it goes out as it is). On a batch's
   * stream the caller then has the responses it holds judged ({@link judgeBatch}).
   */
  judge(event: string | undefined, data: string | undefined, bytes: Buffer | undefined): EventDataVerdict | undefined | typeof EVENT_REFUSED {
    const { exchange, perEventLimit, raw, upstreamStatus, fail, drop, stream } = this;
    let verdict: EventDataVerdict | undefined;
    const content = data ?? bytes!;
    // Every event's data is judged, whatever its name (a new user's trial 9, F1: a named event
    // skipped every check below; see `namedEvent`).
    if (content.length > 0) {
      // Parsed only when it may be the response to the request, or a response where none may
      // pass, or name no method (mayBeResponse; mayLackMethod: an id-only message, or none at
      // all): anything else (progress notifications...) is forwarded as it is, after the
      // structure bounds (proved by withinJsonBounds, else scanned: sse-message.ts).
      const candidate = (stream.answerable || stream.answersNoRequest) && (mayBeResponse(content) || mayLackMethod(content));
      if (candidate || !withinJsonBounds(content, this.boundsLimits)) {
        const opts = candidate ? (this.responseOpts ??= { ...this.boundsLimits, mayBeResponse: true, wantsMessage: this.wantsMessage }) : (this.otherOpts ??= { ...this.boundsLimits, mayBeResponse: false, wantsMessage: this.wantsMessage });
        verdict = inspectEventData(exchange, data, opts, bytes);
        if (verdict.kind === 'breach') {
          fail({ reason: verdict.reason, limitBytes: perEventLimit, observedBytes: verdict.dataBytes, limit: verdict.limit, observed: verdict.observed });
          return EVENT_REFUSED;
        }
        // A response to another id, alone or in an array (sse-message.ts isForeignResponse,
        // batchVerdict): the seller is not answering this request in MCP, as a JSON body with
        // that id (json-stage.ts answersExchange): `upstream_not_mcp` for the request's id ends
        // the stream. Dropping only the event would leave the request waiting on a seller that
        // answers other ids.
        if (verdict.kind === 'foreign') {
          // Its cause, when the message names it: an array holding the response on a revision without batches (array-answer.ts).
          fail({ reason: 'upstream_not_mcp', limitBytes: perEventLimit, observedBytes: verdict.dataBytes, upstreamStatus, ...(verdict.cause !== undefined ? { cause: verdict.cause } : {}) });
          return EVENT_REFUSED;
        }
        // Any response on the standalone GET stream (sse-message.ts standaloneVerdict): dropped,
        // the stream goes on for the requests and notifications it may carry.
        if (verdict.kind === 'unsolicited') {
          drop(stream.standalone ? 'get_stream_response' : 'notification_stream_response', verdict.dataBytes);
          return EVENT_REFUSED;
        }
        // Data that names no kind of message at all (`{}`: kindless-event.ts): no host reads it
        // as one, so it is dropped, not refused; its id goes with it, as a dropped event's on
        // the standalone GET stream (a hostile trial 17, M1). An SDK's priming event (exactly
        // `{}`) is dropped quietly: its line is debug (a hostile trial 47, F2).
        if (verdict.kind === 'kindless') {
          drop('message_without_kind', verdict.dataBytes, isEmptyObjectData(content));
          return EVENT_REFUSED;
        }
        // The request's response in a named event: no answer (`namedEvent`), refused as one to another id.
        if (verdict.kind === 'response' && namedEvent(event)) {
          if (verdict.changed) bodyPool.recycleAfterSend(raw, verdict.out);
          exchange.answerEvent = shownInMessage(event);
          fail({ reason: 'upstream_not_mcp', limitBytes: perEventLimit, observedBytes: verdict.dataBytes, upstreamStatus });
          return EVENT_REFUSED;
        }
      }
    }
    return verdict;
  }

  /**
   * On a batch's stream (`batchAnswers` given), after {@link judge} passed the event with
   * `verdict` (the same `event`, `data`, `bytes`; `dataBytes`, the data's UTF-8 length when
   * measured, -1: short enough not to be): the responses its data holds,
   * once within the structure bounds (proved there, or scanned: the verdict). True when the
   * event completes the batch's answers (batch-answers.ts `done`): it is final, and the stream
   * ends once it is delivered; false when not; {@link EVENT_REFUSED} when it was refused
   * (reported): one for an id not awaited (not in the batch, or answered already) ends the
   * stream with `upstream_not_mcp` for id null, the event not forwarded, as a response to
   * another id ends a single request's (batch-answers.ts; a new user's trial, 2026-12-03:
   * test/regressions/batch-answer-for-other-ids-forwarded.test.ts). Not `batchAnswers.done`
   * after the fact: a batch without requests is done from its start, and only an event whose
   * data may hold a response is taken (and final) there. Nothing allocated.
   */
  judgeBatch(event: string | undefined, data: string | undefined, bytes: Buffer | undefined, dataBytes: number, verdict: EventDataVerdict | undefined): boolean | typeof EVENT_REFUSED {
    const batchAnswers = this.batchAnswers!;
    const content = data ?? bytes!;
    if (content.length === 0 || !(mayBeResponse(content) || mayLackMethod(content))) return false;
    const taken = batchAnswers.take(verdict?.kind === 'forward' ? verdict.bytes : content);
    // A response to one of the batch's requests in a named event answers none (`namedEvent`).
    const namedAnswer = batchAnswers.answeredUndelivered && namedEvent(event);
    if (taken === 'foreign' || namedAnswer) {
      const observedBytes = typeof content !== 'string' ? content.length : dataBytes >= 0 ? dataBytes : Buffer.byteLength(content);
      // Data that names no kind of message at all is dropped, as on a request's stream ({@link
      // judge}; `take` counted nothing for it: such an object has no `id`).
      if (taken === 'foreign' && isKindlessEventData(content)) {
        this.drop('message_without_kind', observedBytes, isEmptyObjectData(content));
        return EVENT_REFUSED;
      }
      if (namedAnswer) this.exchange.answerEvent = shownInMessage(event);
      this.fail({ reason: 'upstream_not_mcp', limitBytes: this.perEventLimit, observedBytes, upstreamStatus: this.upstreamStatus });
      return EVENT_REFUSED;
    }
    return taken === 'done';
  }
}

/**
 * True when an event of type `event` (eventsource-parser's: undefined for none or an empty
 * `event:` field) is not a `message` event: `event: x-custom`, and `event:  message` (two
 * spaces: the type " message").
 *
 * Such an event's data is judged as a `message` event's is (structure bounds, responses:
 * SseEventJudge.judge) and, when it passes, goes out under its name as the seller sent it; but the
 * response to the request (or, on a batch's stream, to one of its requests) in one is no
 * answer: `upstream_not_mcp` for the request's id (for each request still awaited on a
 * batch's stream), nothing of it forwarded, as a response to another id; a long-lived stream
 * drops it. Why: hosts differ on it. The MCP TypeScript SDK client dispatches only events
 * with no type or `message` (client/streamableHttp.js: `!event.event || event.event ===
 * 'message'`), so its call would wait until its own timeout while the gateway logged the
 * exchange answered; the MCP Go SDK client decodes every event, whatever its name, and routes
 * responses by id. One answer every host reads the same is the gateway's error, as for a
 * member name written twice (mcp/repeated-names.ts). Reported failure (a new user's trial 9,
 * F1): named events skipped every check; one carrying the call's own response went out
 * undeduped, and the plain response after it too, two answers for one id
 * (test/regressions/sse-named-event-unchecked.test.ts). The refused event's name is kept on
 * the exchange (`answerEvent`: the exchange line's `answer_event`, `probe`'s report).
 */
function namedEvent(event: string | undefined): event is string {
  return event !== undefined && event !== 'message';
}
