/**
 * Reads a seller's plain (non-SSE) body into memory, never past the byte limit
 * (spec: mcp-response-extraction.md, Size Limits: "count bytes as they arrive and abort
 * rather than buffer-then-check, pre-reject an over-limit Content-Length").
 *
 * - `Content-Length` above the limit: rejected before a byte is read (`content_length`).
 * - Bytes counted as chunks arrive; the chunk that crosses the limit is dropped and the
 *   upstream request aborted (`raw_bytes`).
 * Returns the body, or undefined after the exchange was answered with a local error.
 */
import type { Readable } from 'node:stream';
import type { Exchange } from '../exchange.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { findGatewayAbort } from '../errors/abort.js';
import { ByteBudget } from './byte-budget.js';

export type ReadResult = { ok: true; body: Buffer } | { ok: false; error: LocalErrorInput | undefined };

export async function readBoundedBody(
  exchange: Exchange,
  stream: Readable,
  contentLength: string | string[] | undefined,
  limit: number,
): Promise<ReadResult> {
  const declared = typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  if (declared !== undefined && declared > limit) {
    stream.destroy();
    return { ok: false, error: { reason: 'content_length', limitBytes: limit, observedBytes: declared } };
  }
  const budget = new ByteBudget(limit, 'raw_bytes');
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      exchange.bytesFromSeller += chunk.length;
      if (budget.take(chunk.length) < chunk.length) {
        stream.destroy();
        return { ok: false, error: { reason: 'raw_bytes', limitBytes: limit, observedBytes: budget.used } };
      }
      chunks.push(chunk);
    }
  } catch (err) {
    const ours = findGatewayAbort(err);
    if (ours || exchange.finished) return { ok: false, error: undefined };
    return { ok: false, error: { reason: 'upstream_reset', limitBytes: limit, observedBytes: budget.used } };
  }
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, budget.used);
  exchange.bytesDecoded += body.length;
  return { ok: true, body };
}
