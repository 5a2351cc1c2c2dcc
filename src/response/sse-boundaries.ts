/**
 * Raw-byte helpers of the SSE stage (sse-stage.ts), all working on the seller's decoded body
 * bytes as they arrive, before any text decoding:
 *
 * - {@link SseBoundaryScanner}: where event blocks end (blank lines), across chunk edges.
 * - {@link SseIdFieldWatch}: whether an event that ends in a chunk may carry an `id:` field
 *   (only such events need the exact byte count through their end: their resume token).
 * - {@link SseLineFeeder}: hands complete lines to the parser as text and holds the
 *   incomplete last line as raw bytes, capped.
 *
 * Line endings (WHATWG HTML §9.2.6): LF, CR LF, or CR alone.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { UTF8_BOM } from '../mcp/utf8-bom.js';
import { SseOpenEventData } from './sse-open-event.js';

const LF = 0x0a;
const CR = 0x0d;
const LOWER_I = 0x69;
const LOWER_D = 0x64;
const COLON = 0x3a;
/** The bytes every event-id line starts with (`id:`; a bare `id` line sets the empty id, which needs no token). */
const ID_FIELD = Buffer.from('id:', 'latin1');
/** An id line after a line break: searched from the line break, a byte rarer than `i` (memchr). */
const LF_ID_FIELD = Buffer.from('\nid:', 'latin1');
const CR_ID_FIELD = Buffer.from('\rid:', 'latin1');
/** UTF-8 byte order mark length (EF BB BF). */
const BOM_BYTES = UTF8_BOM.length;

/**
 * Finds SSE event boundaries (blank lines) in raw bytes as they arrive, across chunk edges,
 * so the SSE stage can feed the parser one event block at a time and know the exact byte
 * count through the end of each event. That count is what a resume token carries: after a
 * `Last-Event-ID` reconnect the seller replays only the events after that id, so counting
 * through the event's blank line neither loses nor double-counts a byte.
 *
 * A blank line is LF LF or LF CR LF (WHATWG HTML §9.2.6 line endings). CR-only line endings
 * are valid SSE but are not detected here: the SSE stage cuts a chunk holding a CR at
 * {@link blankLineEnds} instead (sse-chunk-taker.ts `takeChunk`).
 */
export class SseBoundaryScanner {
  /** The last two bytes of the stream before the current chunk (-1 when none). */
  private prev1 = -1;
  private prev2 = -1;

  /** The last byte of the stream before the current chunk, and the one before it (-1: none). */
  get lastBytes(): [number, number] {
    return [this.prev1, this.prev2];
  }

  /** Offsets (exclusive ends) within `chunk` at which an event block ends, ascending; then moves past `chunk`. */
  ends(chunk: Uint8Array): number[] {
    const out = this.endsIn(chunk);
    this.advance(chunk);
    return out;
  }

  /** Like {@link ends}, without moving past `chunk`. */
  endsIn(chunk: Uint8Array): number[] {
    const out: number[] = [];
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) if (this.endsAt(chunk, i)) out.push(i + 1);
    return out;
  }

  /** The first of {@link endsIn}, or -1; without moving past `chunk`. */
  firstEnd(chunk: Uint8Array): number {
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) if (this.endsAt(chunk, i)) return i + 1;
    return -1;
  }

  /** The last of {@link endsIn}, or -1; without moving past `chunk`. */
  lastEnd(chunk: Uint8Array): number {
    for (let i = chunk.lastIndexOf(LF); i !== -1; i = i > 0 ? chunk.lastIndexOf(LF, i - 1) : -1) if (this.endsAt(chunk, i)) return i + 1;
    return -1;
  }

  /** Moves past `chunk`: call once per chunk, in stream order, after the queries about it. */
  advance(chunk: Uint8Array): void {
    const n = chunk.length;
    if (n >= 2) {
      this.prev2 = chunk[n - 2]!;
      this.prev1 = chunk[n - 1]!;
    } else if (n === 1) {
      this.prev2 = this.prev1;
      this.prev1 = chunk[0]!;
    }
  }

  /** Whether the LF at `i` ends a blank line (its line is empty: LF LF or LF CR LF). */
  private endsAt(chunk: Uint8Array, i: number): boolean {
    const p1 = i >= 1 ? chunk[i - 1] : this.prev1;
    const p2 = i >= 2 ? chunk[i - 2] : i === 1 ? this.prev1 : this.prev2;
    return p1 === LF || (p1 === CR && p2 === LF);
  }
}

