/**
 * Reads a seller's plain (non-SSE) body into memory, never past the byte limit
 * (spec: mcp-response-extraction.md, Size Limits: "count bytes as they arrive and abort
 * rather than buffer-then-check, pre-reject an over-limit Content-Length").
 *
 * - `Content-Length` above the limit: rejected before a byte is read (`content_length`).
 *   On an encoded body it is the wire length, so it is compared with the raw bound. A 204's
 *   (or 304's) announces no body (RFC 9112 §6.3): such a body is never read, so never comes
 *   here (json-stage.ts readBody; review 37, F6).
 * - Raw and decoded bytes are counted as chunks arrive (body-source.ts); the chunk that
 *   crosses a bound is dropped and the upstream request aborted (`raw_bytes`, `decoded_bytes`).
 * - The bytes held count against the agent's `max_buffered_response_bytes` while the body is
 *   received (src/admission/agent-guard.ts), and so does a `br` body's decoder (decode.ts):
 *   over it, the next chunk is read only when the agent's other responses have released
 *   enough, or this is the agent's oldest one; the decoder is made only when it fits beside
 *   the other responses' decoders (its wait ended by the exchange's response_deadline_ms).
 * - `inspect`, when given, sees each decoded chunk as it arrives (the JSON stage's structure
 *   scan): an error it returns stops the read there, the upstream request is aborted, and the
 *   error is the result (a 4 MiB `[[[...` fails at its 65th byte, not after 4 MiB).
 */
import { openBufferLease, type Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { bodyErrorToLocal, readDirect, type BodySource } from './body-source.js';
import { bodyPool } from './body-pool.js';
import { LoadShedError } from '../admission/agent-guard.js';
import { inexactLengthDigits } from '../errors/exact-observed-bytes.js';

export type ReadResult = { ok: true; body: Buffer } | { ok: false; error: LocalErrorInput | undefined };

export async function readBoundedBody(
  exchange: Exchange,
  source: BodySource,
  contentLength: string | string[] | undefined,
  limit: number,
  inspect?: (chunk: Buffer) => LocalErrorInput | undefined,
): Promise<ReadResult> {
  const declared = typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  if (declared !== undefined && declared > limit) {
    source.stream.destroy();
    // Digits a double cannot carry are written as announced (errors/exact-observed-bytes.ts).
    const digits = inexactLengthDigits(contentLength as string, declared);
    return { ok: false, error: { reason: 'content_length', limitBytes: limit, observedBytes: declared, ...(digits !== undefined ? { observedBytesText: digits } : {}) } };
  }
  // A declared length is the body's length only when nothing decodes it.
  const chunks = new BodyBytes(source.direct ? declared : undefined);
  // The agent's buffered-bytes cap: over it, wait before reading on (back-pressure on this seller).
  const lease = openBufferLease(exchange);
  try {
    if (source.direct) {
      const stop = await readDirect(source, chunks, inspect, lease);
      if (stop !== undefined) return { ok: false, error: stop };
      return { ok: true, body: chunks.body() };
    }
    // A br body's decoder is charged to the same lease, from before its first byte (decode.ts).
    for await (const chunk of source.chunksWithin(lease)) {
      chunks.push(chunk);
      const stop = inspect?.(chunk);
      if (stop !== undefined) {
        source.stream.destroy();
        return { ok: false, error: stop };
      }
      if (lease !== undefined) {
        lease.add(chunk.length);
        if (lease.mustWait) {
          await lease.ready(source.stream);
          // Shed, or its exchange ended, while it waited: stop here. Leaving the loop closes the
          // decoders, which would otherwise inflate what they hold up to the limit.
          if (lease.shedRetryAfterS !== undefined) throw new LoadShedError(lease.shedRetryAfterS);
          if (exchange.finished) return { ok: false, error: undefined };
        }
      }
    }
  } catch (err) {
    return { ok: false, error: bodyErrorToLocal(exchange, err, limit, source.decoded.used) };
  } finally {
    lease?.release();
  }
  return { ok: true, body: chunks.body() };
}

/**
 * The body's bytes as they arrive, made into one Buffer at the end.
 *
 * With a declared length (`Content-Length`, already checked against the limit), a body that
 * does not come whole in its first chunk is copied, chunk by chunk as it arrives, into one
 * buffer of that length (from body-pool.ts for a large one, given back once its response is
 * over): the chunks are then garbage as soon as they are scanned, and no second copy of the
 * whole body is made at its end (issue 5, JSON (a) at 4 MiB: holding the chunks for the
 * whole response and `Buffer.concat`-ing them cost a copy and a V8 mark-compact every few
 * responses, for the external memory held). The buffer is made when the first chunk arrives:
 * a fresh one is uninitialized, its pages touched only as bytes are copied in, so a declared
 * length that never arrives costs address space (and counts in V8's external memory, which
 * paces its collections), not resident memory; but a length in the pool's range (16 KiB to
 * 32 MiB: body-pool.ts) is served first by an idle pooled buffer, which an earlier body filled:
 * resident already, held by this body until it ends (and garbage if it is abandoned), so such
 * a length costs up to its class's capacity of resident memory, out of what the pool kept
 * resident anyway (its idle buffers: at most 32 MiB process-wide, POOL_IDLE_MAX_BYTES). Only
 * the bytes copied in are ever exposed (review 37, F7: this said "not resident memory" of both).
 *
 * Without one (chunked transfer, a decoded body), or past it (not reached: the HTTP parser
 * frames the body by it), the chunks are kept and concatenated at the end.
 */
export class BodyBytes {
  private buffer: Buffer | undefined;
  private filled = 0;
  private readonly chunks: Buffer[] = [];

  /** @param declared the body's declared length in bytes, when known */
  constructor(private readonly declared?: number) {}

  push(chunk: Buffer): void {
    const n = chunk.length;
    if (this.buffer !== undefined) {
      if (this.filled + n <= this.buffer.length) {
        chunk.copy(this.buffer, this.filled);
        this.filled += n;
        return;
      }
      this.chunks.push(this.buffer.subarray(0, this.filled));
      this.buffer = undefined;
    } else if (this.chunks.length === 0 && this.declared !== undefined && n < this.declared) {
      this.buffer = bodyPool.take(this.declared) ?? Buffer.allocUnsafe(this.declared);
      chunk.copy(this.buffer, 0);
      this.filled = n;
      return;
    }
    this.chunks.push(chunk);
  }

  /** All the bytes pushed, in order (the first chunk itself when it is the only one). */
  body(): Buffer {
    if (this.buffer !== undefined) return this.filled === this.buffer.length ? this.buffer : this.buffer.subarray(0, this.filled);
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}
