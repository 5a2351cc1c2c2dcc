/**
 * The `data` lines of the SSE event block still open (no blank line yet), counted from the
 * bytes the line feeder hands to the parser as complete lines (sse-boundaries.ts
 * SseLineFeeder), so that the agent's `max_buffered_response_bytes` counts them
 * (sse-stage.ts, agent-guard.ts BufferLease).
 *
 * Why: eventsource-parser joins an event's data lines into its `data` until the blank line
 * that dispatches it (WHATWG HTML §9.2.6), up to its own buffer bound (`max_sse_event_bytes` +
 * 64 KiB). Only the incomplete line was counted, so an event that never ended, made of many
 * complete `data:` lines, held up to that bound per stream uncounted: 30 concurrent calls held
 * ~130 MB under a 1 MiB cap, the gauge near 0 (a hostile new user's trial 10, F3:
 * test/regressions/sse-event-lines-escape-buffer-cap.test.ts).
 *
 * What is counted: for each complete line of the open block whose field is `data` (`data:...`
 * or `data` alone, the lines the parser joins), its value (after `data:` and one optional
 * space) and one byte for the LF the parser joins it with: the parser's `data` plus one (in
 * UTF-16 units for ASCII; a non-ASCII character is two or three bytes here, one or two units
 * of a two-byte string there). Not the field names: a seller's empty `data:` lines would
 * otherwise count six times what they hold. Other lines (comments, `event:`, `id:`, unknown
 * fields) hold nothing in the parser once read, and are not counted: a block of comments
 * without a blank line holds nothing. A blank line ends the block: the count is 0 again (the
 * parser dispatched the event, or dropped a block without data).
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

export class SseOpenEventData {
  /** Bytes of the open block's `data` values, one more per line (module doc); 0 at a block's end. */
  bytes = 0;
  /** The last byte taken, and the one before it (-1: none; the stream's start is a line start). */
  private prev1 = -1;
  private prev2 = -1;

  /**
   * Takes the complete lines `chunk[from, to)`: `from` is a line start (or the LF of a CR LF
   * whose CR ended the bytes before), `chunk[to - 1]` a line break.
   */
  lines(chunk: Buffer, from: number, to: number): void {
    if (to <= from) return;
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
      return;
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
    const count = dataLineBytes(chunk, open, to, open > from ? chunk[open - 1]! : p1, withCr);
    this.bytes = (ended ? 0 : this.bytes) + count;
  }

  /**
   * Takes one complete line held over chunk edges (SseLineFeeder: its bytes and the first byte
   * of its line break; it is not blank, and starts at a line start).
   */
  line(line: Buffer): void {
    const n = line.length;
    if (n === 0) return;
    const value = dataValueBytes(line, 0, n - (line[n - 1] === LF || line[n - 1] === CR ? 1 : 0));
    if (value !== -1) this.bytes += value + 1;
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

/**
 * {@link SseOpenEventData.bytes} of the complete, non-blank lines `chunk[from, to)`: their
 * `data` values, one more per line; `before` is the byte before `from` (-1: none), `withCr`
 * whether the range may hold a CR.
 */
function dataLineBytes(chunk: Buffer, from: number, to: number, before: number, withCr: boolean): number {
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
    if (value !== -1) count += value + 1;
    i = next;
  }
  return count;
}
