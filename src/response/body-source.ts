/**
 * The seller's body as the stages see it: decoded chunks, with the raw (wire) and decoded
 * byte counts bounded where the bytes are (spec: mcp-response-extraction.md, Size Limits:
 * "bound raw and decoded bytes"). Built once per response by the pipeline.
 */
import type { Readable } from 'node:stream';
import type { Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { findGatewayAbort } from '../errors/abort.js';
import { transportErrorCode } from '../routing/upstream-failure.js';
import { WireOverheadError } from '../routing/wire-meter.js';
import { ByteBudget } from './byte-budget.js';
import { DecodeError, countUncodedChunk, decodeStream, type DecodeOptions, type DecoderRoom } from './decode.js';
import { LoadShedError, type BufferLease } from '../admission/agent-guard.js';

export interface BodySource {
  /** Decoded chunks. Throws DecodeError on a raw/decoded breach or corrupt data; other errors (an abort) propagate. */
  readonly chunks: AsyncGenerator<Buffer>;
  /**
   * {@link chunks}, with a coded body's brotli decoder charged to `room` (decode.ts
   * DecoderRoom: the reader's buffer lease) from before its first byte is decoded. Made once:
   * whichever of the two is used first decides.
   */
  chunksWithin(room: DecoderRoom | undefined): AsyncGenerator<Buffer>;
  readonly raw: ByteBudget;
  readonly decoded: ByteBudget;
  /** The upstream stream itself (destroy it to stop reading without consuming `chunks`). */
  readonly stream: Readable;
  /**
   * True while {@link readDirect} may read the body instead of `chunks`: no content coding,
   * `chunks` never touched, the stream still readable.
   */
  readonly direct: boolean;
}

/**
 * @param limitBytes bound for the raw bytes, and for the decoded bytes unless
 *   `decodedLimitBytes` is given; `Infinity` where another bound applies instead (the SSE
 *   stage's cumulative and per-event bounds).
 * @param decodedLimitBytes bound for the bytes each decoding layer produces (decode.ts).
 * @param options how a coded body is decoded (decode.ts DecodeOptions: an empty one is invalid
 *   where content is needed).
 */
export function openBodySource(stream: Readable, codings: readonly string[], limitBytes: number, decodedLimitBytes = limitBytes, options?: DecodeOptions): BodySource {
  return new OpenBody(stream, codings, new ByteBudget(limitBytes, 'raw_bytes'), new ByteBudget(decodedLimitBytes, 'decoded_bytes'), options);
}

class OpenBody implements BodySource {
  private generator: AsyncGenerator<Buffer> | undefined;
  constructor(
    readonly stream: Readable,
    private readonly codings: readonly string[],
    readonly raw: ByteBudget,
    readonly decoded: ByteBudget,
    private readonly options: DecodeOptions | undefined,
  ) {}

  /** Made on first use (decode.ts `decodeStream`), so a body read by `readDirect` never builds it. */
  get chunks(): AsyncGenerator<Buffer> {
    return this.chunksWithin(undefined);
  }

  chunksWithin(room: DecoderRoom | undefined): AsyncGenerator<Buffer> {
    return (this.generator ??= decodeStream(this.stream as AsyncIterable<Buffer>, this.codings, this.raw, this.decoded, room, this.options));
  }

  get direct(): boolean {
    return this.codings.length === 0 && this.generator === undefined && this.stream.readable;
  }
}

/** The bytes a response holds against its agent's cap. */
export type HeldBytes = Pick<BufferLease, 'add' | 'mustWait' | 'ready'> & { readonly shedRetryAfterS?: number | undefined };

/** Where {@link readDirect} keeps each chunk it reads (an array, or read-body.ts BodyBytes). */
export interface ChunkSink {
  push(chunk: Buffer): unknown;
}

/**
 * Reads a body whose `direct` is true to its end with the stream's own events, into
 * `chunks`: what `for await (const chunk of source.chunks)` does for an uncoded body (each
 * chunk counted into `raw`, then `decoded`, as it arrives; the crossing chunk dropped), at a
 * fraction of the cost of two stacked async iterators for a small body (issue 5: a 1 KiB
 * answer was ~5 µs of promises and iterator bookkeeping).
 *
 * Each kept chunk is added to `hold`; when it then must wait, the stream is paused until
 * `hold.ready` (as the loop awaits it before reading on).
 *
 * Resolves with undefined at the end of the body, or with what `inspect` returned to stop
 * the read (the stream is then destroyed). Rejects as the iteration throws: a DecodeError
 * `raw_bytes` / `decoded_bytes` (the stream is destroyed), a LoadShedError when `hold` was
 * shed while the read waited for it (`hold.shedRetryAfterS` set: the stream is destroyed;
 * admission/agent-guard.ts), the stream's error, or ERR_STREAM_PREMATURE_CLOSE when it closes
 * before its end.
 */
export function readDirect<T>(source: BodySource, chunks: ChunkSink, inspect?: (chunk: Buffer) => T | undefined, hold?: HeldBytes): Promise<T | undefined> {
  const { stream, raw, decoded } = source;
  return new Promise<T | undefined>((resolve, reject) => {
    // Listeners stay attached once settled (they then do nothing): destroying an unfinished
    // undici body emits a RequestAbortedError, which must find an 'error' listener; and a
    // removal per request costs more than a no-op call on a stream that is over anyway.
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      return true;
    };
    const fail = (err: Error): void => {
      settle();
      stream.destroy();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      const n = chunk.length;
      const breach = countUncodedChunk(raw, decoded, n);
      if (breach !== undefined) return fail(breach);
      chunks.push(chunk);
      const stop = inspect?.(chunk);
      if (stop !== undefined) {
        settle();
        stream.destroy();
        resolve(stop);
        return;
      }
      if (hold !== undefined) {
        hold.add(n);
        if (hold.mustWait) {
          stream.pause();
          void hold.ready(stream).then(() => {
            if (hold.shedRetryAfterS === undefined) stream.resume();
            else fail(new LoadShedError(hold.shedRetryAfterS));
          });
        }
      }
    };
    const onEnd = (): void => {
      if (settle()) resolve(undefined);
    };
    const onError = (err: Error): void => {
      if (settle()) reject(err);
    };
    const onClose = (): void => {
      if (settle()) reject(prematureClose());
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * The chunks of a body whose `direct` is true, for a reader that awaits between chunks (the
 * SSE stage: drains, the agent guard's lease): what `for await (const chunk of
 * source.chunks)` gives for an uncoded body, chunk for chunk, without its two stacked async
 * iterators (decode.ts's generator over Node's stream iterator and its end-of-stream
 * watcher: ~7 µs of a 1 KiB one-event SSE answer, issue 5). Built on the stream's own
 * `read()` and 'readable', as Node's iterator is: a chunk already buffered is taken with no
 * promise at all, one chunk at a time as it arrived (not all buffered chunks concatenated,
 * as `read()` and Node's iterator give them: {@link firstBufferedLength}), and the first
 * wait is one microtask (a one-event answer arrives whole
 * with its head, and undici pushes its body just after handing the response out).
 *
 * - Each chunk is counted into `raw`, then `decoded`, as it is taken; a breach throws the
 *   DecodeError `raw_bytes` / `decoded_bytes` and the chunk is dropped.
 * - Back-pressure: the stream is read only when {@link read} is called, so a reader that
 *   waits leaves the bytes in the stream, which then stops its source (undici pauses the
 *   socket).
 * - The end: {@link read} returns undefined after 'end'. An error: {@link read} throws the
 *   stream's error, or ERR_STREAM_PREMATURE_CLOSE when it closed before its end (also when
 *   it was destroyed before this reader was made).
 * - The reader does not close the stream: the caller releases it when done, whatever ended
 *   the loop (decode.ts `releaseBody`). Its listeners stay attached (they do nothing once
 *   the stream is over): destroying an unfinished undici body emits a RequestAbortedError,
 *   which must find an 'error' listener.
 */
export class DirectChunks {
  /** undefined while the body runs; null after its end; else what ended it. */
  private over: Error | null | undefined = undefined;
  private wake: (() => void) | undefined = undefined;
  private listening = false;
  private readonly stream: Readable;
  /**
   * False until the first {@link wait}, which lasts the rest of this turn only: undici hands
   * out a response while parsing its head, and pushes the body bytes parsed with it (a small
   * answer's whole body, and its end) just after, in the same turn. Nothing else (no timer,
   * no I/O) can happen meanwhile, so a caller need not arm its timers for that wait.
   */
  waited = false;

  constructor(private readonly source: BodySource) {
    const stream = (this.stream = source.stream);
    if (stream.destroyed) this.over = stream.errored ?? (stream.readableEnded ? null : prematureClose());
    stream.on('end', () => this.settle(null));
    stream.on('error', (err: Error) => this.settle(err));
    stream.on('close', () => this.settle(prematureClose));
  }

  /**
   * The next chunk, counted: a Buffer when one is buffered now; null when none is (then
   * {@link wait} and call again); undefined at the end. Throws as described above.
   */
  read(): Buffer | null | undefined {
    const over = this.over;
    if (over === undefined) {
      // One buffered chunk at a time, as it arrived: no concatenation (firstBufferedLength).
      const chunk = this.stream.read(firstBufferedLength(this.stream)) as Buffer | null;
      if (chunk === null) return null;
      const breach = countUncodedChunk(this.source.raw, this.source.decoded, chunk.length);
      if (breach !== undefined) throw breach;
      return chunk;
    }
    if (over === null) return undefined;
    throw over;
  }

  /**
   * Resolves once {@link read} may have something new: a chunk, the end, or an error. The
   * first wait only lets the current turn of the event loop finish (one microtask, see
   * {@link waited}); the later ones wait for the stream's events.
   */
  wait(): Promise<void> {
    if (!this.waited) {
      this.waited = true;
      return RESOLVED;
    }
    if (this.over !== undefined) return RESOLVED;
    if (!this.listening) {
      // Attached on the first wait only: a body taken whole never needs the event.
      this.listening = true;
      this.stream.on('readable', () => this.notify());
    }
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  /** `over` is the end (null), an error, or the premature close maker (called only if it is the first). */
  private settle(over: Error | null | (() => Error)): void {
    if (this.over !== undefined) return;
    this.over = typeof over === 'function' ? over() : over;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

/** The error a Node `Readable` gives its reader when it closes before its end (`ERR_STREAM_PREMATURE_CLOSE`). */
export function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Copies the body's counts onto the exchange, for the log line and metrics: once, when the
 * exchange ends (routing/handler.ts), whatever ended it, a read still waiting included.
 */
export function recordCounts(exchange: Exchange, source: BodySource): void {
  exchange.bytesFromSeller = source.raw.used;
  exchange.bytesDecoded = source.decoded.used;
}

/**
 * Maps an error thrown while reading the body to the local error to answer with, or
 * undefined when the gateway itself aborted the read (the exchange is already answered).
 * The wire meter's aborts (routing/wire-meter.ts) are `raw_bytes`: a total's DecodeError as
 * the raw-bytes cap's, a WireOverheadError with its wire bytes as `observedBytes`.
 * `limitBytes` is the response limit in force, reported as `limit_bytes` (a compressed SSE
 * stream's decoded budget runs a slack over it: pipeline.ts).
 */
export function bodyErrorToLocal(exchange: Exchange, err: unknown, limitBytes: number, observedBytes: number): LocalErrorInput | undefined {
  if (err instanceof LoadShedError) return { reason: 'agent_backoff_shed', retryAfterS: err.retryAfterS };
  // The wire meter's framing bound on an answer without a total that is not an SSE stream
  // (routing/wire-meter.ts; the SSE stage ends such a stream itself): a raw-bytes breach.
  if (err instanceof WireOverheadError) return { reason: 'raw_bytes', limitBytes, observedBytes: err.observedBytes };
  if (err instanceof DecodeError) {
    const f = err.failure;
    if (f.reason === 'raw_bytes' || f.reason === 'decoded_bytes') return { reason: f.reason, limitBytes, observedBytes: f.observedBytes };
    return { reason: f.reason }; // unsupported_encoding, upstream_encoding_invalid: no details
  }
  if (findGatewayAbort(err) || exchange.finished) return undefined;
  // Which failure cut the body, for the exchange line (`upstream_error`): a malformed
  // response (`HPE_INVALID_CHUNK_SIZE`) from a network reset (trial 50, finding 2).
  exchange.upstreamError = transportErrorCode(err);
  return { reason: 'upstream_reset', limitBytes, observedBytes };
}

/** The part of a Readable's internal state {@link firstBufferedLength} reads (Node >= 20.18: an array and an index; earlier: a linked list). */
interface ReadableBufferState {
  readonly buffer?: readonly ({ readonly length: number } | undefined)[] | { readonly head?: { readonly data: { readonly length: number } } | null };
  readonly bufferIndex?: number;
}

/**
 * The length of the first chunk buffered in `stream`, for `stream.read(n)` to take exactly
 * that chunk (Node's fromList returns it as it is), or undefined (then `read()` takes all).
 *
 * Why (issue 5, bench/README.md "SSE events/s"): `read()` without a size concatenates every
 * buffered chunk into a new Buffer, a copy of each byte and a fresh ArrayBuffer per read
 * whenever the gateway is a few chunks behind; on a flood of small events those external
 * allocations drove the gateway's mark-compacts (13 against the pass-through's 7) and its
 * CPU per event (1.35 against 0.82 µs, same-session bench). A piped pass-through takes
 * chunks one by one. Node has no public "size of the next chunk", so this reads the
 * stream's internal buffer, defensively: any answer other than a length in
 * [1, readableLength] is undefined, and `read(n)` with such an n returns exactly n bytes
 * whatever the internals are, so a change in them can only cost the copy again.
 */
function firstBufferedLength(stream: Readable): number | undefined {
  const state = (stream as unknown as { _readableState?: ReadableBufferState })._readableState;
  const buffer = state?.buffer;
  const n = Array.isArray(buffer) ? buffer[state!.bufferIndex ?? 0]?.length : (buffer as Exclude<ReadableBufferState['buffer'], readonly unknown[]>)?.head?.data.length;
  return typeof n === 'number' && n > 0 && n <= stream.readableLength ? n : undefined;
}
