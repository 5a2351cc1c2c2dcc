/**
 * What eventsource-parser holds for the SSE event block still open (no blank line yet): its
 * `data` lines joined, its last `event` and `id` values; counted
 * from the bytes the line feeder hands it as complete lines (sse-boundaries.ts SseLineFeeder),
 * so that the agent's `max_buffered_response_bytes` counts it (sse-stage.ts, agent-guard.ts
 * BufferLease) and the feeder can bound it (SseLineFeeder: the per-event cap, `sse_event_memory`).
 *
 * Why: eventsource-parser joins an event's data lines into its `data` until the blank line
 * that dispatches it (WHATWG HTML §9.2.6), as `data = \`${data}\n${value}\``, where each
 * `value` is a slice of the text it was fed. Only the incomplete line was counted at first, so
 * an event that never ended, made of many complete `data:` lines, held up to the parser's
 * bound per stream uncounted (a hostile new user's trial 10, F3:
 * test/regressions/sse-event-lines-escape-buffer-cap.test.ts). Then each line was counted as
 * its value and one byte, ~1/32 of what an empty `data:` line holds: a V8 ConsString of 32
 * bytes per join (two for a non-empty value), a string object of up to 40 bytes per value, and
 * the text a value of 13 characters or more is sliced from, kept whole (a 60 KB comment after
 * a 13-character `data:` line in one chunk: 60 KB held per line). Ten standalone GET streams of
 * one event of 4.1M empty `data:` lines took the gateway to 1.47 GB, the gauge at 41 MB, under
 * its 64 MiB cap; eight crashed a 768 MB heap (hostile trial 52, F1:
 * test/regressions/sse-empty-data-lines-heap-uncounted.test.ts).
 *
 * What is counted, in bytes of heap (an upper bound on the size of the parser's strings; the
 * heap pages they sit on may waste a little more around parts of tens of KB: 1.4% measured,
 * one 64 KiB part per chunk):
 * - each part of the open block that holds a `data` line (`data:...` or `data` alone), handed
 *   to the parser as a string of its own (SseLineFeeder: the values sliced from it keep only
 *   it): its bytes ({@link part}), twice when it was not ASCII (a two-byte string of up to as
 *   many characters as bytes);
 * - per `data` line, what the parser builds for it beyond that text: {@link DATA_LINE_HEAP_BYTES}
 *   (104), {@link ONE_BYTE_DATA_LINE_HEAP_BYTES} (64) for a value of one ASCII byte (88 for
 *   one other byte: below),
 *   {@link EMPTY_DATA_LINE_HEAP_BYTES} (32) for an empty value. Counted by value bytes, not
 *   finer (a value of 2-12 one-byte characters holds 96): an event of 100,000 `data: x` lines
 *   (800 KB; test/regressions/sse-many-data-lines-freezes-gateway.test.ts) counts 7.2 MB,
 *   under the bound at the default 4 MiB (SseLineFeeder.maxOpenBytes), where 104 per line
 *   counted it over.
 * - the text holding the block's last `event` value, and the one holding its last `id` value,
 *   when no `data` line's count above holds it: its bytes (twice when not ASCII), once when
 *   both values are in one text. eventsource-parser keeps one value of each (a slice of the
 *   text it was fed) until the blank line: a later `event:` line replaces the former, an empty
 *   value (`event:`, `id`) releases it, an `id` value holding NUL is ignored (the former stays).
 *   A part of the open block that sets one goes to the parser as a string of its own, as a
 *   `data` part does; a line held over chunk edges is one already. The id-only watch
 *   (sse-id-only.ts) keeps the id too, sliced from the text before the parser's CR line
 *   breaks were made LF (sse-parser-feed.ts): a text with a CR that holds the id counts once
 *   more for it. Each such line may reach the line cap (`max_sse_event_bytes` + 65,536):
 *   uncounted, 8 standalone GET streams each holding an `event: <4 MiB>` and an `id: <4 MiB>`
 *   line held 113 MB with the gauge at 0 (a re-read of hostile trial 52's fix, A:
 *   test/regressions/sse-open-event-id-values-uncounted.test.ts).
 * Comments, `retry:` and unknown-field lines hold nothing once read. A line that starts with
 * a BOM is read past it (the decoder drops one at the stream's start and after a reset). A
 * blank line ends the block: the count is 0 again (the parser dispatched the event, or
 * dropped a block without data, and its values with it).
 *
 * A `data` value of one byte that is not ASCII (an invalid UTF-8 byte, decoded as U+FFFD, a
 * two-byte string of its own where an ASCII character is V8's shared one) counts
 * {@link REPLACED_BYTE_DATA_LINE_HEAP_BYTES} (88): counted as an ASCII one before, 0.89-0.91
 * of what it held (the same re-read; 200,000 `data: \xff` lines per stream, this module's
 * feeder, the id-only watch and the parser, gc'd: 88 bytes held per line, its 16-byte share of
 * the text included; counted now / held 1.18, as for empty lines).
 *
 * Source of the figures: eventsource-parser 3.1.1 fed 200,000 `data:` lines per value shape
 * (2,000 per text, the texts kept alive and subtracted; `global.gc()`, heapUsed + external),
 * Node 20.20.2 and 22.23.5 on x64 alike: 32.1 bytes per line for an empty value, 64-65 for one
 * character, 96-97 for 12, 13 or 100 one-byte characters, 104-105 for 12 two-byte ones (`€`),
 * 88-97 for other two-byte values (a ConsString and a SlicedString are 32 bytes each, a
 * sequential string 16 + its characters rounded up to 8, on 64-bit V8 without pointer
 * compression, as Node is built). The gateway's stage, a standalone GET stream fed 20 to 120
 * chunks of 64 KiB of one open event (its heap before and after, gc'd, per chunk), held 33
 * bytes per empty line (14.5 MB for 436,880 lines, 0.44 MB counted before: the regression
 * test cited above); counted now / held: 1.18 for empty lines, 1.10 for one-character values,
 * 1.25 for 12 characters, 1.06 for 13, 1.03 for 100, 0.99 for a 13-character line and a 64 KB
 * comment per chunk (66 KB held per chunk, where 14 bytes were counted before).
 *
 * Line breaks: LF, CR LF, CR alone (WHATWG HTML §9.2.6); a blank line is a line break right
 * after another that is not the LF of a CR LF.
 *
 * Cost: per range of complete lines, a look at its last three bytes; a range that ends with a
 * blank line (a stream's usual range: whole events) ends there. Otherwise (the chunk's tail:
 * an event that goes on in the next chunk) one native backward search for the last `\n\n`
 * and one for a CR in the bytes after it, then the lines after the last blank line (the open
 * block's part in this range) are walked, a look at each line's first bytes (and a forward
 * NUL search for `id` lines): the work is in the open event's bytes only, never in the events
 * of the range that ended.
 */
