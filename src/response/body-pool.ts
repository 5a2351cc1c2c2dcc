/**
 * Reused buffers for the large response bodies the JSON stage reads whole (read-body.ts
 * BodyBytes, json-stage.ts), and for the rewritten answers written from them ({@link
 * BodyPool.splice}: dedupe-splice.ts, lift-splice.ts, splice.ts; {@link BodyPool.concat}: an
 * SSE event's data held across chunks, sse-held-block.ts; JSON and SSE stages).
 *
 * Why (issue 5, JSON (a) at 4 MiB, measured with --trace-gc): a fresh 4 MiB buffer per
 * response outlives a few scavenges while the body arrives, is promoted, and is freed only
 * by a mark-compact; V8 starts one whenever the external memory allocated since the last
 * one passes its soft limit, so about every fifth 4 MiB response paid a 5-20 ms
 * mark-compact. A buffer given back once its response is over and taken by the next body
 * costs no allocation at all (gateway CPU per 4 MiB (a) response in the bench: ~20 ms
 * before, ~8 ms with this and the scan work).
 *
 * Safety: a buffer is lent to one body at a time. It is given back only by
 * {@link BodyPool.recycleAfterSend}, once the host's response to that body's exchange has
 * closed (sent whole, or its connection gone: either way nothing reads the buffer again), and
 * at most once (the lent mark is cleared when the give-back is scheduled). The JSON stage
 * schedules it once the body is answered, synchronously, with the body itself or with a copy
 * (json-stage.ts), and schedules a rewritten answer's buffer once it is sent (sendBody); the
 * SSE stage schedules a rewritten event's buffer once it is queued for the host (the host's
 * response closes only after its writes are flushed or dropped); a body abandoned on the way
 * (a bound, a reset) is never given back: its buffer is garbage like any other. A taker sees only the bytes it wrote itself (BodyBytes
 * exposes `[0, filled)`), never an earlier body's.
 *
 * Memory: buffers are sized by power-of-two classes from {@link POOLED_MIN_BYTES}; the idle
 * buffers together hold at most {@link POOL_IDLE_MAX_BYTES} (a buffer given back past that is
 * dropped), so the pool keeps at most that much resident for the process's life.
 */

/**
 * Smallest body taken from the pool. Was 256 KiB; at 64 KiB a fresh buffer per response still
 * cost the collector dearly (issue 5, JSON (a) 64 KiB, bench with --cpu-prof: GC self time
 * 971 ms in the gateway against 233 ms in the pass-through over the same load; gateway CPU per
 * response 677-864 µs against the pass-through's 277-297). Pooled from 16 KiB: 374-516 µs
 * against 318-396 (p99 10.5-13.7 ms, was 19-23). Smaller bodies mostly arrive in one chunk,
 * which is the body as it is (read-body.ts BodyBytes): no buffer is made for them at all.
 */
export const POOLED_MIN_BYTES = 16 * 1024;
/** Most bytes the idle buffers hold together; also the largest class pooled. */
export const POOL_IDLE_MAX_BYTES = 32 * 1024 * 1024;

/** What {@link BodyPool.recycleAfterSend} watches: the host's response (`reply.raw`). */
export interface ClosingResponse {
  once(event: 'close', listener: () => void): unknown;
}

export class BodyPool {
  /** Idle buffers by capacity (a power of two). */
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;
  /** Backing stores lent out and not yet scheduled for return. */
  private readonly lent = new WeakSet<ArrayBuffer>();

  /**
   * @param minBytes  smallest size served
   * @param maxIdleBytes  most bytes kept idle (and the largest capacity served)
   */
  constructor(
    readonly minBytes = POOLED_MIN_BYTES,
    readonly maxIdleBytes = POOL_IDLE_MAX_BYTES,
  ) {}

  /**
   * A buffer of at least `size` bytes (its length is its class's capacity, its contents
   * whatever an earlier body left), lent until given back; undefined when `size` is outside
   * the pooled range (the caller allocates its own).
   */
  take(size: number): Buffer | undefined {
    if (size < this.minBytes || size > this.maxIdleBytes) return undefined;
    const capacity = classOf(size);
    let buffer = this.idle.get(capacity)?.pop();
    if (buffer !== undefined) this.idleBytes -= capacity;
    else buffer = Buffer.allocUnsafeSlow(capacity);
    this.lent.add(buffer.buffer as ArrayBuffer);
    return buffer;
  }