/**
 * Tells, per chunk, whether an event that ends in it may carry an `id:` field: an `id:` line
 * starts in the bytes since the last event boundary (this chunk's and the carried-over
 * ones), also when split across chunk edges. Conservative: a split `i`|`d:` or `id`|`:` at a
 * chunk edge counts wherever it is, and a chunk that starts within the stream's first 3
 * bytes is searched for `id:` anywhere (a BOM, itself possibly split over chunks, may precede
 * the first line). A false yes only costs the SSE stage its one-piece path for that chunk; a
 * false no is impossible.
 *
 * Used by sse-chunk-taker.ts: an event with a non-empty id gets a resume token carrying the exact
 * count through its end (ARCHITECTURE §4), so such chunks are parsed one event block at a
 * time; chunks without one are parsed in one piece.
 */
export class SseIdFieldWatch {
  private prev1 = -1;
  private prev2 = -1;
  /** Bytes of the stream before the current chunk. */
  private seen = 0;
  /** An `id:` line started since the last boundary, before the current chunk. */
  private open = false;

  /**
   * Call once per chunk, in stream order, with the chunk's last boundary end
   * ({@link SseBoundaryScanner.lastEnd}, -1 when none). True when an event ending in
   * `chunk` may have an id line.
   */
  check(chunk: Buffer, lastEnd: number): boolean {
    const n = chunk.length;
    if (n === 0) return this.open;
    const any = this.hasIdLine(chunk);
    const answer = this.open || any;
    if (lastEnd === -1) this.open = answer;
    // An id line after the last boundary: its line break is at lastEnd - 1 or later (a match
    // at the chunk edge or at the stream's start is before any boundary of this chunk).
    else this.open = any && Math.max(chunk.lastIndexOf(LF_ID_FIELD), chunk.lastIndexOf(CR_ID_FIELD)) >= lastEnd - 1;
    this.moveOver(chunk);
    return answer;
  }

  /**
   * Moves past `chunk` without answering for it, for a chunk whose events before `lastEnd`
   * (its last boundary, {@link SseBoundaryScanner.lastEnd}) the caller takes one block at a
   * time whatever they hold (sse-chunk-taker.ts `takePlanned`): only the bytes after that
   * boundary are searched. With `lastEnd` -1, {@link check}.
   */
  pass(chunk: Buffer, lastEnd: number): void {
    if (lastEnd === -1) {
      this.check(chunk, lastEnd);
      return;
    }
    // An id line after the last boundary: its line break is at lastEnd - 1 or later.
    this.open = chunk.indexOf(LF_ID_FIELD, lastEnd - 1) !== -1 || chunk.indexOf(CR_ID_FIELD, lastEnd - 1) !== -1;
    this.moveOver(chunk);
  }

  /**
   * Moves past bytes of an event block known to hold no id line (sse-chunk-taker.ts
   * `passHeld`: a block held as bytes, sse-held-block.ts), without searching them.
   */
  passWithoutId(chunk: Buffer): void {
    this.open = false;
    this.moveOver(chunk);
  }

  private moveOver(chunk: Buffer): void {
    const n = chunk.length;
    this.seen += n;
    if (n >= 2) {
      this.prev2 = chunk[n - 2]!;
      this.prev1 = chunk[n - 1]!;
    } else if (n === 1) {
      this.prev2 = this.prev1;
      this.prev1 = chunk[0]!;
    }
  }

  /** Whether an id line may start in `chunk` or be completed by it (begun before it). */
  private hasIdLine(chunk: Buffer): boolean {
    // The stream's first line may follow a BOM (3 bytes, possibly cut over chunks).
    if (this.seen <= BOM_BYTES && chunk.indexOf(ID_FIELD) !== -1) return true;
    const c0 = chunk[0];
    const c1 = chunk.length > 1 ? chunk[1] : COLON;
    if (this.prev2 === LOWER_I && this.prev1 === LOWER_D && c0 === COLON) return true;
    if (this.prev1 === LOWER_I && c0 === LOWER_D && c1 === COLON) return true;
    if ((this.prev1 === LF || this.prev1 === CR) && c0 === LOWER_I && c1 === LOWER_D && (chunk.length < 3 || chunk[2] === COLON)) return true;
    return chunk.indexOf(LF_ID_FIELD) !== -1 || chunk.indexOf(CR_ID_FIELD) !== -1;
  }
}

