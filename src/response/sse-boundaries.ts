/**
 * Finds SSE event boundaries (blank lines) in raw bytes as they arrive, across chunk edges,
 * so the SSE stage can feed the parser one event block at a time and know the exact byte
 * count through the end of each event. That count is what a resume token carries: after a
 * `Last-Event-ID` reconnect the seller replays only the events after that id, so counting
 * through the event's blank line neither loses nor double-counts a byte.
 *
 * A blank line is LF LF or LF CR LF (WHATWG HTML §9.2.6 line endings). CR-only line endings
 * are valid SSE but are not detected here: such a stream is then counted per chunk, which
 * can only over-count (never lets bytes through uncounted).
 */
const LF = 0x0a;
const CR = 0x0d;

export class SseBoundaryScanner {
  /** The last two bytes of the stream before the current chunk (-1 when none). */
  private prev1 = -1;
  private prev2 = -1;

  /** Offsets (exclusive ends) within `chunk` at which an event block ends, ascending. */
  ends(chunk: Uint8Array): number[] {
    const out: number[] = [];
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      const p1 = i >= 1 ? chunk[i - 1] : this.prev1;
      const p2 = i >= 2 ? chunk[i - 2] : i === 1 ? this.prev1 : this.prev2;
      if (p1 === LF || (p1 === CR && p2 === LF)) out.push(i + 1);
    }
    const n = chunk.length;
    if (n >= 2) {
      this.prev2 = chunk[n - 2]!;
      this.prev1 = chunk[n - 1]!;
    } else if (n === 1) {
      this.prev2 = this.prev1;
      this.prev1 = chunk[0]!;
    }
    return out;
  }
}
