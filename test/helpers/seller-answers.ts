/**
 * Answers a raw seller (test/support/raw-seller.ts) gives, for tests that set the next answer
 * per case: a JSON body, or an SSE stream written in parts. Text or bytes (a Buffer: what no
 * string can spell, invalid UTF-8 included), written as given.
 */
import type { ServerResponse } from 'node:http';

/** 200 `application/json` with `body` (with its Content-Length unless `chunked`). */
export function jsonAnswer(body: string | Buffer, chunked = false): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': Buffer.byteLength(body) }) }).end(body);
}

/** 200 `text/event-stream`, writing each of `writes` 20 ms apart, then the end (or a drop of the connection, `drop`). */
export function sseWritesAnswer(writes: ReadonlyArray<string | Buffer>, drop = false): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let k = 0;
    const next = (): void => {
      if (res.destroyed) return;
      if (k === writes.length) return void (drop ? res.destroy() : res.end());
      res.write(writes[k++]);
      setTimeout(next, 20);
    };
    next();
  };
}