/**
 * {@link SseLineFeeder.maxOpenBytes} ÷ `maxLineBytes`: 4. Twice (what one line at the cap
 * holds decoded) ended honest events under `max_sse_event_bytes` made of many lines: a 4 MB
 * event of 100-byte ASCII lines (4.19 MB + 104 per line), 1,500 lines of CJK text (each byte
 * counted twice) (a re-read of hostile trial 52's fix). At four times, an event at the cap
 * passes with lines of ~35 bytes or more on average (ASCII; ~50 of non-ASCII text), and one event
 * still holds at most ~17 MiB at the default 4 MiB (it held ~130 MB before the count).
 */
export const OPEN_EVENT_MEMORY_FACTOR = 4;

/**
 * Bytes of a chunk's ASCII rest decoded at once for its ranges (SseLineFeeder, from its second
 * range; the range's own bytes when longer), in bytes: 16 KiB. Before, the whole rest was made
 * a string at the second range, also when the stream then ended or went raw (a 4 MiB chunk cut
 * after two ranges: ~1 ms, 4 MiB of string; ~40% of the CPU of sse-undelivered-cuts, whose
 * runs end early in one chunk, before its pads were counted: a trim helper, session 33).
 */
const ASCII_TEXT_WINDOW = 16 * 1024;

/**
 * Turns raw SSE bytes into text for the parser, line by line:
 *
 * - Complete lines (through the last LF or CR of a range) are decoded and handed to `sink`
 *   at once, so nothing is delayed: comments and events go out as soon as their lines end
 *   (a CR that ends the text goes to the sink as CR LF, so that the parser need not wait
 *   for the next byte: {@link emit}).
 * - The incomplete last line is held as the raw bytes it arrived in (views, no copy, no
 *   concatenation), and only when its line ends is it joined into one buffer, decoded once
 *   and handed over whole (the parser then joins no pieces). That bounds what one
 *   never-ending line costs to its own bytes (the 100 MiB SSE attack: bench/README.md,
 *   Memory under attack), instead of a decoded copy per chunk in the parser's buffer.
 * - Cap: once the held line exceeds `maxLineBytes`, `push` returns false and drops it; the
 *   caller reports the breach (sse-chunk-taker.ts `feederBreached`: `sse_event`) and
 *   calls {@link reset} at the next event boundary.
 * - The complete `data` lines of the event block still open, which the parser holds joined
 *   until the block's blank line, and the texts holding its last `event` and `id` values, are
 *   counted as the heap they hold there ({@link openDataBytes}; sse-open-event.ts) for the
 *   agent's buffered-bytes cap, as the held line is ({@link pendingBytes}). The part of a
 *   range that holds such lines goes to the sink as a string of its own (not a slice of the
 *   chunk's text), so that the values the parser slices from it keep only that part alive
 *   (hostile trial 52, F1: a 13-character `data:` line kept its chunk's 60 KB comment; a
 *   re-read of that fix, A: `event:` and `id:` values, up to the line cap each, were not
 *   counted). That count is capped ({@link maxOpenBytes}: four times
 *   `maxLineBytes`, {@link OPEN_EVENT_MEMORY_FACTOR}): a part that would take it
 *   over is not handed over, and `push` returns false ({@link breach} `memory`; the caller
 *   reports `sse_event_memory`, drops the event and resets as for a line).
 *
 * Decoding is UTF-8 (TextDecoder, streaming, so a character split across chunks survives;
 * a leading BOM is dropped as the WHATWG decoder does). ASCII bytes, met while the decoder
 * holds no partial character, are decoded as Latin-1 (identical for ASCII, and never a BOM:
 * the decoder is made only when a non-ASCII byte comes): a chunk's first
 * range alone (often its only one, a few lines: the SSE stage forwards the others raw), at
 * its second range the rest of the chunk tested once, and decoded a window at a time
 * ({@link ASCII_TEXT_WINDOW}), sliced per range. Every other byte goes through the streaming
 * decoder in order.
 */
