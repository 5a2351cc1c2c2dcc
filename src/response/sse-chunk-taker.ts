/**
 * The SSE stage's chunk taking (sse-stage.ts handleSseBody; its module doc holds the bounds,
 * the events' rules and their reported failures): each input chunk of the seller's body is cut
 * into ranges, each counted, then handed to the parser (through the stage's line feeder and
 * id-only watch), forwarded raw, held as bytes, or read as a simple block
 * ({@link SseChunkTaker.takeChunk}).
 *
 * Shapes and units: a chunk is a Buffer of the seller's decoded bytes; a range is
 * `chunk[start, end)`, byte offsets, `end` exclusive; `ends`, `blocks` and a plan's `ends` are
 * ascending offsets just past an event block's blank line (sse-boundaries.ts
 * SseBoundaryScanner.endsIn, blankLineEnds; sse-raw-events.ts RawEventPlan). Counts are bytes,
 * each seller byte counted once wherever it is taken: against a bounded stream's cumulative
 * bound (its ByteBudget, through SseEncodingCharge.takeRange, which makes the range's bytes the
 * room of its block's frames), the token credit (sse-token-credit.ts) and, on a stream without
 * a total, the undelivered count (sse-undelivered.ts). The count is taken per range, so while
 * an event's block is parsed the cumulative count is the exact count through its end (its
 * resume token: sse-event-ids.ts tokenCount). Every `take...` returns false once the stream is
 * over (a bound broke, or the exchange finished).
 *
 * How a chunk is cut (issue 5, bench/README.md "SSE events/s"; the stage's module doc, "Per
 * event" and "Bounds"):
 * - A chunk without CR holding a complete event block (not crossing the cumulative bound, not
 *   skipping) is planned block by block (sse-raw-events.ts, one WebAssembly pass per chunk
 *   window: sse-raw-plan.ts; `takePlanned`): runs of blocks the gateway neither reads nor
 *   changes go to the host as the seller's bytes, unparsed; an id-only or comment-only block
 *   of one ASCII line is read from its bytes (`takeSimple`, sse-simple-block.ts); every other
 *   block is parsed alone.
 * - An event block spanning chunks in the form MCP servers write (`event: message`, one
 *   `data: ` line, the blank line) is held as the seller's bytes and delivered from them at its
 *   blank line (sse-held-block.ts; `passHeld`); one that turns out to have another form goes to
 *   the line feeder as it arrived (`releaseHeld`).
 * - Otherwise the chunk is parsed in one piece (after the block that completes a held line,
 *   the only place where a cap breach can happen before the chunk's last boundary:
 *   test/unit/sse-stage-batching), unless an event in it may carry an id (its resume token
 *   needs the exact count through its end: SseIdFieldWatch), it crosses the cumulative bound,
 *   it holds a CR, the stream is skipping an event over its cap, or the stream has no total
 *   (its undelivered count); then one event block at a time. The block that goes on into the
 *   next chunk is taken alone (`takeRest`).
 * - After a per-event cap breach the rest of that event is dropped unparsed up to the next
 *   event boundary ({@link SseChunkTaker.capBreached}, `take`).
 *
 * Sources: WHATWG HTML §9.2.6 (event blocks end at a blank line; an id-only block dispatches
 * no event); the reported failures named at each step. One object per stream; what it reads
 * goes back to the stage through {@link SseTakerOut}. Allocation: per chunk, the scanners'
 * offset arrays, at most one plan and a few subarrays; per range on a stream without a total,
 * its frame-line offsets; per simple block, the string of its id or comment; no closure but one
 * per range that crosses the undelivered limit (sse-undelivered.ts takeUpToLimit).
 */