import { COLON, CR, LF, SPACE } from '../mcp/json-bytes.js';

const LF_LF = Buffer.from('\n\n', 'latin1');
/** `data`, the field the parser joins. */
const D = 0x64;
const A = 0x61;
const T = 0x74;
/** `event`, `id`: the fields whose last value the parser keeps. */
const E = 0x65;
const V = 0x76;
const N = 0x6e;
const I = 0x69;
const NUL = 0x00;
/** A UTF-8 byte order mark's bytes, which the decoder drops before a line at the stream's start (and after a reset). */
const BOM_0 = 0xef;
const BOM_1 = 0xbb;
const BOM_2 = 0xbf;

/** Heap the parser builds per `data` line of an open event beyond the text it slices the value from, for a value of 2 bytes or more (module doc: measured). */
export const DATA_LINE_HEAP_BYTES = 104;
/** ... for a value of 1 ASCII byte (V8's single-character string, shared): two ConsStrings. */
export const ONE_BYTE_DATA_LINE_HEAP_BYTES = 64;
/** ... for a value of 1 byte that is not ASCII (invalid UTF-8, decoded as U+FFFD: a two-byte string of its own, 24 bytes): two ConsStrings and that string. */
export const REPLACED_BYTE_DATA_LINE_HEAP_BYTES = 88;
/** ... for an empty value (`data:`, `data`): one ConsString. */
export const EMPTY_DATA_LINE_HEAP_BYTES = 32;