export class SseLineFeeder {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private completed: CompletedLine | undefined;
  /**
   * The streaming UTF-8 decoder, made at the first byte that needs it (a non-ASCII one): most
   * streams are ASCII throughout and never make one (issue 5: ~2.5 µs per response). Absent,
   * it holds nothing: {@link reset} drops it instead of flushing it.
   */
  private decoder: InstanceType<typeof TextDecoder> | undefined;
  /** The decoder's last input byte was >= 0x80: it may hold the start of a character. */
  private dirty = false;
  /**
   * No byte was decoded since the feeder was made or reset: a leading BOM is dropped then
   * (unless {@link keepBom}), as a fresh WHATWG decoder does.
   */
  private fresh = true;
  /** Set by {@link passedRaw} at the stream's start: no BOM is ever dropped from then on. */
  private keepBom = false;
  /** The chunk whose bytes from `cachedFrom` on are ASCII-tested once (for the ranges of one chunk). */
  private cachedChunk: Buffer | undefined;
  private cachedFrom = 0;
  private cachedAscii = false;
  /**
   * The cached chunk's bytes from `textFrom` (the start of the range that needed them) decoded
   * as Latin-1, when `cachedAscii`: {@link ASCII_TEXT_WINDOW} bytes, or that range's own when
   * longer, or the chunk's last; sliced for the ranges within them.
   */
  private cachedText: string | undefined;
  private textFrom = 0;
  /** The chunk a range was last decoded from (its second range makes it the cached chunk). */
  private lastChunk: Buffer | undefined;
  /**
   * The last text handed to the sink ended with a CR, sent on as CR LF: an LF that starts the
   * next text belongs to that line break and is dropped (see {@link emit}).
   */
  private afterCr = false;
  /** The last character handed to the sink (before an LF added after a CR), -1 at the start or after a reset. */
  private lastCode = -1;
  private expectingLf = false;
  /** The open block's complete `data` lines (sse-open-event.ts). */
  private readonly open = new SseOpenEventData();
  /** The last text {@link decode} returned came from the streaming UTF-8 decoder (it may be a two-byte string). */
  private lastWide = false;

  /**
   * @param sink         receives decoded text, in stream order: whole lines (a held line
   *                     alone, with its line break; at the end of the stream,
   *                     {@link finish}, without one)
   * @param maxLineBytes bound on the bytes of the held incomplete line (inclusive)
   */
  constructor(
    private readonly sink: (text: string) => void,
    readonly maxLineBytes: number,
  ) {
    this.maxOpenBytes = OPEN_EVENT_MEMORY_FACTOR * maxLineBytes;
  }

  /**
   * Bound on {@link openDataBytes} (inclusive): {@link OPEN_EVENT_MEMORY_FACTOR} (4) times
   * `maxLineBytes`, twice the heap one line of that many bytes may take decoded (a two-byte
   * string: sse-open-event.ts), so that an event of one line within the line cap never reaches
   * it, with its `event:` and `id:` lines, while one of many short `data:` lines, whose parser
   * strings weigh more than its bytes, is stopped there (hostile trial 52, F1).
   */
  readonly maxOpenBytes: number;

  /**
   * True only while the sink is handed a text whose last character is a CR that is the last
   * byte of the stream so far and follows a line break (a line ended by CR LF or by CR, then
   * the CR of a blank line): with CR LF blank lines, the LF of that CR LF is still to come, in
   * the next chunk (CR LF is one line break: WHATWG HTML §9.2.6). The sink gets the line
   * complete at once ({@link emit}), so an event the parser dispatches there would be counted
   * without that LF: the SSE stage counts it in the event's resume token (sse-event-ids.ts
   * `tokenCount`; reported failure: a token one byte short, after an LF-ended and after a
   * CR-ended line: test/regressions/sse-crlf-split-token-undercount.test.ts). When no LF
   * follows (a CR-only stream) that token counts one byte more than came: never fewer.
   */
  get lfExpected(): boolean {
    return this.expectingLf;
  }

  /** Bytes of the incomplete line held so far. */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  /** The first `n` bytes of the incomplete line held (all of it when shorter; empty when none): sse-frame-lines.ts `head`. */
  heldHead(n: number): Buffer {
    const first = this.held[0];
    if (first === undefined || first.length >= n) return first === undefined ? Buffer.alloc(0) : first.subarray(0, n);
    return Buffer.concat(this.held, Math.min(n, this.heldBytes)).subarray(0, n);
  }

