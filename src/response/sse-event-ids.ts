/**
 * The SSE stage's event ids (sse-stage.ts; ARCHITECTURE §4): which id each frame carries to
 * the host, the resume tokens minted for the seller's ids ({@link SseEventIds}), and what they
 * add to a bounded stream's count.
 *
 * An event's non-empty id goes out as a resume token carrying the count through the event
 * (`hostEventId`; an empty `id:` passes unchanged). An id-only block's id is the stream's
 * pending id (`pendingId`): the next event without an id of its own carries it (`eventId`), an
 * event's own id or a later id-only block supersedes it (WHATWG HTML §9.2.6: the last event ID
 * is the latest id field), and one still pending when the stream ends plainly (the seller's
 * end, a shutdown with a configured resume secret, an idle standalone GET stream) goes out
 * alone, `id: <token>` and a blank line (`takePendingToken`; the stage's `writePendingId`), so
 * the host resumes from the seller's last id. A raw run that the pending id would go with has
 * its first event parsed (sse-chunk-taker.ts `takePlanned`), an event held as bytes gets it when
 * dispatched. On every stream a token is minted only within the stream's budget
 * (sse-token-credit.ts: tokens add at most twice the seller's bytes); an event that finds it
 * spent goes out without an id, its id pending in turn. The event carrying the response gets
 * its token whatever the budget (its token is `final`), as does an id pending at the end.
 * Reported failure (a new user's trial 9, F3): each id-only block went out as its own ~180-byte
 * token, 20.4x the seller's bytes on the standalone GET stream with no bound, and events with
 * short ids and no data 14.3x; minting them slowed other agents' calls from ~23 ms to 210-500 ms
 * (test/regressions/get-stream-id-only-token-amplification.test.ts). On a request's stream,
 * where the cumulative bound counts the tokens (`chargeToken`), such events still went out with
 * a token each, ~18x the seller's bytes up to the bound (hostile trials:
 * test/regressions/request-stream-short-id-token-amplification.test.ts).
 * A bounded stream that ends, whatever ended it, with bytes sent after the last token it
 * gave with an event (events without an id, comments, an id-only block's token, which the
 * MCP SDK clients never take as their Last-Event-ID) notes that token and its count at the
 * end (`noteTail`; resume/tail-ledger.ts), so that a resume from it starts there, not from
 * the token's older count (hostile trial 24, F1:
 * test/regressions/resume-untokenized-bytes-escape-cumulative-bound.test.ts). Nothing per event.
 *
 * Counts are bytes in the cumulative budget's units (the seller's bytes taken, plus what the
 * encoding and the tokens added: `tokenCount`); 0 on a stream without a cumulative bound. One
 * object per stream; per event, a few field reads and at most one token minted.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../exchange.js';
import type { BatchAnswers } from './batch-answers.js';
import type { PipelineHooks } from './pipeline.js';
import type { SseEncodingCharge } from './sse-encoding-charge.js';
import { SseIdTokenLog, tokenRefusalCause } from './sse-id-token-log.js';
import type { TokenCredit } from './sse-token-credit.js';
import { MAX_RESUME_TOKEN_LENGTH } from '../resume/token.js';

/**
 * What the stream keeps as its pending id for a seller's event id `id`
 * ({@link SseEventIds.pendingId}): `id`, or {@link UNTOKENIZABLE_ID} when it is longer than
 * a resume token may be (MAX_RESUME_TOKEN_LENGTH, 4096 characters; a token carries the id,
 * base64url-coded, so no token can carry such an id: routing/handler.ts `mintEventId` refuses
 * it). Such an id still supersedes an earlier pending id and goes out as none, with the same
 * warning; only its text is not kept. Why: a seller's id may be as long as the line cap
 * (`max_sse_event_bytes` + 65,536), and a pending id is kept across events, until the next
 * event or the stream's end, counted nowhere (a re-read of hostile trial 52's fix, A:
 * test/regressions/sse-pending-over-long-id-kept.test.ts). One length read.
 */
