/**
 * What the SSE stage's re-encoding adds to a bounded stream's count (sse-stage.ts; its module
 * doc, Bounds, "cumulative"): every frame the gateway encodes itself (a parsed event, an
 * id-only block's id line, a comment, a `retry:` line) is charged against the seller's bytes
 * of its own block ({@link SseEncodingCharge.room}), and only what it adds over them counts
 * against `max_response_bytes` (`sse_cumulative` past it); raw-forwarded and held blocks go
 * out as the seller's bytes and cost nothing more. What a resume token adds (sse-event-ids.ts
 * `chargeToken`) is counted and answered here too ({@link SseEncodingCharge.chargeAdded});
 * `tokenCount` there is the count a token carries.
 *
 * Units: bytes (UTF-8, as the host receives them). The LF of a CR LF still to come is counted
 * where the tokens count it (`lfDebt`, `endedBlockLf`), so that the counts do not depend on
 * where the seller's chunks are cut. One object per stream (on a stream without a cumulative
 * bound nothing is charged: {@link SseEncodingCharge.charge} returns true); per frame, a
 * subtraction and a comparison; per range taken, a few field updates.
 */
import type { LocalErrorInput } from '../errors/local-reply.js';
import { CR, LF } from '../mcp/json-bytes.js';
import type { ByteBudget } from './byte-budget.js';
import type { SseLineFeeder } from './sse-boundaries.js';

export class SseEncodingCharge {
  /**
   * Seller bytes of the event block being parsed (all of the piece sse-chunk-taker.ts `take`
   * handed the parser, or held: `passHeld`) that the frames written for it have not yet
   * matched; set to 0 when a piece ends at an event boundary (a block's slack never pays for
   * the next block's growth, in the pieces the stage takes one block at a time). Written here
   * only: {@link addRoom}, {@link clearRoom} and the counts below.
   */
  private room = 0;
  /**
   * A frame was matched against the LF of a CR LF still to come ({@link charge}): the next
   * range's first byte pays it when it is that LF (it is then no room for the next block);
   * otherwise (a CR-only stream) the byte is charged then (`take`), as `tokenCount` counted it.
   */
  private lfDebt = false;
  /**
   * The last range ended a block at the CR of its blank line, the LF of a CR LF maybe still to
   * come: when the next range starts with it, that LF is the ended block's byte (its slack, as
   * `tokenCount` counted it), no room for the next block's growth. Reported failure (found
   * when growing `retry:` frames made the fuzz of test/unit/sse-token-fuzz.test.ts hit it):
   * after `: c\r\r`, the LF of that CR LF arriving at the start of a chunk with no event
   * boundary was taken as room for the next block, whose growth (`id:B` goes out as `id: B`)
   * was charged a byte short, its token's count 12 for the model's 13
   * (test/unit/sse-token-model-cuts.test.ts).
   */
  private endedBlockLf = false;

  /**
   * `cumulative`: the bounded stream's count (undefined on a stream without one: nothing is
   * charged); `lines`: the stream's line feeder (`lfExpected`); `answer`: the stage's error
   * answer (`sse_cumulative`).
   */
  constructor(
    readonly cumulative: ByteBudget | undefined,
    private readonly lines: SseLineFeeder,
    private readonly answer: (input: LocalErrorInput) => void,
  ) {}

  /** The LF of a CR LF may still come after the last byte taken (SseLineFeeder.lfExpected: the tokens count it). */
  get lfExpected(): boolean {
    return this.lines.lfExpected;
  }

  /**
   * Counts what a frame the gateway encodes adds to the host's stream over the seller's bytes
   * it came from (a bounded stream only): `outBytes`, the frame's UTF-8 length as written
   * with the seller's event id in place of its token (sse-encoded-size.ts; the token's own
   * addition is `chargeToken`'s), over the {@link room} left, the LF of a CR LF still to come
   * included (as `tokenCount` counts it). Only what goes over is charged; false when that
   * takes the stream over the bound: the request is answered `sse_cumulative` and the caller
   * does not write the frame. `observed_bytes` is the count with it, as in `chargeToken`
   * (through the range that crossed the bound when the frame's block was parsed there).
   *
   * Why: the encoder normalizes the framing (`data:x` goes out as `data: x`, `id:`, `event:`,
   * a comment `:x` the same; a `retry:` line becomes its own block, its value clamped to
   * [SSE_RETRY_MIN_MS, the exchange's sseRetryMaxMs] (`retry: 1` goes out as `retry: 500`); the stream's
   * last event gets its blank line; invalid UTF-8 becomes U+FFFD, three bytes), and the bound,
   * counting the seller's bytes, did not see it: 922 seller bytes with the limit at 922
   * reached the host as 943; `data:` lines of one character went 16.7% past the bound, bare
   * `data` lines 40% (reported failure: test/regressions/sse-reencoding-past-limit.test.ts).
   *
   * Events and id-only blocks are charged before their token is minted (the token's count
   * includes its block's growth); comments and `retry:` frames as they are parsed, against the
   * block's bytes received so far. Cost: a subtraction and a comparison per frame, from
   * lengths at hand (the data's line count is passed on to the encoder, which then does not
   * search again).
   */
  charge(outBytes: number): boolean {
    const budget = this.cumulative;
    if (budget === undefined) return true;
    const pending = this.lines.lfExpected && !this.lfDebt;
    const added = outBytes - this.room - (pending ? 1 : 0);
    if (outBytes > this.room && pending) this.lfDebt = true;
    if (added <= 0) {
      this.room = Math.max(0, this.room - outBytes);
      return true;
    }
    this.room = 0;
    return this.chargeAdded(added, pending);
  }

