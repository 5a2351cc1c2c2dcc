/**
 * The bench seller: a minimal raw node:http server (its own process) answering
 * `POST /c/<case>/mcp` with the exact JSON-RPC bytes an SDK seller would send for that case
 * (bench/cases.ts), whatever the request's id. A real MCP SDK server would be the
 * bottleneck; this one only writes precomputed buffers.
 *
 * Started by the bench, compiled (compile.ts), as `node <tmp>/out/bench/seller.js <good|attack>`;
 * bodies are built on a case's first request and cached (the first request is a check, not measured).
 * SSE writes honour backpressure and stop when the connection closes; the attack bodies
 * (100 MiB plain, gzip bomb, 100 MiB SSE event, deep nesting, node bomb) stop as soon as the
 * gateway cuts the connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import {
  ATTACK_BYTES,
  ATTACK_PREFIX,
  ATTACK_SUFFIX,
  PROGRESS_EVENTS,
  PROGRESS_INTERVAL_MS,
  allCases,
  deepNestingBody,
  floodChunks,
  nodeBombBody,
  progressEvent,
  progressResultParts,
  sharedClockMs,
  sizedMessage,
  sseEvent,
  type CaseDef,
} from './cases.js';
import { serveChild } from './child-stats.js';

const role = process.argv[2] === 'attack' ? 'attack' : 'good';
const cases = new Map(allCases().map((c) => [c.id, c] as const));
const cache = new Map<string, Buffer | Buffer[]>();
/** Filler chunk of the 100 MiB attacks. */
const FILL = Buffer.alloc(64 * 1024, 'A');

function cached<T extends Buffer | Buffer[]>(key: string, build: () => T): T {
  let v = cache.get(key) as T | undefined;
  if (v === undefined) {
    v = build();
    cache.set(key, v);
  }
  return v;
}

/** Resolves when `res` may take more data, or false when the connection is gone. */
function writeOrWait(res: http.ServerResponse, chunk: Buffer | string): Promise<boolean> | boolean {
  if (res.destroyed || res.writableEnded) return false;
  if (res.write(chunk)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

async function serve(def: CaseDef, res: http.ServerResponse): Promise<void> {
  const kind = def.kind;
  switch (kind.type) {
    case 'json': {
      const body = cached(def.id, () => Buffer.from(sizedMessage(kind.variant, kind.bytes)));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
      return;
    }
    case 'sse1': {
      const body = cached(def.id, () => Buffer.from(sseEvent(sizedMessage(kind.variant, kind.bytes))));
      res.writeHead(200, SSE_HEADERS);
      res.end(body);
      return;
    }
    case 'progress': {
      const { head, tail } = progressResultParts();
      res.writeHead(200, SSE_HEADERS);
      res.flushHeaders();
      for (let i = 1; i <= PROGRESS_EVENTS; i++) {
        await sleep(PROGRESS_INTERVAL_MS);
        if ((await writeOrWait(res, progressEvent(i, PROGRESS_EVENTS, sharedClockMs()))) === false) return;
      }
      await sleep(PROGRESS_INTERVAL_MS);
      res.end(`${head}${sharedClockMs().toFixed(3)}${tail}`);
      return;
    }
    case 'flood': {
      const chunks = cached(def.id, floodChunks);
      res.writeHead(200, SSE_HEADERS);
      for (const chunk of chunks) if ((await writeOrWait(res, chunk)) === false) return;
      res.end();
      return;
    }
    case 'attack-json100':
    case 'attack-sse100': {
      // No Content-Length: the bound has to be counted as the bytes arrive.
      const sse = kind.type === 'attack-sse100';
      res.writeHead(200, sse ? SSE_HEADERS : { 'content-type': 'application/json' });
      let sent = 0;
      const head = sse ? `event: message\ndata: ${ATTACK_PREFIX}` : ATTACK_PREFIX;
      if ((await writeOrWait(res, head)) === false) return;
      while (sent < ATTACK_BYTES) {
        if ((await writeOrWait(res, FILL)) === false) return;
        sent += FILL.length;
      }
      res.end(sse ? `${ATTACK_SUFFIX}\n\n` : ATTACK_SUFFIX);
      return;
    }
    case 'attack-gzip100': {
      const body = cached(def.id, gzipBomb);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
      return;
    }
    case 'attack-deep':
    case 'attack-nodes': {
      const body = cached(def.id, () => Buffer.from(kind.type === 'attack-deep' ? deepNestingBody() : nodeBombBody()));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
      return;
    }
  }
}

/** ~100 KiB of gzip that decodes to the 100 MiB tool result (built once, at start-up, in the attacking seller). */
function gzipBomb(): Buffer {
  const parts: Buffer[] = [Buffer.from(ATTACK_PREFIX)];
  for (let sent = 0; sent < ATTACK_BYTES; sent += FILL.length) parts.push(FILL);
  parts.push(Buffer.from(ATTACK_SUFFIX));
  return zlib.gzipSync(Buffer.concat(parts), { level: 9 });
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const m = /^\/c\/([^/]+)\/mcp$/.exec(req.url ?? '');
    const def = m ? cases.get(m[1]!) : undefined;
    if (!def || def.seller !== role || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32601, message: `no bench case at ${req.method} ${req.url}` } }));
      return;
    }
    serve(def, res).catch(() => res.destroy());
  });
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;

server.listen(0, '127.0.0.1', () => {
  // The attacking seller builds its gzip bomb before saying it is ready (it takes a moment).
  if (role === 'attack') cached('attack-gzip100', gzipBomb);
  serveChild((server.address() as AddressInfo).port, async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