export function pendingIdFor(id: string): string {
  return id.length > MAX_RESUME_TOKEN_LENGTH ? UNTOKENIZABLE_ID : id;
}

/** What an `id:` line adds around its token, in bytes: `id: ` and the LF (sse-encode.ts `eventHead`). */
const TOKEN_ID_LINE_FRAMING = 5;

/** The pending id kept for a seller's id no token can carry ({@link pendingIdFor}): NUL, which no seller id holds (WHATWG HTML §9.2.6 ignores such an id field), and which no token carries (request/headers.ts isResumableEventId). */
const UNTOKENIZABLE_ID = '\0';

export class SseEventIds {
  /**
   * The seller's last event id the host has not been given (module doc): an id-only block's
   * (the stage's `onIdOnly`), or the id of an event refused a token by the credit, as
   * {@link pendingIdFor} keeps it; the next event without an id of its own carries it
   * ({@link eventId}), else the stream's end ({@link takePendingToken}). Undefined when there
   * is none.
   */
  pendingId: string | undefined = undefined;
  /**
   * The bytes of the `id:` lines carrying the resume tokens minted so far on this stream, as
   * the host gets them: each `id: <token>` and its LF (the token's ASCII length + 5), summed.
   * The discovery-size check subtracts it (sse-stage.ts `responseSize`): the target is about
   * the seller's answer, and 1,000 events with short ids (126,843 bytes) drew the warning at
   * 335,628 bytes, what their tokens took them to (review of hostile trial 57 F2's fix:
   * test/regressions/discovery-size-counts-gateway-resume-tokens.test.ts). The whole line, not
   * the token less its seller id: an event refused a token by the credit goes out with no `id:`
   * line, and how many are refused depends on the tokens' lengths (the host's session id, the
   * request's id), so a host's answer and the probe's (its own session) counted the seller's ids
   * of different events; the same seller was 142,619 bytes live and 142,675 in `probe`
   * (hostile trial 58, 1: test/regressions/probe-and-live-discovery-size-disagree.test.ts).
   * One addition per token.
   */
  tokenLineBytes = 0;
  /**
   * The last token the host got with an event on this exchange, unless that event carried the
   * response (the token a host takes as its Last-Event-ID: an id-only block's token is not, for
   * the MCP SDK clients and eventsource-parser 3), and the count a resume from it starts from
   * (its count and what it added: routing/resumed-stream.ts resumedCount). {@link noteTail} compares
   * the stream's count at its end with it. A resumed bounded stream starts with the token it
   * resumes from and the count it resumed at (exchange.ts `stream.resumeToken`): the host
   * resumes from it again until an event brings a newer one, so bytes without an id after the
   * resume are noted under it (a review, 2026-12-05:
   * test/regressions/resume-without-ids-escapes-cumulative-bound.test.ts).
   */
  private lastEventToken: string | undefined;
  private lastEventTokenCount: number;
  /**
   * {@link tokenCount} after the last frame the stage queued for the host (an event, a comment,
   * a `retry:`, a raw block, an id-only block's token): what the host received, in the
   * tokens' units. {@link noteTail} takes it, not the count, which also holds the bytes of an
   * event the seller cut off before its end, never forwarded (hostile trial 25, F1: a 40 KB
   * part of an answer, then a drop, and the resume was refused `sse_cumulative` though the
   * host had received 354 bytes: test/regressions/resume-counts-event-cut-off-by-drop.test.ts).
   */
  private deliveredCount = 0;
  /** The count a resume from the token {@link hostEventId} minted last starts from. */
  private mintedResumeCount = 0;
  /** The stream's warnings for ids not turned into tokens (sse-id-token-log.ts), made at the first ({@link hostEventId}). */
  private idTokenLog: SseIdTokenLog | undefined = undefined;

