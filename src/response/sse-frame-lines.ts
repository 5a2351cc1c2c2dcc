import { CR, LF } from '../mcp/json-bytes.js';

/** `retry`: the field name of a line whose value eventsource-parser reports as a `retry:` frame. */
const RETRY = [0x72, 0x65, 0x74, 0x72, 0x79];
const COLON = 0x3a;
/** A UTF-8 BOM's bytes, which a fresh decoder drops before the first line. */
const BOM = [0xef, 0xbb, 0xbf];
const NONE: readonly number[] = [];
/** The bytes of a line's start {@link frameLineEnds} reads at most (a BOM, `retry`): its `head`'s length. */
export const FRAME_LINE_HEAD_BYTES = BOM.length + RETRY.length;

/**
 * The ends of the lines in `chunk[from, end)` that may queue a frame in the middle of an event
 * block: a comment (`:` first) or a `retry` field (sse-stage.ts `onComment`, `onRetry`), after
 * a UTF-8 BOM or not. Each end is the offset just past the line's first line-break byte (its
 * CR, or its LF), where the line feeder hands the line to the parser whole (sse-boundaries.ts
 * SseLineFeeder: a CR's LF that follows counts as the next range's). Ascending; lines not ended
 * in the range are left out. `head`: the first bytes (up to FRAME_LINE_HEAD_BYTES) of the line that began before
 * `from` (the feeder's held incomplete line), empty when `from` starts a line.
 *
 * Used on a stream without a total (sse-undelivered.ts): the stage takes a range in pieces
 * ending there, so that such a frame lowers the count by the bytes through its own line, not
 * the bytes after it in the same range, whatever the chunking. Over-matching (`retryx:`, a
 * BOM inside the stream) only cuts a range once more: the counts and the parse stay the same.
 * Cost: one native search per line break and byte tests at each line's start.
 */
export function frameLineEnds(chunk: Buffer, from: number, end: number, head: Buffer): readonly number[] {
  let out: number[] | undefined;
  let at = from;
  let lineHead: Buffer | undefined = head.length > 0 ? head : undefined;
  let cr = nextIndex(chunk, CR, from, end);
  while (at < end) {
    if (cr < at) cr = nextIndex(chunk, CR, at, end);
    const lf = nextIndex(chunk, LF, at, end);
    const brk = Math.min(cr, lf);
    if (brk === end) break;
    if (startsFrameLine(lineHead ?? EMPTY, chunk, at, brk)) (out ??= []).push(brk + 1);
    lineHead = undefined;
    at = brk + 1;
  }
  return out ?? NONE;
}

const EMPTY = Buffer.alloc(0);

/** The first index of `byte` in `chunk[from, end)`, else `end`. */
function nextIndex(chunk: Buffer, byte: number, from: number, end: number): number {
  const k = chunk.indexOf(byte, from);
  return k === -1 || k > end ? end : k;
}

/** Whether the line whose bytes are `head` then `chunk[at, brk)` starts with `:` or `retry`, after a BOM or not. */
function startsFrameLine(head: Buffer, chunk: Buffer, at: number, brk: number): boolean {
  const n = head.length + brk - at;
  const byte = (k: number): number => (k < head.length ? head[k]! : chunk[at + k - head.length]!);
  let k = 0;
  if (n >= 3 && BOM.every((b, i) => byte(i) === b)) k = 3;
  if (k < n && byte(k) === COLON) return true;
  return n - k >= RETRY.length && RETRY.every((b, i) => byte(k + i) === b);
}