  /**
   * Gives `body`'s buffer back once `response` has closed, when `body` is a view of a buffer
   * lent by {@link take} and not already scheduled; otherwise does nothing. Call it once
   * `body` is answered: handed to `response` as it is, or no longer read by anything (the
   * answer a copy); nothing may keep a reference to it past the response's close.
   */
  recycleAfterSend(response: ClosingResponse, body: Buffer): void {
    const store = body.buffer as ArrayBuffer;
    if (!this.lent.has(store)) return;
    this.lent.delete(store);
    response.once('close', () => this.give(store));
  }

  /**
   * `Buffer.concat(parts)`, written into a buffer lent by {@link take} when the total is in the
   * pooled range (then give it back with {@link recycleAfterSend} once sent; one never given
   * back is garbage like any other). Why pooled (issue 5, bench `json-b-65536` with
   * --trace-gc: 50 mark-compacts in 15 s once the dedupe stopped parsing, 1 before): a fresh
   * output buffer per rewritten answer is freed only by a collection, and a rewrite left too
   * little other garbage for the scavenges that free them.
   *
   * A string part is written as its UTF-8 bytes, straight into the result (issue 5, 1 KiB (b)
   * and (c): `Buffer.from` of the summary cost more than the copy of the rest of the message).
   */
  concat(parts: readonly (Uint8Array | string)[]): Buffer {
    return this.splice(NOTHING, [{ start: 0, end: 0, insert: parts }]);
  }

  /**
   * `source` with each edit's range `[start, end)` replaced by its `insert` parts, written
   * into one buffer as {@link concat} describes (pooled when the total is in range; a string
   * part as its UTF-8 bytes; concat is this with no source). `edits` are in ascending order
   * of `start` and do not overlap (an insertion has `start === end`); the bytes between them
   * are copied from `source` with no intermediate view. Throws when fewer than the computed
   * size were written (edits that break those rules), never returning unwritten bytes.
   *
   * Why (issue 5, 1 KiB (b) and (c)): the `subarray` views of the seller's bytes that
   * {@link concat} needs, each a `Buffer` object, were about half of the ~1.4 µs the output
   * of a 1 KiB dedupe cost in a loop; copied by range it costs ~0.7 µs.
   */
  splice(source: Buffer, edits: readonly SpliceEdit[]): Buffer {
    let size = source.length;
    for (const edit of edits) {
      size -= edit.end - edit.start;
      for (const part of edit.insert) size += partLength(part);
    }
    // Exactly `size` bytes: a view of a lent buffer in the pooled range, else a fresh one.
    const pooled = this.take(size);
    const lent = pooled === undefined ? Buffer.allocUnsafe(size) : pooled.subarray(0, size);
    let at = 0;
    let from = 0;
    for (const edit of edits) {
      at += source.copy(lent, at, from, edit.start);
      for (const part of edit.insert) at = put(lent, at, part);
      from = edit.end;
    }
    at += source.copy(lent, at, from);
    // The view may be a recycled buffer holding an earlier body (another agent's): edits that
    // overlap or run out of order size it wrong, and a string cut at its end stops at a whole
    // character, leaving its tail unwritten. One check here, none per edit (review 30, finding 2).
    if (at !== size) throw new Error(`splice wrote ${at} of ${size} bytes: its edits overlap, are out of order or out of range`);
    return lent;
  }

  /** Bytes held by idle buffers (tests, metrics). */
  get idleByteCount(): number {
    return this.idleBytes;
  }

  private give(store: ArrayBuffer): void {
    const capacity = store.byteLength;
    if (this.idleBytes + capacity > this.maxIdleBytes) return;
    let list = this.idle.get(capacity);
    if (list === undefined) this.idle.set(capacity, (list = []));
    list.push(Buffer.from(store, 0, capacity));
    this.idleBytes += capacity;
  }
}

/** One replacement of {@link BodyPool.splice}: `source[start, end)` replaced by the `insert` parts, in order. */
export interface SpliceEdit {
  readonly start: number;
  readonly end: number;
  readonly insert: readonly (Uint8Array | string)[];
}

/** The source {@link BodyPool.concat} splices its parts into. */
const NOTHING = Buffer.alloc(0);

/** The bytes a part of {@link BodyPool.splice} takes: a string's UTF-8 length. */
function partLength(part: Uint8Array | string): number {
  return typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length;
}

/** Writes `part` into `out` at `at`; returns the offset after it. */
function put(out: Buffer, at: number, part: Uint8Array | string): number {
  if (typeof part === 'string') return at + out.write(part, at, 'utf8');
  out.set(part, at);
  return at + part.length;
}

/** The power of two at or above `size`. */
function classOf(size: number): number {
  return 2 ** Math.ceil(Math.log2(size));
}

/** The process's pool (one event loop: no locking needed). */
export const bodyPool = new BodyPool();