import type { EventSourceParser } from 'eventsource-parser';
import type { Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { CR, LF } from '../mcp/json-bytes.js';
import type { ByteBudget } from './byte-budget.js';
import { SseBoundaryScanner, SseIdFieldWatch, blankLineEnds, type SseLineFeeder } from './sse-boundaries.js';
import { encodeSseComment, type SseFrameBatch } from './sse-encode.js';
import type { SseEncodingCharge } from './sse-encoding-charge.js';
import type { SseEventIds } from './sse-event-ids.js';
import { FRAME_LINE_HEAD_BYTES, frameLineEnds } from './sse-frame-lines.js';
import { HELD, NOT_HELD, SseHeldBlock } from './sse-held-block.js';
import type { SseIdOnlyBlocks } from './sse-id-only.js';
import type { RawEventLimits } from './sse-raw-events.js';
import { planRawEventsFast } from './sse-raw-plan.js';
import { ID_ONLY, NOT_SIMPLE, simpleBlock, simpleValueStart, type SimpleBlockKind } from './sse-simple-block.js';
import type { TokenCredit } from './sse-token-credit.js';
import type { UndeliveredBytes } from './sse-undelivered.js';

/** The blank line that ends a raw (LF-only) event block (sse-raw-events.ts). */
const LF_LF = Buffer.from('\n\n', 'latin1');

/**
 * What the taker hands back to the stage (sse-stage.ts), one object per stream. Properties, not
 * methods: each is the stage's own function, called unbound.
 */
export interface SseTakerOut {
  /** An event held as bytes is complete (sse-held-block.ts): its type and data (UTF-8) go to the stage's `deliver`. */
  readonly heldEvent: (event: string | undefined, data: Buffer) => void;
  /** An id-only block read from its bytes (`takeSimple`): the stage's `onIdOnly`, as the id-only watch calls it. */
  readonly idOnly: (id: string) => void;
  /** A comment frame read from its bytes (`takeSimple`), `outBytes` its length: the stage's `sendEncodedFrame`. */
  readonly encodedFrame: (frame: string, outBytes: number) => void;
  /** A raw run of `bytes` seller bytes was queued for the host: the stage's `framed`. */
  readonly framed: (bytes: number) => void;
  /** A breach (`sse_event`; `sse_cumulative`, on a bounded stream only): the stage's `fail`. */
  readonly fail: (input: LocalErrorInput) => void;
  /** A stream without a total reached its undelivered limit (sse-undelivered.ts): the stage's `endUndelivered`. */
  readonly endUndelivered: () => void;
  /**
   * When true for a planned chunk (one without CR holding a complete event block), none of its
   * blocks is forwarded raw (its events reach the stage's `deliver`): the stage's seller requests
   * awaited in its session and the chunk holds a seller's `notifications/cancelled` (which the
   * raw plan forwards unread), so that it is read (routing/host-answer-waits.ts). Asked once
   * per planned chunk.
   */
  readonly readAll?: (chunk: Buffer) => boolean;
}

export class SseChunkTaker {
  /** True from a per-event cap breach (an endless line) to the next event boundary (see `take`). */
  private skipping = false;
  /**
   * A bounded stream's last chunk ended with a CR that took its count to the limit exactly,
   * not yet parsed: the LF of a CR LF after it would be the byte past the limit, and the
   * event whose blank line it ends would then not be delivered (`takeCounted`, `takeChunk`,
   * {@link releaseCrAtLimit}).
   */
  private heldCr = false;
  /** The range that ended with the held CR ended its blocks (`take`'s `blockEnd`): they end once it is parsed. */
  private heldCrEndsBlock = false;
  /** The bytes so far are whole event blocks: the parser and the line feeder hold nothing. */
  private atEventStart = true;
  /** An event block spanning chunks, held as bytes while it is in the form MCP servers write (sse-held-block.ts). */
  private readonly held: SseHeldBlock;
  private readonly boundaries = new SseBoundaryScanner();
  private readonly idFields = new SseIdFieldWatch();
  /** The raw plan's limits, made once per stream. */
  private readonly rawLimits: RawEventLimits;
  private readonly perEventLimit: number;

  /**
   * @param exchange    the stream's exchange (`finished`; its limits)
   * @param judged      events' data may be judged as responses on this stream (the stage's
   *                    `judged`): blocks that may hold an `"id`, a response's key or no method are
   *                    parsed, never forwarded raw (sse-raw-events.ts RawEventLimits)
   * @param cumulative  a bounded stream's count against `max_response_bytes` (else undefined)
   * @param undelivered a stream without a total: its undelivered count (else undefined)
   * @param credit      the stream's token budget, which earns every seller byte taken
   * @param encoding    the stream's encoding charge (counts a range, a simple block; a block's room)
   * @param lines       the stream's line feeder, which the parsed ranges are pushed to
   * @param idOnly      the stream's id-only watch, between the feeder and the parser
   * @param parser      the stream's parser, reset after a skipped event
   * @param ids         the stream's event ids (a pending id makes a raw run's first event parsed)
   * @param batch       the frames queued for the host in this chunk (raw runs)
   * @param out         what goes back to the stage
   */
  constructor(
    private readonly exchange: Exchange,
    judged: boolean,
    private readonly cumulative: ByteBudget | undefined,
    private readonly undelivered: UndeliveredBytes | undefined,
    private readonly credit: TokenCredit,
    private readonly encoding: SseEncodingCharge,
    private readonly lines: SseLineFeeder,
    private readonly idOnly: SseIdOnlyBlocks,
    private readonly parser: EventSourceParser,
    private readonly ids: SseEventIds,
    private readonly batch: SseFrameBatch,
    private readonly out: SseTakerOut,
  ) {
    const limits = exchange.limits;
    this.perEventLimit = limits.max_sse_event_bytes;
    this.held = new SseHeldBlock(lines.maxLineBytes);
    this.rawLimits = {
      maxEventBytes: this.perEventLimit,
      maxDepth: limits.max_json_depth,
      maxNodes: limits.max_json_nodes,
      answerable: judged,
      responseKeys: judged,
      methodNamed: judged,
    };
  }

  /** True from a per-event cap breach to the next event boundary: the parser gets nothing meanwhile, and holds none of the event. */
  get skippingToBoundary(): boolean {
    return this.skipping;
  }

  /** Bytes of the event block held as bytes (sse-held-block.ts), 0 when none (what the stream holds: its lease). */
  get heldBytes(): number {
    return this.held.bytes;
  }

  /**
   * The per-event cap (`max_sse_event_bytes` + sse-stage.ts SSE_PENDING_SLACK_BYTES) broke before
   * the event ended (the parser's buffer: the stage's `onError`; a line over the feeder's cap:
   * `feederBreached`). `observedBytes`, the bytes of the line that broke it as read so far, its
   * field name included, its line break not: for a line still incomplete over the line
   * feeder's cap, through the end of the range that crossed (SseLineFeeder.droppedLineBytes);
   * for the data of an event over the parser's buffer (eventsource-parser counts UTF-16
   * units, and clears its buffer before it reports), the data line just handed over when the
   * feeder held it across chunks (`takeCompletedLine`), and never less than the cap plus one
   * (the least that data holds in bytes; all that is known when its lines came whole in one
   * chunk). Before, the count stopped at the cap plus one, whatever had been read
   * (test/regressions/sse-event-cap-observed-bytes.test.ts).
   */
  capBreached(observedBytes: number): void {
    this.breached({ reason: 'sse_event', limitBytes: this.perEventLimit, observedBytes });
  }

  /**
   * A breach of the event being read (`sse_event`, `sse_event_memory`): a bounded stream ends
   * here (fail answers the request, or id null); the standalone GET stream drops the rest of
   * this event and is reset at the next event boundary (see `take`).
   */
  private breached(input: LocalErrorInput): void {
    if (this.skipping || this.exchange.finished) return;
    this.skipping = true;
    this.out.fail(input);
  }

  /**
   * The line feeder refused what it was pushed (`lines.push` returned false: SseLineFeeder.breach):
   * a line over its cap (`sse_event`, {@link capBreached}), or a part of the open event that
   * would take what the parser holds for it over the feeder's bound (`sse_event_memory`:
   * limit SseLineFeeder.maxOpenBytes, observed the count with that part; hostile trial 52, F1).
   * The data lines the parser joined before it are dropped now, with their event, not at the
   * next boundary: while skipping, the stream holds nothing (its lease counts nothing: the
   * stage's read loop).
   */
  private feederBreached(): void {
    const { lines } = this;
    if (lines.breach === 'memory') this.breached({ reason: 'sse_event_memory', limitBytes: lines.maxOpenBytes, observedBytes: lines.droppedOpenBytes });
    else this.capBreached(lines.droppedLineBytes);
    this.restartParser();
  }

  /** The parser reset, then fed an empty text, as the stage starts it (sse-stage.ts: a BOM's bytes are then not dropped). */
  private restartParser(): void {
    this.parser.reset();
    this.parser.feed('');
  }

  /** `n` seller bytes taken, each byte once wherever it is taken: the token credit's earnings and the undelivered count. */
  private earn(n: number): void {
    this.credit.earn(n);
    this.undelivered?.take(n);
  }

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
   * test/regressions/get-stream-oversized-event.test.ts), a blank line ended by a CR alone
   * included (`takeBlocks`). Skipping is decoding too, with nothing sent to slow the seller: on a stream without a total the
   * skipped bytes count as undelivered (sse-undelivered.ts), so an event still going
   * `max_response_bytes` + the per-event cap past the last byte delivered ends the stream (hostile trial 32, L1:
   * `gzip, gzip` made 6,392 bytes decode to 536,870,920 while skipped; trial 37, F1: many such
   * events, each ending within that allowance, were decoded for nothing without end). A
   * bounded stream never gets here skipping (its breach answered it).
   */
  private take(chunk: Buffer, start: number, end: number, atBoundary: boolean, blockEnd = atBoundary): boolean {
    if (this.undelivered !== undefined && !this.skipping) {
      // A stream without a total: a piece ends at each comment or `retry:` line's end, so that
      // its frame lowers the undelivered count by the bytes through its own line only, not by
      // those after it in the range (sse-frame-lines.ts; review of e72ea9d: whole, a block's
      // bytes after a comment line were forgiven, cut after that line they were not).
      for (const cut of frameLineEnds(chunk, start, end, this.lines.heldHead(FRAME_LINE_HEAD_BYTES))) {
        if (cut === end) break;
        if (!this.takeCounted(chunk, start, cut, false, false)) return false;
        start = cut;
      }
      // A range ending with CR LF (an event's blank line, dispatched at its CR): the LF is
      // counted after the frame, as when the seller's bytes are cut between them (and as a
      // comment's: frameLineEnds). Before, whole, the event's frame forgave it with the block
      // (test/regressions/get-stream-crlf-blank-line-lf-undelivered-chunks.test.ts).
      if (end - start > 1 && chunk[end - 1] === LF && chunk[end - 2] === CR) {
        if (!this.takeCounted(chunk, start, end - 1, false, false)) return false;
        start = end - 1;
      }
    }
    return this.takeCounted(chunk, start, end, atBoundary, blockEnd);
  }

  /** `take` for a range that holds no comment or `retry:` line's end before its own end, on a stream without a total. */
  private takeCounted(chunk: Buffer, start: number, end: number, atBoundary: boolean, blockEnd: boolean): boolean {
    const { undelivered, cumulative, lines } = this;
    // A range that would take the undelivered count past its limit: taken up to the limit point (sse-undelivered.ts).
    if (undelivered !== undefined && end - start > undelivered.room) {
      return undelivered.takeUpToLimit(start, end, (from, to, last) => this.takeCounted(chunk, from, to, last && atBoundary, last && blockEnd), this.out.endUndelivered);
    }
    this.earn(end - start);
    /** Where the bytes parsed end: `end`, or before a CR at the limit point (`heldCr`). */
    let to = end;
    if (cumulative) {
      // Counted with the LF a frame was matched against, or that ended the last block (sse-encoding-charge.ts).
      const fit = this.encoding.takeRange(chunk, start, end);
      if (fit < end - start) {
        // Events complete before the limit point are still delivered; nothing past it is parsed,
        // nor what it completes: a CR there whose LF is past it.
        to = start + fit;
        if (fit > 0 && chunk[to - 1] === CR && chunk[to] === LF) to--;
        if (to > start && !this.skipping && !lines.push(chunk, start, to)) this.feederBreached();
        // `fail` answers on a bounded stream, the only one with a cumulative count.
        this.out.fail({ reason: 'sse_cumulative', limitBytes: cumulative.limit, observedBytes: cumulative.used });
        return false;
      }
      // The range ends at the limit with a CR: parsed once the next byte shows that no LF
      // completes it past the limit (`releaseCrAtLimit`), or never.
      if (cumulative.used === cumulative.limit && chunk[end - 1] === CR && (end === chunk.length || chunk[end] === LF)) {
        to = end - 1;
        this.heldCr = end === chunk.length;
      }
    }
    if (!this.skipping && !lines.push(chunk, start, to)) this.feederBreached();
    // The range's blocks are all written: the next block's growth is its own (sse-encoding-charge.ts);
    // with a CR held, once it is parsed (its block's frame is matched against the range's bytes).
    if (this.heldCr) this.heldCrEndsBlock = blockEnd;
    else if (blockEnd) this.encoding.blocksEnded(chunk, end);
    // Skipping (from before, or from a breach while completing the held line in this range):
    // the dropped event ends at this boundary.
    if (this.skipping && atBoundary) {
      this.restartParser();
      lines.reset();
      this.idOnly.reset();
      this.skipping = false;
    }
    return !this.exchange.finished;
  }

  /**
   * Takes one input chunk; false once the stream is over.
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
  takeChunk(chunk: Buffer): boolean {
    const { cumulative, undelivered, held, boundaries, lines } = this;
    const n = chunk.length;
    // The CR the last chunk ended with at the limit (`takeCounted`): an LF now is past the
    // limit with it (its line never ends: nothing of it is parsed); any other byte ends its
    // line at that CR, within the limit. Either way this chunk crosses the bound.
    if (this.heldCr && n > 0) {
      if (chunk[0] === LF) this.heldCr = false;
      else if (this.releaseCrAtLimit() && this.exchange.finished) return false;
    }
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
        this.passHeld(chunk);
        return true;
      }
      const ev = end === NOT_HELD ? undefined : held.complete(chunk, end);
      if (ev === undefined) {
        // Not in the held form after all: the feeder takes the held bytes as if they came now
        // (they are within its cap: the held block's bound is the same).
        this.releaseHeld();
      } else {
        // The rest starts at an event start (blank lines there: see leadingLfs).
        this.passHeld(end === n ? chunk : chunk.subarray(0, end));
        this.atEventStart = true;
        lines.passedRaw();
        this.out.heldEvent(ev.event, ev.data);
        this.encoding.clearRoom();
        return !this.exchange.finished && (end === n || this.takeChunk(chunk.subarray(end)));
      }
    }
    lines.nextChunk();
    const last = boundaries.lastEnd(chunk);
    // The event that starts after the chunk's last boundary and goes on past it, in the form
    // held as bytes (sse-held-block.ts): the chunk up to that start is taken alone.
    const tail = last !== -1 ? last : this.atEventStart ? 0 : -1;
    const valueAt = tail !== -1 && tail < n && !this.skipping && holdable ? held.valueOffset(chunk, tail) : -1;
    if (valueAt !== -1) {
      if (tail > 0 && !this.takeChunk(chunk.subarray(0, tail))) return false;
      const rest = tail === 0 ? chunk : chunk.subarray(tail);
      // The resume tokens of the blocks before it may have taken the room (chargeToken): the
      // rest then crosses the bound (`take` answers; it completes no event).
      if (cumulative !== undefined && cumulative.used + rest.length > cumulative.limit) return this.take(rest, 0, rest.length, false);
      held.begin(rest, valueAt);
      this.passHeld(rest);
      this.atEventStart = false;
      return true;
    }
    const fromEventStart = this.atEventStart;
    this.atEventStart = last === n;
    // Every block parsed (the stage's `readAll`: a cancellation in it may end a wait): taken one
    // block at a time below, as a planned chunk's blocks are, so that the count (each block's
    // encoding charge, the resume tokens, the cumulative bound) is the same whether or not it
    // is read (review of trial 57 F3's fix: test/regressions/sse-read-all-changes-byte-count.test.ts).
    const readAll = last !== -1 && !this.skipping && !crossing && this.out.readAll?.(chunk) === true;
    if (last !== -1 && !this.skipping && !crossing && chunk.indexOf(CR) === -1 && !readAll) {
      // Blank lines at an event start dispatch nothing; the planner, which stops at a lone LF
      // at a chunk's start, begins after them (else an id event after them was parsed with the
      // rest of the chunk, its token counted through the chunk's end: review of 6e630d2).
      const from = fromEventStart ? leadingLfs(chunk) : boundaries.firstEnd(chunk);
      boundaries.advance(chunk);
      this.idFields.pass(chunk, last);
      return this.takePlanned(chunk, from, last);
    }
    const withIds = this.idFields.check(chunk, last);
    // A chunk with a CR is taken block by block, blank lines ended by a CR alone included (the
    // boundary scanner leaves them out): on a request's stream so that each block's growth is
    // counted against its own bytes (`encoding.charge`), on a stream without a total so that a
    // frame clears only its own block from the undelivered count (sse-undelivered.ts; a
    // CR-only stream's chunk was one piece: a comment at its start cleared it all), and a
    // skipped event ends at any of them (`takeBlocks`). A stream without a total takes every
    // chunk block by block, for that count.
    if (chunk.indexOf(CR) !== -1) {
      const blocks = blankLineEnds(chunk, ...boundaries.lastBytes);
      boundaries.advance(chunk);
      return this.takeBlocks(chunk, blocks);
    }
    const ends =
      withIds || this.skipping || crossing || undelivered !== undefined || readAll
        ? boundaries.endsIn(chunk)
        : lines.pendingBytes > 0 && last !== -1
          ? [boundaries.firstEnd(chunk)]
          : [];
    boundaries.advance(chunk);
    let start = 0;
    for (const end of ends) {
      if (!this.take(chunk, start, end, true)) return false;
      start = end;
    }
    return this.takeRest(chunk, start, last);
  }

  /**
   * Counts bytes that went to the held block (they never cross the cumulative bound or the
   * undelivered limit: a chunk that would, or whose held tail would once the resume tokens
   * before it are counted, is given to the feeder instead) and moves the scanners past them.
   */
  private passHeld(bytes: Buffer): void {
    this.cumulative?.take(bytes.length);
    this.earn(bytes.length);
    this.encoding.addRoom(bytes.length);
    this.boundaries.advance(bytes);
    this.idFields.passWithoutId(bytes);
  }

  /**
   * Hands the parser the CR held back at the cumulative bound (`heldCr`), when there is one;
   * true when it did. For the stage (sse-stage.ts) when the seller's next byte will not be
   * read: its end, a reset, a timeout, the gateway's shutdown. No LF came, so the CR ends its
   * line (an event's blank line: the event is dispatched), as on a CR-only stream.
   */
  releaseCrAtLimit(): boolean {
    if (!this.heldCr) return false;
    this.heldCr = false;
    if (!this.skipping && !this.lines.push(CR_BYTE, 0, 1)) this.feederBreached();
    if (this.heldCrEndsBlock) this.encoding.blocksEnded(CR_BYTE, 1);
    return true;
  }

  /**
   * The held bytes to the line feeder, in order, as if they had just arrived (a block not in
   * the held form; the seller's end). They are one event block without its blank line: past a
   * breach (`feederBreached`) the rest of them is skipped with it.
   */
  releaseHeld(): void {
    for (const piece of this.held.release()) if (!this.skipping && !this.lines.push(piece, 0, piece.length)) this.feederBreached();
  }

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
  private takePlanned(chunk: Buffer, from: number, last: number): boolean {
    const { cumulative, undelivered } = this;
    if (from > 0 && !this.take(chunk, 0, from, true)) return false;
    // Blocks that may hold a response's key are parsed (rawLimits.responseKeys).
    const plan = planRawEventsFast(chunk, from, this.rawLimits);
    let segmentStart = from;
    let simple: SimpleBlockKind;
    /** The next run sent to the parser for its invalid UTF-8 (an index into `plan.invalidUtf8Runs`). */
    let invalidRun = 0;
    for (let k = 0; k < plan.ends.length; k++) {
      const end = plan.ends[k]!;
      if (plan.raw[k]) {
        // The run's first event carries the stream's pending id (the stage's `deliver`): it is parsed.
        if (this.ids.pendingId !== undefined) {
          const first = chunk.indexOf(LF_LF, segmentStart) + 2;
          if (!this.take(chunk, segmentStart, first, true)) return false;
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
          if (!this.take(chunk, segmentStart, end, true)) return false;
        } else {
          cumulative?.take(bytes);
          this.earn(bytes);
          this.batch.raw(chunk, segmentStart, end);
          this.out.framed(bytes);
          this.lines.passedRaw();
        }
      } else if (plan.invalidUtf8Runs?.[invalidRun] === k) {
        invalidRun++;
        if (!(undelivered === undefined ? this.take(chunk, segmentStart, end, true) : this.takeRunBlocks(chunk, segmentStart, end))) return false;
      } else if ((simple = simpleBlock(chunk, segmentStart, end)) !== NOT_SIMPLE && this.takeSimpleReady(end - segmentStart)) {
        // An id-only or comment-only block of one ASCII line (sse-simple-block.ts), read here
        // (`takeSimple`), on every stream (the standalone GET stream took comments with the
        // parsed blocks around them, before it took them one at a time).
        if (!this.takeSimple(chunk, segmentStart, end, simple)) return false;
      } else if (!this.take(chunk, segmentStart, end, true)) return false;
      segmentStart = end;
    }
    return this.takeRest(chunk, segmentStart, last);
  }

  /**
   * `take` for the run of canonical blocks `chunk[start, end)` that the plan sent to the parser
   * for its invalid UTF-8 (sse-raw-events.ts RawEventPlan.invalidUtf8Runs), on a stream without
   * a total: one block at a time, each ending at its blank line (LF LF: a canonical block has
   * no other), so that each event's frame lowers the undelivered count by the bytes through
   * its own block only, as when the run arrives cut (takePlanned). Cost: one native search per
   * block of such a run; nothing for any other segment.
   */
  private takeRunBlocks(chunk: Buffer, start: number, end: number): boolean {
    while (start < end) {
      const blank = chunk.indexOf(LF_LF, start);
      const blockEnd = blank === -1 || blank + 2 > end ? end : blank + 2;
      if (!this.take(chunk, start, blockEnd, true)) return false;
      start = blockEnd;
    }
    return true;
  }

  /**
   * Whether {@link takeSimple} may take a planned block of `bytes` now: the parser, the line
   * feeder and the id-only watch hold nothing of an open block (true at every planned block's
   * start, as the raw path assumes; checked all the same), and the block does not cross the
   * cumulative bound or the undelivered limit (a crossing range is `take`'s: its count and its
   * answer, or its end: sse-undelivered.ts).
   */
  private takeSimpleReady(bytes: number): boolean {
    return (
      !this.skipping &&
      !this.exchange.finished &&
      this.lines.atBlockStart &&
      this.idOnly.atBlockStart &&
      (this.cumulative === undefined ? bytes <= this.undelivered!.room : this.encoding.fitsSimpleBlock(bytes))
    );
  }

  /**
   * `take` for a planned block `chunk[start, end)` of {@link simpleBlock}'s `kind` (an id-only
   * or comment-only block of one ASCII line, LF line endings) when {@link takeSimpleReady}:
   * the same counts, frames and state, from its bytes, without decoding them or feeding the
   * parser (sse-simple-block.ts; issue 5, a hostile trial's floods of such blocks). What `take`
   * does with such a block, step by step: the credit and the count (its first byte is no LF:
   * nothing paid, a pending `lfDebt` charged), the feeder's state after its text
   * (SseLineFeeder.passedBlock), then what the parser's pass would call: the stage's `onIdOnly`
   * with the id (sse-id-only.ts idValue), or `onComment`'s frame with the comment's text; then
   * the block's end (its room cleared; it ends with LF).
   */
  private takeSimple(chunk: Buffer, start: number, end: number, kind: SimpleBlockKind): boolean {
    const bytes = end - start;
    // A comment's frame lowers the undelivered count through its line; the blank line counts after it (as `take`'s pieces).
    const afterFrame = kind === ID_ONLY || this.undelivered === undefined ? 0 : 1;
    this.earn(bytes - afterFrame);
    if (this.cumulative !== undefined) this.encoding.takeSimpleBlock(bytes);
    this.lines.passedBlock(start);
    const value = simpleValueStart(chunk, start, end, kind);
    if (kind === ID_ONLY) this.out.idOnly(chunk.toString('latin1', value, end - 2));
    else if (!this.exchange.finished) {
      // encodeSseComment of the text: the seller's line and its LF when written so (`: text`, or `:` alone).
      const canonical = value === end - 2 ? value === start + 1 : value === start + 2;
      const frame = canonical ? chunk.toString('latin1', start, end - 1) : encodeSseComment(chunk.toString('latin1', value, end - 2));
      this.out.encodedFrame(frame, frame.length);
    }
    this.earn(afterFrame);
    this.encoding.clearRoom();
    return !this.exchange.finished;
  }

  /**
   * Takes `chunk` in pieces ending at each of `blocks` (blankLineEnds, ascending: a superset of
   * SseBoundaryScanner.endsIn), then its rest. Each piece ends at an event boundary, a blank
   * line ended by a CR alone included, where a skip ends (`take`). Reported failure (review 33,
   * item 2): only the boundaries the LF scanner sees ended a skip, so on a CR-only stream the
   * events after one over its cap were all skipped, until `sse_undelivered` ended the stream
   * (test/regressions/sse-cr-only-over-cap-event-silences-stream.test.ts).
   */
  private takeBlocks(chunk: Buffer, blocks: number[]): boolean {
    let start = 0;
    for (const end of blocks) {
      if (!this.take(chunk, start, end, true)) return false;
      start = end;
    }
    return start < chunk.length ? this.take(chunk, start, chunk.length, false) : true;
  }

  /**
   * Takes `chunk[start, n)`, where `last` is the chunk's last event boundary (-1: none): the
   * complete blocks, then the block that goes on in the next chunk on its own, so that its
   * bytes are its own room (`encoding.charge`) and not those of the blocks before it.
   */
  private takeRest(chunk: Buffer, start: number, last: number): boolean {
    const n = chunk.length;
    if (start >= n) return true;
    if (last > start && last < n && !this.take(chunk, start, last, true)) return false;
    return last > start && last < n ? this.take(chunk, last, n, false) : this.take(chunk, start, n, last === n);
  }
}

/** A CR alone, the one {@link SseChunkTaker.releaseCrAtLimit} hands the parser. */
const CR_BYTE = Buffer.from([CR]);

/** The number of LF bytes at the start of `chunk`. */
function leadingLfs(chunk: Buffer): number {
  let k = 0;
  while (k < chunk.length && chunk[k] === LF) k++;
  return k;
}