  /**
   * `encoding`: the stream's encoding charge (sse-encoding-charge.ts): its count against
   * `max_response_bytes` (`cumulative`: a bounded stream's; else undefined), the LF still to
   * come (`lfExpected`), and the charge of what a token adds (`chargeAdded`: `sse_cumulative`
   * past the bound); `credit`: its token budget; `batchAnswers`: a batch's requests still
   * awaited (carried in each token).
   */
  constructor(
    private readonly exchange: Exchange,
    private readonly log: FastifyBaseLogger,
    private readonly hooks: PipelineHooks,
    private readonly encoding: SseEncodingCharge,
    private readonly credit: TokenCredit,
    private readonly batchAnswers: BatchAnswers | undefined,
  ) {
    this.lastEventToken = encoding.cumulative !== undefined ? exchange.stream.resumeToken : undefined;
    this.lastEventTokenCount = this.lastEventToken !== undefined ? exchange.stream.usedBytes : 0;
  }

  /**
   * The count a resume token minted now carries: the request's bytes through the end of the
   * event being dispatched, the earlier tokens' added lengths included (`chargeToken`; 0 on the
   * standalone GET stream), at most the limit (see the stage's `deliver`).
   * An event dispatched at the CR of its blank line, the last byte so far, may end with the
   * LF of a CR LF still to come (SseLineFeeder.lfExpected): that LF is counted.
   */
  private tokenCount(): number {
    const cumulative = this.encoding.cumulative;
    return cumulative ? Math.min(cumulative.used + (this.encoding.lfExpected ? 1 : 0), cumulative.limit) : 0;
  }

  /** A frame was queued for the host on a bounded stream: the host has received {@link tokenCount} ({@link deliveredCount}). */
  noteDelivered(): void {
    this.deliveredCount = this.tokenCount();
  }

  /**
   * The id an event goes out with, its seller id being `id` (undefined: none): the stream's
   * pending id when it has none of its own, as a resume token ({@link hostEventId}); undefined
   * when it goes out without one. `answers`: the event carries the response (the request's, or
   * the last of a batch's).
   */
  eventId(id: string | undefined, answers: boolean): string | undefined {
    // The stream's pending id (`onIdOnly`): an event without an id of its own carries it (on a
    // bounded stream its id line was charged with its id-only block, not in this event's
    // growth); an event with one supersedes it (WHATWG HTML §9.2.6: the last event ID is
    // the latest id field).
    if (this.pendingId !== undefined) {
      id ??= this.pendingId;
      this.pendingId = undefined;
    }
    // A token only within the stream's token budget (sse-token-credit.ts); refused, the id is
    // pending for the next event or the end. The event carrying the response (the request's,
    // or the last of a batch's) gets its token whatever the budget: it ends the stream, and its
    // token says so (a resume from it is answered at once: resume/token.ts `final`).
    if (id !== undefined && id !== '' && !this.credit.available && !answers) {
      this.pendingId = pendingIdFor(id);
      id = undefined;
    }
    if (id !== undefined) id = this.hostEventId(id, 'forwarded without an id', answers);
    return id;
  }

  /** An event went out with `hostId` ({@link eventId}'s); `final`: it carried the response, and the stream ends. */
  eventSent(hostId: string | undefined, final: boolean): void {
    if (hostId !== undefined && hostId !== '') {
      this.exchange.lastEventIdSent = hostId;
      this.lastEventToken = final ? undefined : hostId;
      this.lastEventTokenCount = this.mintedResumeCount;
    }
  }

  /**
   * The id the host gets for the pending id, which the caller checked is set, as the stream
   * ends (`id: <token>` and a blank line: the stage's `writePendingId`), whatever the token
   * budget; the id is no longer pending. Undefined when no token can be made.
   */
  takePendingToken(): string | undefined {
    const out = this.hostEventId(this.pendingId!, 'id-only block dropped');
    this.pendingId = undefined;
    return out;
  }

