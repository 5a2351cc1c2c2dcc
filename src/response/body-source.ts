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
import { DecodeError, decodeStream } from './decode.js';

export interface BodySource {
  /** Decoded chunks. Throws DecodeError on a raw/decoded breach or corrupt data; other errors (an abort) propagate. */
  readonly chunks: AsyncGenerator<Buffer>;
  readonly raw: ByteBudget;
  readonly decoded: ByteBudget;
  /** The upstream stream itself (destroy it to stop reading without consuming `chunks`). */
  readonly stream: Readable;
}

/**
 * @param limitBytes bound for the raw bytes, and for the decoded bytes unless
 *   `decodedLimitBytes` is given; `Infinity` where another bound applies instead (the SSE
 *   stage's cumulative and per-event bounds).
 * @param decodedLimitBytes bound for the bytes each decoding layer produces (decode.ts).
 */
export function openBodySource(stream: Readable, codings: readonly string[], limitBytes: number, decodedLimitBytes = limitBytes): BodySource {
  const raw = new ByteBudget(limitBytes, 'raw_bytes');
  const decoded = new ByteBudget(decodedLimitBytes, 'decoded_bytes');
  return { chunks: decodeStream(stream as AsyncIterable<Buffer>, codings, raw, decoded), raw, decoded, stream };
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
  if (err instanceof DecodeError) {
    const f = err.failure;
    if (f.reason === 'raw_bytes' || f.reason === 'decoded_bytes') return { reason: f.reason, limitBytes, observedBytes: f.observedBytes };
    if (f.reason === 'unsupported_encoding') return { reason: 'unsupported_encoding' };
    return { reason: 'upstream_reset', limitBytes, observedBytes };
  }
  if (findGatewayAbort(err) || exchange.finished) return undefined;
  return { reason: 'upstream_reset', limitBytes, observedBytes };
}