  /**
   * Heap bytes the parser (and the id-only watch, sse-id-only.ts) hold for the event not yet
   * dispatched, in bytes: the parts of the complete lines handed to the sink since the last
   * blank line that hold a `data` line, the parser's strings per such line, and the texts
   * holding the block's last `event` and `id` values (sse-open-event.ts). 0 after a blank
   * line, {@link passedRaw}, {@link reset} and {@link finish}. At most {@link maxOpenBytes}
   * while {@link push} answers true; once it answered false, what it was when that happened
   * ({@link droppedOpenBytes} after a `memory` breach) until {@link reset}: the caller drops
   * the event (the parser reset: sse-chunk-taker.ts `feederBreached`) and counts nothing of
   * it while it skips to the next boundary (sse-stage.ts, its lease).
   */
  get openDataBytes(): number {
    return this.open.bytes;
  }

  /**
   * Why the last {@link push} that returned false did: `line`, the held incomplete line went
   * over `maxLineBytes` ({@link droppedLineBytes}); `memory`, the open event's
   * {@link openDataBytes} would have gone over {@link maxOpenBytes} ({@link droppedOpenBytes}).
   * Undefined before any.
   */
  breach: 'line' | 'memory' | undefined = undefined;

  /**
   * The {@link openDataBytes} the part that the last `memory` {@link breach} did not hand over
   * would have made (over {@link maxOpenBytes}): its `observed_bytes` (sse-chunk-taker.ts). 0 before any.
   */
  droppedOpenBytes = 0;

  /**
   * The bytes of the line the last {@link push} that returned false dropped: all of it that
   * was received, through the end of that push's range (field name included; over
   * `maxLineBytes`). 0 before any. The `observed_bytes` of that breach (sse-chunk-taker.ts
   * `capBreached`): the count went on to the end of what was read, not stopped at the cap (reported failure:
   * test/regressions/sse-event-cap-observed-bytes.test.ts).
   */
  droppedLineBytes = 0;

  /**
   * Feeds `chunk[start, end)`. Returns false when the held incomplete line went over
   * `maxLineBytes` (it is dropped, nothing of it reached the sink), or when the open event's
   * {@link openDataBytes} would go over {@link maxOpenBytes} (the part that would take it
   * over, and the rest of the range, do not reach the sink: {@link breach}); true otherwise.
   */
  push(chunk: Buffer, start: number, end: number): boolean {
    if (start >= end) return true;
    // A chunk's first range: forget the cached text even for the same Buffer object (a source
    // may hand out one buffer again with new bytes); later ranges of a chunk reuse it.
    if (start === 0) this.nextChunk();
    const cut = lineEnd(chunk, start, end);
    if (cut === start) return this.hold(chunk.subarray(start, end));
    let from = start;
    if (this.heldBytes > 0) {
      // The held line ends at the range's first line break: handed over whole, with the
      // break (without it, the parser would hold the line and join it with the next text).
      from = firstBreak(chunk, start, cut) + 1;
      if (!this.completeHeld(chunk.subarray(start, from), from === end)) return false;
    }
    if (from < cut && !this.feed(chunk, from, cut, cut === end)) return false;
    return cut === end || this.hold(chunk.subarray(cut, end));
  }

  /**
   * Forgets what was cached about the last chunk: call before pushing ranges of a new chunk
   * when its first range may not start at 0 (a source may hand out one Buffer object again
   * with new bytes).
   */
  nextChunk(): void {
    this.cachedChunk = undefined;
    this.lastChunk = undefined;
  }

  /**
   * End of stream: hands over the held incomplete line, then a line break, which completes a
   * last line that had none. After an LF that line break is a blank line, so the parser
   * dispatches an event the seller never completed: WHATWG HTML §9.2.6 discards it, and so
   * does the SSE stage (sse-stage.ts `onEvent`, once its `streamEnded` is set; a hostile new
   * user's trial 10, F5). After a CR the line break is the LF of a CR LF and changes nothing.
   */
  finish(): void {
    // The seller's end: nothing waits after this line, which the parser drops with its event
    // (never dispatched: sse-stage.ts `onEvent`), so no bound is checked.
    if (this.heldBytes > 0) this.completeHeld(EMPTY, false, false);
    this.emit('\n', false);
    this.open.reset();
  }

  /**
   * The last `data:` line that was held over chunk edges and then handed to the sink whole,
   * once (the next call returns undefined until another one completes): its bytes without
   * the line break, the length of the text the sink got for them, and whether those bytes
   * are valid UTF-8 (then they are exactly the UTF-8 encoding of that text, less a BOM the
   * decoder dropped at the stream's start). The SSE stage reuses them as the event's data
   * bytes (sse-stage.ts) instead of encoding the parsed text again.
   */
  takeCompletedLine(): CompletedLine | undefined {
    const line = this.completed;
    this.completed = undefined;
    return line;
  }