  /**
   * The id the host gets for a seller's event id (an event's: {@link eventId}; an id-only
   * block's: {@link takePendingToken}): a resume token carrying {@link tokenCount}, an empty id
   * unchanged; undefined, with a warning saying what happens to the event (`what`) and why
   * (sse-id-token-log.ts tokenRefusalCause), when no token can be made (an id a Last-Event-ID
   * header cannot carry back, a token over 4096 characters: routing/handler.ts). `final`: the event carries the response to the request;
   * its token says so, and a resume from it ends at once (resume/token.ts `final`).
   */
  private hostEventId(sellerId: string, what: string, final = false): string | undefined {
    if (sellerId === '') return sellerId;
    const count = this.tokenCount();
    const token = this.exchange.mintEventId(sellerId, count, final, this.batchAnswers?.awaitedKeys());
    if (token === undefined) {
      // Throttled per stream (sse-id-token-log.ts): one line per such id filled the log buffer
      // (a hostile new user's trial 10, F2).
      (this.idTokenLog ??= new SseIdTokenLog(this.exchange, this.log)).notTokenized(what, () => tokenRefusalCause(this.exchange, sellerId === UNTOKENIZABLE_ID ? undefined : sellerId));
      this.hooks.onSseEventIdNotTokenized();
      return token;
    }
    const added = token.length - Buffer.byteLength(sellerId);
    this.tokenLineBytes += TOKEN_ID_LINE_FRAMING + token.length;
    this.mintedResumeCount = count + Math.max(0, added);
    this.credit.spend(added);
    if (this.encoding.cumulative !== undefined && added > 0) this.chargeToken(added);
    return token;
  }

  /**
   * At the stream's end, whatever ended it: the untokenized ids' summary warning
   * (sse-id-token-log.ts), then {@link noteTail}.
   */
  end(): void {
    this.idTokenLog?.end();
    this.noteTail();
  }

  /**
   * When the host got bytes after the last token it got with an event (events and comments
   * without an id, an id-only block's token), notes that token and the count through the last
   * frame the host got ({@link deliveredCount}: not an event the seller cut off), so that a
   * resume from it starts there (resume/tail-ledger.ts; routing/resumed-stream.ts resumedCount). Such
   * bytes are in no token the host resumes from: a seller answering each resume with one small
   * event with an id and ~90 KB without, then a drop, had an SDK host's one call receive 18x
   * `max_response_bytes` over 20 resumes (hostile trial 24, F1:
   * test/regressions/resume-untokenized-bytes-escape-cumulative-bound.test.ts). A bounded
   * stream only (the others count nothing); nothing per event.
   */
  private noteTail(): void {
    if (this.encoding.cumulative === undefined || this.lastEventToken === undefined) return;
    if (this.deliveredCount > this.lastEventTokenCount) this.exchange.resumeTails?.note(this.lastEventToken, this.deliveredCount, this.exchange.agent.name);
  }

  /**
   * Counts what a resume token adds to the host's stream (a bounded stream only): `added`, its
   * length (ASCII) over the UTF-8 length of the seller id it replaces. The cumulative bound protects
   * the host, so it counts the bytes the host receives: a token is ~230-310 characters, and a
   * seller sending id-only blocks (`id: 1` and a blank line, 7 bytes) made the host receive
   * ~32x `max_response_bytes` (14.7x with one-byte data events) while the bound counted the
   * seller's bytes only (reported failure, from a review of the resume tokens:
   * test/regressions/sse-resume-token-amplification.test.ts). Over the bound:
   * `sse_cumulative` (the caller's event is then not delivered: the exchange is finished).
   *
   * `observed_bytes` is the count with the token: through the event (the LF of a CR LF still
   * to come included, as in {@link tokenCount}, so the outcome does not depend on where the
   * seller's chunks are cut), or through the range that crossed the bound when the event was
   * dispatched in it (sse-chunk-taker.ts `take`: its bytes are counted already, and no token fits
   * there). A token's count is taken before its own length is added (a token cannot carry a
   * count that includes itself), so the next token's count includes it, and a resume counts
   * from at most one token's length (≤ 4096 bytes) short. The count and the answer are the
   * encoding charge's (SseEncodingCharge.chargeAdded), as for a frame's growth.
   */
  private chargeToken(added: number): void {
    this.encoding.chargeAdded(added);
  }
}