/** What the lines of one text did to the block's last `event` or `id` value: nothing, released it (an empty value), set one (kept with its text). */
const KEPT_NONE = 0;
const KEPT_CLEARED = 1;
const KEPT_SET = 2;
type Kept = typeof KEPT_NONE | typeof KEPT_CLEARED | typeof KEPT_SET;

export class SseOpenEventData {
  /** Heap bytes the parser (and the id-only watch) hold for the open block (module doc); 0 at a block's end. */
  bytes = 0;
  /** The last byte taken, and the one before it (-1: none; the stream's start is a line start). */
  private prev1 = -1;
  private prev2 = -1;
  /** The `data` lines' count: the texts holding them and the parser's strings per line. */
  private data = 0;
  /** The text holding the block's last `event` value, when no `data` line's count holds it (0: none). */
  private eventText = 0;
  /** The text holding the block's last `id` value as the parser got it, when no `data` line's count holds it (0: none). */
  private idText = 0;
  /** The text the id-only watch sliced that value from, when the parser got another one (its CR line breaks made LF: sse-parser-feed.ts); 0: none. */
  private idWatchText = 0;
  /** {@link eventText} and {@link idText} are one text. */
  private oneText = false;
  /** The last walk ({@link lines}, {@link line}), which {@link part} applies: the parser's strings for its `data` lines, whether it held one, what it did to the `event` and `id` values, whether it held a CR. */
  private walkHeap = 0;
  private walkData = false;
  private walkEvent: Kept = KEPT_NONE;
  private walkId: Kept = KEPT_NONE;
  private walkCr = false;

  /**
   * Takes the complete lines `chunk[from, to)`: `from` is a line start (or the LF of a CR LF
   * whose CR ended the bytes before), `chunk[to - 1]` a line break. Returns where the open
   * block's part in them starts (`from` ..< `to`) when that part holds a `data` line or sets
   * the block's `event` or `id` value (a non-empty one), -1 otherwise. The caller hands that
   * part to the parser as a string of its own, and then calls {@link part}, which counts it.
   */
  lines(chunk: Buffer, from: number, to: number): number {
    if (to <= from) return -1;
    const p1 = this.prev1;
    const p2 = this.prev2;
    const b1 = chunk[to - 1]!;
    const b2 = to - 2 >= from ? chunk[to - 2]! : p1;
    const b3 = to - 3 >= from ? chunk[to - 3]! : to - 3 === from - 1 ? p1 : p2;
    this.prev1 = b1;
    this.prev2 = b2;
    // The range ends with a blank line (`\n\n`, `\r\r`, `\n\r`, `\r\n\r\n`, ...): the block ended.
    if (blankPair(b2, b1) || (b1 === LF && b2 === CR && blankPair(b3, b2))) {
      this.clear();
      return -1;
    }
    // Where the open block starts in the range: after its last blank line, else at `from`.
    let open = from;
    let ended = blankPair(p1, chunk[from]!);
    if (ended) open = from + 1;
    // Searched in place (no view per range): the last blank line within [open, to), then any CR after it.
    const lflf = to - open >= 2 ? chunk.lastIndexOf(LF_LF, to - 2) : -1;
    if (lflf >= open) {
      open = lflf + 2;
      ended = true;
    }
    const crAt = chunk.indexOf(CR, open);
    const withCr = crAt !== -1 && crAt < to;
    if (withCr) {
      // A blank line made with a CR after `open` (the pair may start at `open - 1`): a
      // backward walk over the open part's bytes, to the last one.
      for (let i = to - 1; i >= open && i >= from; i--) {
        if (blankPair(i > from ? chunk[i - 1]! : p1, chunk[i]!)) {
          open = i + 1;
          ended = true;
          break;
        }
      }
    }
    this.walk(chunk, open, to, open > from ? chunk[open - 1]! : p1, withCr);
    if (ended) this.clear();
    if (this.walkData || this.walkEvent === KEPT_SET || this.walkId === KEPT_SET) return open;
    // Values released (empty ones) and nothing kept: no text to count.
    if (this.walkEvent !== KEPT_NONE || this.walkId !== KEPT_NONE) this.part(0, false);
    return -1;
  }