  /**
   * Notes that the stream's bytes so far went to the host without this feeder (whole event
   * blocks the SSE stage forwarded raw): the stream's start is past, so a later U+FEFF is a
   * character, not a BOM to drop. Call only at an event boundary (nothing held; the last
   * byte fed was the LF of a blank line, so no CR's LF is awaited either).
   */
  passedRaw(): void {
    this.lastCode = LF;
    this.open.blockPassed();
    if (!this.fresh) return;
    // Nothing was decoded yet: a leading U+FEFF would be dropped as a BOM.
    this.keepBom = true;
    this.fresh = false;
  }

  /** Nothing held: no incomplete line, no partial character in the decoder (as at every event start of a planned chunk). */
  get atBlockStart(): boolean {
    return this.heldBytes === 0 && !this.dirty;
  }

  /**
   * Notes that the complete event block starting at `start` of the chunk being fed was read
   * without this feeder (sse-chunk-taker.ts takeSimple: an id-only or comment-only block of one
   * ASCII line, LF line endings, no `data` line; sse-simple-block.ts). Leaves the state
   * {@link push} leaves after handing that block's text to the sink: the open block ended,
   * the last character an LF (no CR's LF awaited), the stream's start past (ASCII holds no
   * BOM), a chunk's first range forgetting the cached chunk. Call only when
   * {@link atBlockStart}.
   */
  passedBlock(start: number): void {
    if (start === 0) this.nextChunk();
    this.open.blockPassed();
    this.fresh = false;
    this.afterCr = false;
    this.lastCode = LF;
  }

  /** Drops the held line and any partial character in the decoder (after a skipped event). */
  reset(): void {
    this.held = [];
    this.heldBytes = 0;
    this.completed = undefined;
    this.open.reset();
    this.afterCr = false;
    this.lastCode = -1;
    // A flushed decoder is a new one (WHATWG Encoding, decode()): dropped, made again on demand.
    this.decoder = undefined;
    this.dirty = false;
    this.fresh = true;
  }

  private hold(piece: Buffer): boolean {
    this.heldBytes += piece.length;
    if (this.heldBytes > this.maxLineBytes) {
      this.breach = 'line';
      this.droppedLineBytes = this.heldBytes;
      this.held = [];
      this.heldBytes = 0;
      return false;
    }
    this.held.push(piece);
    return true;
  }

