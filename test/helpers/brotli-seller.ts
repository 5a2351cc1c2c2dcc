/**
 * A seller's side of compressed answers held open, for the brotli-window regressions (trial 15,
 * H2: a br decoder's window counts against `max_buffered_response_bytes`; src/response/decode.ts
 * decoderBytes). The seller writes each event through a zlib encoder, flushed, so the gateway
 * has it at once, then holds the answer until the test ends it.
 */
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { resultMessage } from '../support/hostile-seller.js';

export const MIB = 1024 * 1024;
/** What an lgwin-22 br layer is charged (decode.ts decoderBytes): 4 MiB + 2.75 MiB (BROTLI_STATE_BYTES). */
export const BR22_BYTES = 4 * MIB + 2_883_584; // 7,077,888
/** What an lgwin-24 br layer is charged: 16 MiB + 2.75 MiB. */
export const BR24_BYTES = 16 * MIB + 2_883_584; // 19,660,800
/** The host's headers on every call of these suites. */
export const HEADERS = { 'mcp-protocol-version': '2025-11-25' };

/** A `notifications/message` whose data is `note <n>`, as JSON text. */
export const note = (n: number | string): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `note ${n}` } });
/** One SSE `message` event carrying `data`. */
export const sseEvent = (data: string): string => `event: message\ndata: ${data}\n\n`;
/** The tools/call result a held stream ends with: one text content `text`. */
export const textResult = (id: number, text: string): string => resultMessage(id, { content: [{ type: 'text', text }] });

/** A brotli encoder at window `lgwin` (the stream header declares 2^lgwin - 16 bytes), quality 1. */
export function brotli(lgwin: number): zlib.BrotliCompress {
  return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin, [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
}

/** Writes `text` through `enc`, flushed, as ONE write to `res` (its compressed bytes, unless `res` is gone); resolves with their length. */
export function writeFlushed(enc: zlib.BrotliCompress | zlib.Gzip, res: ServerResponse, text: string): Promise<number> {
  const out: Buffer[] = [];
  const onData = (c: Buffer): void => void out.push(c);
  enc.on('data', onData);
  enc.write(text);
  return new Promise((resolve) => {
    enc.flush(() => {
      enc.off('data', onData);
      const bytes = Buffer.concat(out);
      if (!res.destroyed) res.write(bytes);
      resolve(bytes.length);
    });
  });
}

/** Ends `enc` and `res` once `enc`'s last bytes are written. */
export function endThrough(enc: zlib.BrotliCompress | zlib.Gzip, res: ServerResponse): void {
  enc.on('data', (c: Buffer) => res.write(c));
  enc.on('end', () => res.end());
  enc.end();
}

/**
 * Starts an SSE answer in br at `lgwin`: writes the head and `note(id)` as one flushed event,
 * then holds it. Resolves with the wire bytes of that first write and `finish(data)`, which
 * writes one last event carrying `data`, flushed, then ends the stream. The encoder is
 * destroyed if `res` closes first.
 */
export async function startBrSse(res: ServerResponse, lgwin: number, id: number): Promise<{ firstWrite: number; finish(data: string): void }> {
  const enc = brotli(lgwin);
  res.on('close', () => enc.destroy());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'br' });
  const firstWrite = await writeFlushed(enc, res, sseEvent(note(id)));
  return { firstWrite, finish: (data) => void writeFlushed(enc, res, sseEvent(data)).then(() => endThrough(enc, res)) };
}

/** A standalone GET stream in gzip (level 1): `note(name)` as one flushed event, then held until the host leaves. */
export async function holdGzipGetStream(res: ServerResponse, name: string): Promise<void> {
  const enc = zlib.createGzip({ level: 1 });
  res.on('close', () => enc.destroy());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
  await writeFlushed(enc, res, sseEvent(note(name)));
}