  /** The part `lines` returned, of `bytes` bytes, went to the parser as a string of its own; `wide`: not ASCII (module doc). */
  part(bytes: number, wide: boolean): void {
    const text = wide ? 2 * bytes : bytes;
    // A text with a `data` line is held until the block ends: counted once, the values it holds with it.
    const held = this.walkData;
    if (held) this.data += this.walkHeap + text;
    const setEvent = this.walkEvent === KEPT_SET;
    const setId = this.walkId === KEPT_SET;
    if (setEvent) this.eventText = held ? 0 : text;
    else if (this.walkEvent === KEPT_CLEARED) this.eventText = 0;
    if (setId) {
      this.idText = held ? 0 : text;
      this.idWatchText = this.walkCr ? text : 0;
    } else if (this.walkId === KEPT_CLEARED) {
      this.idText = 0;
      this.idWatchText = 0;
    }
    if (setEvent || setId) this.oneText = setEvent && setId;
    const kept = this.oneText ? Math.max(this.eventText, this.idText) : this.eventText + this.idText;
    this.bytes = this.data + kept + this.idWatchText;
  }

  /**
   * Takes one complete line held over chunk edges (SseLineFeeder: its bytes and the first byte
   * of its line break; it is not blank, and starts at a line start), handed to the parser as a
   * string of its own (`wide`: not ASCII): counted whole when it is a `data` line (with its
   * heap), or an `event` or `id` line that sets a value.
   */
  line(line: Buffer, wide: boolean): void {
    const n = line.length;
    if (n === 0) return;
    const last = line[n - 1]!;
    this.startWalk(last === CR);
    this.take(line, 0, n - (last === LF || last === CR ? 1 : 0), -2);
    if (this.walkData || this.walkEvent !== KEPT_NONE || this.walkId !== KEPT_NONE) this.part(n, wide);
    this.prev2 = n >= 2 ? line[n - 2]! : this.prev1;
    this.prev1 = last;
  }

  /** The bytes so far ended with a blank line that went elsewhere (a raw-forwarded or held block). */
  blockPassed(): void {
    this.clear();
    this.prev1 = LF;
    this.prev2 = LF;
  }

  /** Forgets everything (the parser was reset, or the stream ended). */
  reset(): void {
    this.clear();
    this.prev1 = -1;
    this.prev2 = -1;
  }

  /** A new walk ({@link walk}, {@link line}): nothing read yet; `withCr` whether its bytes may hold a CR. */
  private startWalk(withCr: boolean): void {
    this.walkHeap = 0;
    this.walkData = false;
    this.walkEvent = KEPT_NONE;
    this.walkId = KEPT_NONE;
    this.walkCr = withCr;
  }

  /** The block ended: the parser holds nothing of it. */
  private clear(): void {
    this.bytes = 0;
    this.data = 0;
    this.eventText = 0;
    this.idText = 0;
    this.idWatchText = 0;
    this.oneText = false;
  }

  /**
   * Walks the complete, non-blank lines `chunk[from, to)` ({@link take} each); `before` is the
   * byte before `from` (-1: none), `withCr` whether the range may hold a CR.
   */
  private walk(chunk: Buffer, from: number, to: number, before: number, withCr: boolean): void {
    this.startWalk(withCr);
    let i = from;
    // The LF of a CR LF whose CR came before: no line.
    if (i < to && chunk[i] === LF && before === CR) i++;
    let cr = withCr ? -2 : -1;
    /** The next NUL at or after the line being read (-2: not searched yet), for `id` lines: searched forward only. */
    let nul = -2;
    while (i < to) {
      let j = chunk.indexOf(LF, i);
      if (j === -1 || j >= to) j = to;
      if (cr !== -1 && cr < i) cr = chunk.indexOf(CR, i);
      if (cr !== -1 && cr < j) j = cr;
      let next = j + 1;
      if (chunk[j] === CR && next < to && chunk[next] === LF) next++;
      if (next > to) next = to;
      if (chunk[i] === I && nul !== -1 && nul < i) nul = chunk.indexOf(NUL, i);
      this.take(chunk, i, j, nul);
      i = next;
    }
  }