  /**
   * The held line and `rest` (its end through its line break; empty at the end of the
   * stream) as one buffer, decoded once (a string of its own: sse-open-event.ts) and handed
   * to the sink; false, nothing handed over, when it is a `data` line that would take the open
   * event's count over {@link maxOpenBytes} (`bounded`).
   */
  private completeHeld(rest: Buffer, rangeEnd: boolean, bounded = true): boolean {
    const pieces = rest.length > 0 ? [...this.held, rest] : this.held;
    const all = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, this.heldBytes + rest.length);
    this.held = [];
    this.heldBytes = 0;
    const text = this.decode(all, 0, all.length);
    // Not a chunk whose later ranges may follow: not kept as one (it would keep the line's
    // bytes, up to the line cap, uncounted until the next chunk, a seller's silence long).
    if (this.lastChunk === all) this.lastChunk = undefined;
    this.open.line(all, this.lastWide);
    if (bounded && !this.withinOpenBound()) return false;
    const breakBytes = rest.length > 0 ? 1 : 0;
    const line = all.subarray(0, all.length - breakBytes);
    this.completed = startsWithData(line) ? new HeldDataLine(line, text.length - breakBytes) : undefined;
    this.emit(text, rangeEnd);
    return true;
  }

  /**
   * Decodes `chunk[start, end)` and hands it to the sink (`rangeEnd`: `end` is the end of the
   * range pushed): the part of the open event that holds `data` lines, if any, as a string of
   * its own, after the rest (sse-open-event.ts). False, that part not handed over, when it
   * would take the open event's count over {@link maxOpenBytes}.
   */
  private feed(chunk: Buffer, start: number, end: number, rangeEnd: boolean): boolean {
    const open = this.open.lines(chunk, start, end);
    if (open === -1) {
      this.emit(this.decode(chunk, start, end), rangeEnd);
      return true;
    }
    if (open > start) this.emit(this.decode(chunk, start, open), false);
    const text = this.decodeOwn(chunk, open, end);
    this.open.part(end - open, this.lastWide);
    if (!this.withinOpenBound()) return false;
    this.emit(text, rangeEnd);
    return true;
  }

  /** The open event's count is within {@link maxOpenBytes}; else records the `memory` breach (false). */
  private withinOpenBound(): boolean {
    if (this.open.bytes <= this.maxOpenBytes) return true;
    this.breach = 'memory';
    this.droppedOpenBytes = this.open.bytes;
    return false;
  }

  /**
   * Hands `text` to the sink with a CR that ends it sent on as CR LF, so that the line it
   * ends is complete now: a lone CR ends a line (WHATWG HTML §9.2.6), but a parser that sees
   * a CR last must wait for the next text to know whether an LF follows (eventsource-parser
   * does), and a seller may send nothing more for minutes. The LF that may start the next
   * text then belongs to that CR and is dropped. Reported failure: an event ended by CRs was
   * held until the seller's next line (3 s late), and a final result ending in `\r\r` then
   * silence got `sse_idle` (test/regressions/sse-new-user-findings.test.ts).
   *
   * `rangeEnd`: the text ends with the last byte of the range pushed (so a CR that ends it
   * is the last byte of the stream so far); see {@link lfExpected}.
   */
  private emit(text: string, rangeEnd: boolean): void {
    // Nothing decoded (a partial character held): the state after a CR stays as it is.
    if (text === '') return;
    const n = text.length;
    const beforeLast = n >= 2 ? text.charCodeAt(n - 2) : this.lastCode;
    this.lastCode = text.charCodeAt(n - 1);
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF) {
        if (n === 1) return;
        text = text.slice(1);
      }
    }
    if (this.lastCode !== CR) {
      this.sink(text);
      return;
    }
    this.afterCr = true;
    this.expectingLf = rangeEnd && (beforeLast === LF || beforeLast === CR);
    try {
      this.sink(text + '\n');
    } finally {
      this.expectingLf = false;
    }
  }

  private decode(chunk: Buffer, start: number, end: number): string {
    const text = this.dirty ? undefined : this.decodeAscii(chunk, start, end);
    if (text !== undefined) {
      // ASCII text is not a BOM, and a decoder would have dropped none: the start is past.
      this.fresh = false;
      this.lastWide = false;
      return text;
    }
    return this.decodeUtf8(chunk, start, end);
  }

  /**
   * {@link decode} as a string of its own, never a slice of a longer one (the chunk's text the
   * ASCII path caches): what the parser slices from it keeps only these bytes alive.
   */
  private decodeOwn(chunk: Buffer, start: number, end: number): string {
    if (!this.dirty) {
      const known = chunk === this.cachedChunk && start >= this.cachedFrom && this.cachedAscii;
      if (known || isAscii(chunk.subarray(start, end))) {
        this.fresh = false;
        this.lastWide = false;
        return chunk.toString('latin1', start, end);
      }
    }
    return this.decodeUtf8(chunk, start, end);
  }

  /** `chunk[start, end)` through the streaming UTF-8 decoder (made now if need be). */
  private decodeUtf8(chunk: Buffer, start: number, end: number): string {
    this.lastWide = true;
    // A BOM is dropped only at the start (the decoder made now, or after a reset, is fresh).
    const decoder = (this.decoder ??= new TextDecoder('utf-8', { ignoreBOM: this.keepBom || !this.fresh }));
    this.fresh = false;
    this.dirty = chunk[end - 1]! >= 0x80;
    return decoder.decode(chunk.subarray(start, end), { stream: true });
  }

  /**
   * `chunk[start, end)` decoded as Latin-1 when it is ASCII (the same text UTF-8 gives) and
   * the decoder holds no partial character; undefined when the decoder must take it.
   */
  private decodeAscii(chunk: Buffer, start: number, end: number): string | undefined {
    if (chunk !== this.cachedChunk || start < this.cachedFrom) {
      if (chunk !== this.lastChunk) {
        // A chunk's first range: tested and decoded alone (often its only one).
        this.lastChunk = chunk;
        const whole = start === 0 && end === chunk.length;
        if (isAscii(whole ? chunk : chunk.subarray(start, end))) return whole ? chunk.toString('latin1') : chunk.toString('latin1', start, end);
      } else {
        // Its second range: the rest of the chunk, tested and decoded once, sliced per range.
        this.cachedChunk = chunk;
        this.cachedFrom = start;
        this.cachedAscii = isAscii(start === 0 ? chunk : chunk.subarray(start));
        this.cachedText = undefined;
      }
    }
    if (chunk === this.cachedChunk && start >= this.cachedFrom && this.cachedAscii) {
      let text = this.cachedText;
      let from = this.textFrom;
      if (text === undefined || start < from || end > from + text.length) {
        // Decoded from this range on, as far as it goes or a window, not the rest of the
        // chunk: ranges the stream never feeds (it ended, a bound cut it, the rest went raw)
        // are not made a string.
        from = start;
        text = chunk.toString('latin1', start, Math.min(chunk.length, Math.max(end, start + ASCII_TEXT_WINDOW)));
        this.cachedText = text;
        this.textFrom = from;
      }
      return start === from && end - from === text.length ? text : text.slice(start - from, end - from);
    }
    return undefined;
  }
}

