/**
 * Reads a seller's plain (non-SSE) body into memory, never past the byte limit
 * (spec: mcp-response-extraction.md, Size Limits: "count bytes as they arrive and abort
 * rather than buffer-then-check, pre-reject an over-limit Content-Length").
 *
 * - `Content-Length` above the limit: rejected before a byte is read (`content_length`).
 *   On an encoded body it is the wire length, so it is compared with the raw bound.
 * - Raw and decoded bytes are counted as chunks arrive (body-source.ts); the chunk that
 *   crosses a bound is dropped and the upstream request aborted (`raw_bytes`, `decoded_bytes`).
 * - The bytes held count against the agent's `max_buffered_response_bytes` while the body is
 *   received (src/admission/agent-guard.ts): over it, the next chunk is read only when the
 *   agent's other responses have released enough, or this is the agent's oldest one.
 * - `inspect`, when given, sees each decoded chunk as it arrives (the JSON stage's structure
 *   scan): an error it returns stops the read there, the upstream request is aborted, and the
 *   error is the result (a 4 MiB `[[[...` fails at its 65th byte, not after 4 MiB).
 */
import type { Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { bodyErrorToLocal, readDirect, recordCounts, type BodySource } from './body-source.js';

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
    return { ok: false, error: { reason: 'content_length', limitBytes: limit, observedBytes: declared } };
  }
  const chunks: Buffer[] = [];
  // The agent's buffered-bytes cap: over it, wait before reading on (back-pressure on this seller).
  const lease = exchange.guard?.lease(exchange.agent.name, exchange.agent.guard);
  try {
    if (source.direct) {
      const stop = await readDirect(source, chunks, inspect, lease);
      if (stop !== undefined) return { ok: false, error: stop };
      return { ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
    }
    for await (const chunk of source.chunks) {
      chunks.push(chunk);
      const stop = inspect?.(chunk);
      if (stop !== undefined) {
        source.stream.destroy();
        return { ok: false, error: stop };
      }
      if (lease !== undefined) {
        lease.add(chunk.length);
        if (lease.mustWait) await lease.ready(source.stream);
      }
    }
  } catch (err) {
    return { ok: false, error: bodyErrorToLocal(exchange, err, limit, source.decoded.used) };
  } finally {
    lease?.release();
    recordCounts(exchange, source);
  }
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  return { ok: true, body };
}