  /**
   * Reads the line `bytes[start, end)` (no line break in it) as the parser does, into the
   * walk: a `data` line adds its heap ({@link lineHeap}); an `event` or `id` line sets or
   * releases that value (an `id` value holding NUL is ignored, as the parser ignores it:
   * `nul`, the first NUL at or after `start`, -1 for none; -2 or one before `start`: searched
   * here). A leading
   * BOM is skipped: the decoder drops one at the stream's start.
   */
  private take(bytes: Buffer, start: number, end: number, nul: number): void {
    let s = start;
    if (bytes[s] === BOM_0 && end - s >= 3 && bytes[s + 1] === BOM_1 && bytes[s + 2] === BOM_2) s += 3;
    const c = bytes[s];
    if (c === D) {
      const value = dataValueBytes(bytes, s, end);
      if (value === -1) return;
      this.walkData = true;
      this.walkHeap += lineHeap(value, bytes[end - 1]!);
    } else if (c === E) {
      const value = fieldValueBytes(bytes, s, end, EVENT);
      if (value !== -1) this.walkEvent = value > 0 ? KEPT_SET : KEPT_CLEARED;
    } else if (c === I) {
      const value = fieldValueBytes(bytes, s, end, ID);
      if (value === -1) return;
      if (value > 0) {
        const at = nul === -2 || nul < s ? bytes.indexOf(NUL, s) : nul;
        if (at !== -1 && at < end) return;
      }
      this.walkId = value > 0 ? KEPT_SET : KEPT_CLEARED;
    }
  }
}

const EVENT = [E, V, E, N, T];
const ID = [I, D];

function isBreak(b: number): boolean {
  return b === LF || b === CR;
}

/**
 * Bytes `a`, `b` (consecutive) end an empty line: both line breaks, and not one CR LF. `a` -1
 * (the stream's start) is a line start, as a break before it.
 */
function blankPair(a: number, b: number): boolean {
  return (a === -1 || isBreak(a)) && isBreak(b) && !(a === CR && b === LF);
}

/**
 * The bytes of the value of the line `bytes[start, end)` (no line break in it) when it is a
 * `data` field (`data` alone: 0; `data:` then one optional space dropped), else -1.
 */
function dataValueBytes(bytes: Buffer, start: number, end: number): number {
  const n = end - start;
  if (n < 4 || bytes[start] !== D || bytes[start + 1] !== A || bytes[start + 2] !== T || bytes[start + 3] !== A) return -1;
  if (n === 4) return 0;
  if (bytes[start + 4] !== COLON) return -1;
  return n > 5 && bytes[start + 5] === SPACE ? n - 6 : n - 5;
}

/** {@link dataValueBytes} for the field named `name` (its bytes). */
function fieldValueBytes(bytes: Buffer, start: number, end: number, name: readonly number[]): number {
  const k = name.length;
  const n = end - start;
  if (n < k) return -1;
  for (let i = 0; i < k; i++) if (bytes[start + i] !== name[i]) return -1;
  if (n === k) return 0;
  if (bytes[start + k] !== COLON) return -1;
  return n > k + 1 && bytes[start + k + 1] === SPACE ? n - k - 2 : n - k - 1;
}

/**
 * The parser's heap for one `data` line whose value has `valueBytes` bytes, beyond its text
 * (module doc); `lastByte`, the value's last byte (a one-byte value that is not ASCII decodes
 * to U+FFFD, a string of its own: not V8's shared single-character one).
 */
function lineHeap(valueBytes: number, lastByte: number): number {
  if (valueBytes > 1) return DATA_LINE_HEAP_BYTES;
  if (valueBytes === 1) return lastByte < 0x80 ? ONE_BYTE_DATA_LINE_HEAP_BYTES : REPLACED_BYTE_DATA_LINE_HEAP_BYTES;
  return EMPTY_DATA_LINE_HEAP_BYTES;
}