/** See {@link SseLineFeeder.takeCompletedLine}. */
export interface CompletedLine {
  /** The line's bytes, line break excluded. */
  readonly bytes: Buffer;
  /** UTF-16 length of the text the sink got for it. */
  readonly textLength: number;
  /** `bytes` is valid UTF-8 (tested when first asked: most completed lines are never looked at). */
  readonly utf8: boolean;
}

class HeldDataLine implements CompletedLine {
  private valid: boolean | undefined;
  constructor(
    readonly bytes: Buffer,
    readonly textLength: number,
  ) {}

  get utf8(): boolean {
    return (this.valid ??= isAscii(this.bytes) || isUtf8(this.bytes));
  }
}

const EMPTY = Buffer.alloc(0);
const DATA_FIELD = Buffer.from('data:', 'latin1');

function startsWithData(line: Buffer): boolean {
  return line.length >= DATA_FIELD.length && line.compare(DATA_FIELD, 0, DATA_FIELD.length, 0, DATA_FIELD.length) === 0;
}

/** The offset of the first LF or CR in `chunk[start, end)` (there is one). */
function firstBreak(chunk: Buffer, start: number, end: number): number {
  const range = chunk.subarray(start, end);
  const lf = range.indexOf(LF);
  const cr = range.indexOf(CR);
  return start + (lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr));
}

/** The offset just past the last LF or CR in `chunk[start, end)`, or `start` when there is none. */
function lineEnd(chunk: Buffer, start: number, end: number): number {
  const last = chunk[end - 1];
  if (last === LF || last === CR) return end;
  const range = chunk.subarray(start, end);
  return start + 1 + Math.max(range.lastIndexOf(LF), range.lastIndexOf(CR));
}

/**
 * Offsets (exclusive ends) within `chunk` at which an event block ends with any line endings,
 * CR alone included (WHATWG HTML §9.2.6: a blank line is a line break right after another;
 * CR LF is one break), ascending: a superset of {@link SseBoundaryScanner.endsIn}, which
 * leaves out blank lines ended by a CR alone. A block whose blank line is a CR LF ends after
 * its LF (after its CR when the LF is in the next chunk: that chunk's offset 1 then ends it).
 * `prev1`, `prev2`: the stream's last two bytes before `chunk` (-1: none; the stream's start
 * is a line start). For the SSE stage's per-block count on chunks holding a CR
 * (sse-encoding-charge.ts charge); one native search per line break kind.
 */
export function blankLineEnds(chunk: Uint8Array, prev1: number, prev2: number): number[] {
  const out: number[] = [];
  const at = (k: number): number => (k >= 0 ? chunk[k]! : k === -1 ? prev1 : prev2);
  const isBreak = (b: number): boolean => b === LF || b === CR || b === -1;
  let cr = chunk.indexOf(CR);
  let lf = chunk.indexOf(LF);
  while (cr !== -1 || lf !== -1) {
    const i = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
    const b1 = at(i - 1);
    if (chunk[i] === LF && b1 === CR) {
      // The LF of a CR LF: when that CR was a blank line, its block ends after this LF.
      if (isBreak(at(i - 2))) {
        if (out.length > 0 && out[out.length - 1] === i) out[out.length - 1] = i + 1;
        else out.push(i + 1);
      }
    } else if (isBreak(b1)) {
      out.push(i + 1);
    }
    if (i === cr) cr = chunk.indexOf(CR, i + 1);
    else lf = chunk.indexOf(LF, i + 1);
  }
  return out;
}
