/**
 * What eventsource-parser holds for the SSE event block still open (no blank line yet), counted
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
 *   (104), {@link ONE_BYTE_DATA_LINE_HEAP_BYTES} (64) for a value of one byte,
 *   {@link EMPTY_DATA_LINE_HEAP_BYTES} (32) for an empty value. Counted by value bytes, not
 *   finer (a value of 2-12 one-byte characters holds 96): an event of 100,000 `data: x` lines
 *   (800 KB; test/regressions/sse-many-data-lines-freezes-gateway.test.ts) counts 7.2 MB,
 *   under the bound at the default 4 MiB (SseLineFeeder.maxOpenBytes), where 104 per line
 *   counted it over.
 * A part without a `data` line is not counted: comments, `event:`, `id:` and unknown-field
 * lines hold nothing once read but the block's last `event` and `id` values (a slice each, at
 * most two texts). A blank line ends the block: the count is 0 again (the parser dispatched
 * the event, or dropped a block without data).
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
 * block's part in this range) are walked: the work is in the open event's bytes only, never in
 * the events of the range that ended.
 */
import { COLON, CR, LF, SPACE } from '../mcp/json-bytes.js';

const LF_LF = Buffer.from('\n\n', 'latin1');
/** `data`, the field the parser joins. */
const D = 0x64;
const A = 0x61;
const T = 0x74;

/** Heap the parser builds per `data` line of an open event beyond the text it slices the value from, for a value of 2 bytes or more (module doc: measured). */
export const DATA_LINE_HEAP_BYTES = 104;
/** ... for a value of 1 byte (an ASCII character: V8's single-character string, shared): two ConsStrings. */
export const ONE_BYTE_DATA_LINE_HEAP_BYTES = 64;
/** ... for an empty value (`data:`, `data`): one ConsString. */
export const EMPTY_DATA_LINE_HEAP_BYTES = 32;

export class SseOpenEventData {
  /** Heap bytes the parser holds for the open block (module doc); 0 at a block's end. */
  bytes = 0;
  /** The last byte taken, and the one before it (-1: none; the stream's start is a line start). */
  private prev1 = -1;
  private prev2 = -1;

  /**
   * Takes the complete lines `chunk[from, to)`: `from` is a line start (or the LF of a CR LF
   * whose CR ended the bytes before), `chunk[to - 1]` a line break. Counts the heap of the
   * `data` lines of the open block in them; returns where the open block's part in them
   * starts (`from` ..< `to`) when that part holds a `data` line, -1 otherwise. The caller hands
   * that part to the parser as a string of its own and counts it ({@link part}).
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
      this.bytes = 0;
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
    const heap = dataLinesHeap(chunk, open, to, open > from ? chunk[open - 1]! : p1, withCr);
    if (ended) this.bytes = 0;
    if (heap === 0) return -1;
    this.bytes += heap;
    return open;
  }

  /** The part `lines` returned, of `bytes` bytes, went to the parser as a string of its own; `wide`: not ASCII (module doc). */
  part(bytes: number, wide: boolean): void {
    this.bytes += wide ? 2 * bytes : bytes;
  }

  /**
   * Takes one complete line held over chunk edges (SseLineFeeder: its bytes and the first byte
   * of its line break; it is not blank, and starts at a line start), handed to the parser as a
   * string of its own (`wide`: not ASCII): counted whole when it is a `data` line, with its heap.
   */
  line(line: Buffer, wide: boolean): void {
    const n = line.length;
    if (n === 0) return;
    const value = dataValueBytes(line, 0, n - (line[n - 1] === LF || line[n - 1] === CR ? 1 : 0));
    if (value !== -1) this.bytes += (wide ? 2 * n : n) + lineHeap(value);
    this.prev2 = n >= 2 ? line[n - 2]! : this.prev1;
    this.prev1 = line[n - 1]!;
  }

  /** The bytes so far ended with a blank line that went elsewhere (a raw-forwarded or held block). */
  blockPassed(): void {
    this.bytes = 0;
    this.prev1 = LF;
    this.prev2 = LF;
  }

  /** Forgets everything (the parser was reset, or the stream ended). */
  reset(): void {
    this.bytes = 0;
    this.prev1 = -1;
    this.prev2 = -1;
  }
}

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

/** The parser's heap for one `data` line whose value has `valueBytes` bytes, beyond its text (module doc). */
function lineHeap(valueBytes: number): number {
  return valueBytes > 1 ? DATA_LINE_HEAP_BYTES : valueBytes === 1 ? ONE_BYTE_DATA_LINE_HEAP_BYTES : EMPTY_DATA_LINE_HEAP_BYTES;
}

/**
 * The parser's heap for the `data` lines among the complete, non-blank lines `chunk[from,
 * to)`, beyond their text ({@link lineHeap} each; 0: none); `before` is the byte before `from`
 * (-1: none), `withCr` whether the range may hold a CR.
 */
function dataLinesHeap(chunk: Buffer, from: number, to: number, before: number, withCr: boolean): number {
  let i = from;
  // The LF of a CR LF whose CR came before: no line.
  if (i < to && chunk[i] === LF && before === CR) i++;
  let count = 0;
  let cr = withCr ? -2 : -1;
  while (i < to) {
    let j = chunk.indexOf(LF, i);
    if (j === -1 || j >= to) j = to;
    if (cr !== -1 && cr < i) cr = chunk.indexOf(CR, i);
    if (cr !== -1 && cr < j) j = cr;
    let next = j + 1;
    if (chunk[j] === CR && next < to && chunk[next] === LF) next++;
    if (next > to) next = to;
    const value = dataValueBytes(chunk, i, j);
    if (value !== -1) count += lineHeap(value);
    i = next;
  }
  return count;
}
