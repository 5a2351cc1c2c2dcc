/**
 * The seller's body as the stages see it: decoded chunks, with the raw (wire) and decoded
 * byte counts bounded where the bytes are (spec: mcp-response-extraction.md, Size Limits:
 * "bound raw and decoded bytes"). Built once per response by the pipeline.
 */
import type { Readable } from 'node:stream';
import type { Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { findGatewayAbort } from '../errors/abort.js';
import { ByteBudget } from './byte-budget.js';
import { DecodeError, budgetError, decodeStream } from './decode.js';
import { LoadShedError, type BufferLease } from '../admission/agent-guard.js';

export interface BodySource {
  /** Decoded chunks. Throws DecodeError on a raw/decoded breach or corrupt data; other errors (an abort) propagate. */
  readonly chunks: AsyncGenerator<Buffer>;
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
 */
export function openBodySource(stream: Readable, codings: readonly string[], limitBytes: number, decodedLimitBytes = limitBytes): BodySource {
  return new OpenBody(stream, codings, new ByteBudget(limitBytes, 'raw_bytes'), new ByteBudget(decodedLimitBytes, 'decoded_bytes'));
}

class OpenBody implements BodySource {
  private generator: AsyncGenerator<Buffer> | undefined;
  constructor(
    readonly stream: Readable,
    private readonly codings: readonly string[],
    readonly raw: ByteBudget,
    readonly decoded: ByteBudget,
  ) {}

  /** Made on first use (decode.ts `decodeStream`), so a body read by `readDirect` never builds it. */
  get chunks(): AsyncGenerator<Buffer> {
    return (this.generator ??= decodeStream(this.stream as AsyncIterable<Buffer>, this.codings, this.raw, this.decoded));
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
 * `raw_bytes` / `decoded_bytes` (the stream is destroyed), the stream's error, or
 * ERR_STREAM_PREMATURE_CLOSE when it closes before its end.
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
      if (raw.take(n) < n) return fail(budgetError(raw, 'raw_bytes'));
      if (decoded.take(n) < n) return fail(budgetError(decoded, 'decoded_bytes'));
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
      if (settle()) reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** Copies the body's counts onto the exchange (for the log line and metrics). */
export function recordCounts(exchange: Exchange, source: BodySource): void {
  exchange.bytesFromSeller = source.raw.used;
  exchange.bytesDecoded = source.decoded.used;
}

/**
 * Maps an error thrown while reading the body to the local error to answer with, or
 * undefined when the gateway itself aborted the read (the exchange is already answered).
 * `limitBytes` is the response limit in force, reported as `limit_bytes` (a compressed SSE
 * stream's decoded budget runs a slack over it: pipeline.ts).
 */
export function bodyErrorToLocal(exchange: Exchange, err: unknown, limitBytes: number, observedBytes: number): LocalErrorInput | undefined {
  if (err instanceof LoadShedError) return { reason: 'agent_backoff_shed', retryAfterS: err.retryAfterS };
  if (err instanceof DecodeError) {
    const f = err.failure;
    if (f.reason === 'raw_bytes' || f.reason === 'decoded_bytes') return { reason: f.reason, limitBytes, observedBytes: f.observedBytes };
    if (f.reason === 'unsupported_encoding') return { reason: 'unsupported_encoding' };
    return { reason: 'upstream_reset', limitBytes, observedBytes };
  }
  if (findGatewayAbort(err) || exchange.finished) return undefined;
  return { reason: 'upstream_reset', limitBytes, observedBytes };
}