  /**
   * Counts `added` (> 0) bytes the gateway adds to a bounded stream's host stream over the
   * seller's: what a frame adds over its room ({@link charge}), or a resume token's length over
   * the seller id it replaces (sse-event-ids.ts `chargeToken`). False when that takes the
   * stream over the bound: the request is answered `sse_cumulative` (the caller's frame or
   * event is then not written). `observed_bytes` is the count with `added`, and with the LF of
   * a CR LF still to come when `lfToCome` (by default {@link lfExpected}, as `tokenCount`
   * counts it; {@link charge} passes false once an earlier frame was matched against that LF),
   * unless the count is over the bound already (through the range that crossed it).
   */
  chargeAdded(added: number, lfToCome = this.lines.lfExpected): boolean {
    const budget = this.cumulative!;
    const through = budget.used + (lfToCome && !budget.exceeded ? 1 : 0) + added;
    budget.take(added);
    if (through <= budget.limit) return true;
    this.answer({ reason: 'sse_cumulative', limitBytes: budget.limit, observedBytes: through });
    return false;
  }

  /**
   * Counts the range `chunk[start, end)` the stage takes (sse-chunk-taker.ts `takeCounted`; a bounded
   * stream only): the LF a frame was matched against (`lfDebt`) pays it, or, not come, is
   * charged now; the LF of an ended block's CR LF (`endedBlockLf`) is no room either. The
   * range's bytes that fit under the bound are {@link room} for its block's frames. Returns how
   * many of its bytes fit (fewer than the range's: it crossed the bound).
   */
  takeRange(chunk: Buffer, start: number, end: number): number {
    const lfFirst = chunk[start] === LF;
    const debt = this.lfDebt && !lfFirst ? 1 : 0;
    const paid = (this.lfDebt || this.endedBlockLf) && lfFirst ? 1 : 0;
    this.lfDebt = false;
    this.endedBlockLf = false;
    const fit = Math.max(0, this.cumulative!.take(end - start + debt) - debt);
    this.room += Math.max(0, fit - paid);
    return fit;
  }

  /**
   * A range ending at `chunk[end - 1]` ended its blocks: the next block's growth is its own
   * (no {@link room} left), and a CR there may be followed by its LF (`endedBlockLf`).
   */
  blocksEnded(chunk: Buffer, end: number): void {
    this.room = 0;
    this.endedBlockLf = this.cumulative !== undefined && chunk[end - 1] === CR;
  }

  /**
   * `bytes` of the block being read went to the held block (sse-held-block.ts; sse-chunk-taker.ts
   * `passHeld`): counted by the caller, they are room for its frame, as a range's are.
   */
  addRoom(bytes: number): void {
    this.room += bytes;
  }

  /**
   * The block being read ended with its frame written (an event held as bytes delivered, a
   * simple block taken: sse-chunk-taker.ts): its slack is no room for the next block's growth.
   * Unlike {@link blocksEnded}, the LF watch (`endedBlockLf`) is left as it is.
   */
  clearRoom(): void {
    this.room = 0;
  }

  /** A planned block of one ASCII line and `bytes` fits under the bound, a pending LF debt included (sse-chunk-taker.ts takeSimpleReady). */
  fitsSimpleBlock(bytes: number): boolean {
    const cumulative = this.cumulative!;
    return bytes + (this.lfDebt ? 1 : 0) <= cumulative.limit - cumulative.used;
  }

  /**
   * Counts a planned block of one ASCII line and `bytes`, LF line endings (sse-chunk-taker.ts
   * takeSimple; a bounded stream only), as {@link takeRange} would: its first byte is no LF,
   * so nothing is paid and a pending LF debt is charged; its bytes are its frame's room.
   */
  takeSimpleBlock(bytes: number): void {
    this.cumulative!.take(bytes + (this.lfDebt ? 1 : 0));
    this.lfDebt = false;
    this.endedBlockLf = false;
    this.room += bytes;
  }

  /**
   * At the seller's end, the LF a frame was matched against (`lfDebt`) will not come: it is
   * charged now, as the next range would have (sse-stage.ts `writePendingId`), so the count
   * is not a byte short.
   */
  settleAtEnd(): void {
    if (this.lfDebt && this.cumulative !== undefined) {
      this.lfDebt = false;
      this.cumulative.take(1);
    }
  }
}
