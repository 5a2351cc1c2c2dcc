/**
 * An SSE event block that spans input chunks, held as the seller's bytes and dispatched from
 * them once its blank line arrives, without the line feeder's decode and eventsource-parser
 * (sse-chunk-taker.ts `passHeld`; the stage's `deliver` gets the event: sse-stage.ts).
 *
 * Why (issue 5, bench/README.md "SSE one-event results"): a 1 MiB response event arrives in
 * many chunks. Through the parser, its one `data:` line was joined, decoded into a 1 MiB
 * string (large-object space, freed only by a mark-compact), split by the parser, and
 * searched as a string: the gateway spent 4.2 ms of CPU per such event against the
 * pass-through's 1.0 ms, 17% of it in the collector.
 *
 * Held: only the form MCP servers write, whose event eventsource-parser would dispatch with
 * a result known in advance: an optional `event: message` line, then one `data: ` line (a
 * space after the colon), then the blank line; LF line endings only; no other field. The
 * event is then `{ event: 'message' or undefined, id: undefined, data: <the line's value> }`
 * (WHATWG HTML §9.2.6: one space after the colon is dropped; an event without an `id` field
 * has none in eventsource-parser 3, which clears it at each dispatch). Its data bytes are
 * handed over only when non-empty and valid UTF-8 (decoding would replace invalid bytes with
 * U+FFFD), so they are exactly the UTF-8 encoding of the data the parser would give.
 *
 * Anything else gives the held bytes back ({@link release}) to the line feeder, in order, as
 * if they had just arrived: a second line, a CR, a block over `maxBytes`. Nothing of the
 * block reached the host or the parser before, so the result is what the feeder would have
 * made of them (the feeder's own cap and the parser's bound then apply as before).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { CR, LF } from '../mcp/json-bytes.js';
import { bodyPool } from './body-pool.js';

const MESSAGE_LINE = Buffer.from('event: message\n', 'latin1');
const DATA_FIELD = Buffer.from('data: ', 'latin1');

/** {@link SseHeldBlock.extend}: the whole chunk was held; the block goes on. */
export const HELD = -1;
/** {@link SseHeldBlock.extend}: the block is not in the held form (or too large): {@link SseHeldBlock.release} it. */
export const NOT_HELD = 0;

/** A completed held block (see {@link SseHeldBlock.complete}). */
export interface HeldEvent {
  /** `message` when the block had the `event: message` line. */
  readonly event: 'message' | undefined;
  /** The data's UTF-8 bytes (non-empty, valid), in one buffer, possibly lent by the body pool (body-pool.ts). */
  readonly data: Buffer;
}

export class SseHeldBlock {
  private pieces: Buffer[] = [];
  private heldBytes = 0;
  /** The data line's LF is the last byte held: the next byte ends the block (LF) or not. */
  private lineDone = false;
  /** Bytes before the data value in the first piece (`event: message` line, `data: `). */
  private valueStart = 0;

  /** @param maxBytes most bytes a held block may reach (the line feeder's cap): past it, {@link NOT_HELD} */
  constructor(readonly maxBytes: number) {}

  /** Bytes held (0: none). */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * Where the data line's value starts, counted from `start`, when `chunk[start,
   * chunk.length)` is the start of a block in the held form (module doc) that this chunk does
   * not end: the `event: message` line or none, then `data: ` and the line's bytes so far (no
   * LF after `data: `, no CR), within `maxBytes`; else -1. `start` is an event start.
   */
  valueOffset(chunk: Buffer, start: number): number {
    const n = chunk.length;
    let at = start;
    if (startsWith(chunk, at, MESSAGE_LINE)) at += MESSAGE_LINE.length;
    if (!startsWith(chunk, at, DATA_FIELD)) return -1;
    if (n - start > this.maxBytes || chunk.indexOf(LF, at) !== -1 || chunk.indexOf(CR, start) !== -1) return -1;
    return at + DATA_FIELD.length - start;
  }

  /** Starts holding `rest`, a block's start whose value starts at `valueAt` ({@link valueOffset}); nothing is held before. */
  begin(rest: Buffer, valueAt: number): void {
    this.valueStart = valueAt;
    this.hold(rest);
  }

  /**
   * Looks at the next chunk of the stream while a block is held: {@link HELD} when the chunk
   * goes on with the data line (it is then held), {@link NOT_HELD} when the block leaves the
   * held form or would pass `maxBytes` (nothing is held from this chunk), else the offset in
   * `chunk` just past the block's blank line (nothing held from this chunk yet: see
   * {@link complete}).
   */
  extend(chunk: Buffer): number {
    const n = chunk.length;
    if (n === 0) return HELD;
    let end: number;
    if (this.lineDone) {
      if (chunk[0] !== LF) return NOT_HELD;
      end = 1;
    } else {
      const lf = chunk.indexOf(LF);
      if (lf === -1 || lf === n - 1) {
        if (this.heldBytes + n > this.maxBytes || chunk.indexOf(CR) !== -1) return NOT_HELD;
        this.hold(chunk);
        if (lf !== -1) this.lineDone = true;
        return HELD;
      }
      if (chunk[lf + 1] !== LF) return NOT_HELD;
      end = lf + 2;
      const cr = chunk.indexOf(CR);
      if (cr !== -1 && cr < lf) return NOT_HELD;
    }
    return this.heldBytes + end > this.maxBytes ? NOT_HELD : end;
  }

  /**
   * The event of the block held and `chunk[0, end)` ({@link extend}'s offset), and nothing
   * held any more; or undefined, with the block still held for {@link release}, when its
   * data is empty or not valid UTF-8. The data is copied once into one buffer (body-pool.ts
   * concat: give it back with recycleAfterSend once the host's stream is over).
   */
  complete(chunk: Buffer, end: number): HeldEvent | undefined {
    const total = this.heldBytes + end;
    // The data: from valueStart to before the data line's LF and the blank line.
    const valueEnd = total - 2;
    if (valueEnd <= this.valueStart) return undefined;
    const parts: Buffer[] = [];
    let at = 0;
    for (const piece of [...this.pieces, chunk.subarray(0, end)]) {
      const from = Math.max(this.valueStart - at, 0);
      const to = Math.min(valueEnd - at, piece.length);
      if (to > from) parts.push(from === 0 && to === piece.length ? piece : piece.subarray(from, to));
      at += piece.length;
    }
    const data = bodyPool.concat(parts);
    if (!isAscii(data) && !isUtf8(data)) return undefined;
    const event = this.valueStart > DATA_FIELD.length ? 'message' : undefined;
    this.clear();
    return { event, data };
  }

  /** The bytes held, in stream order, and nothing held any more. */
  release(): Buffer[] {
    const pieces = this.pieces;
    this.clear();
    return pieces;
  }

  private hold(piece: Buffer): void {
    this.pieces.push(piece);
    this.heldBytes += piece.length;
  }

  private clear(): void {
    this.pieces = [];
    this.heldBytes = 0;
    this.lineDone = false;
    this.valueStart = 0;
  }
}

/** `chunk[at, at + prefix.length)` is `prefix`. */
function startsWith(chunk: Buffer, at: number, prefix: Buffer): boolean {
  return at + prefix.length <= chunk.length && chunk.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}
