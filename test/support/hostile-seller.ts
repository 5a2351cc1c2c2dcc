/**
 * The hostile seller: ONE real HTTP server on 127.0.0.1 with a switch per misbehaviour, so a
 * test (or one gateway config) can point agents at different misbehaviours at once. The mode is
 * chosen by path, `/hostile/<mode>/mcp`, and tuned by query parameters (`url(mode, params)`).
 *
 * It speaks just enough MCP (Streamable HTTP) for a real SDK client:
 * - `initialize` -> a JSON result echoing the requested protocol version, with a new
 *   `Mcp-Session-Id` (in every mode);
 * - a notification or a host's response (no id) -> 202;
 * - DELETE -> 200; a GET the mode does not handle -> 405 (no standalone stream);
 * - every other request (any method with an id) gets the misbehaviour, answered for that
 *   request's JSON-RPC id.
 *
 * Every loop here is bounded in count (a drip writes one message, a keep-alive loop at most
 * `max` comments, an "endless" line at most `bytes` bytes) and stops as soon as the gateway
 * closes the connection; every timer is cleared on close.
 *
 * Modes and their query parameters (defaults in brackets):
 *
 * | mode                    | what the seller does                                                        |
 * | ----------------------- | --------------------------------------------------------------------------- |
 * | `ok`                    | a small tools/call result (`text` ["ok"]), JSON                              |
 * | `oversized-json`        | a JSON result of exactly `bytes` bytes; `content_length=0` drops the header  |
 * |                         | (chunked), `chunk` [65536] bytes per write                                   |
 * | `lying-length`          | Content-Length `claim`, body of `bytes` bytes (a `bytes`-byte JSON result);  |
 * |                         | more bytes than claimed go raw on the socket; fewer, then the socket closes  |
 * | `gzip-bomb`             | `Content-Encoding: gzip`, `zeros` [1 GiB] zero bytes, level 9 (~1 MB);       |
 * |                         | `sse=1`: claimed as `text/event-stream`                                      |
 * | `brotli-bomb`           | `Content-Encoding: br`, `zeros` [1 GiB] zero bytes (~1.6 KB)                  |
 * | `stacked-encodings`     | `bomb=inner`: `gzip, gzip` around a gzip bomb of `zeros` [1 GiB];            |
 * |                         | `bomb=middle`: `gzip, gzip` whose OUTER layer inflates to `zeros` [64 MiB]  |
 * |                         | (the inner layer is stored, level 0); `depth=N`: a small result gzipped N    |
 * |                         | times, `Content-Encoding: gzip` x N                                          |
 * | `unknown-encoding`      | `Content-Encoding: coding` [zstd] on a small JSON body                       |
 * | `slow-drip`             | JSON headers, then a small result one byte every `interval_ms` [50]          |
 * | `headers-then-silence`  | JSON headers (`type=sse`: SSE headers), then nothing, ever                   |
 * | `sse-data-line`         | SSE: one event whose data is one line of exactly `bytes` bytes (a result);  |
 * |                         | `endless=1`: `data: ` + `bytes` x `x`, never terminated                      |
 * | `sse-many-events`       | SSE: `count` logging notifications of exactly `event_bytes` bytes each,      |
 * |                         | then (`result=1`) the result; never ends unless `result=1`                  |
 * | `sse-reconnect`         | POST: (`priming=1`: priming event `id` + `retry: retry_ms` + empty data)    |
 * |                         | `first_events` x `event_bytes` events with ids, then the connection drops.  |
 * |                         | GET with Last-Event-ID: `second_events` x `event_bytes` more events after   |
 * |                         | that id, then (`result=1`) the result, else silence                         |
 * | `sse-keepalive-forever` | SSE: `: keepalive` comment every `interval_ms` [20], at most `max` [10000]   |
 * | `sse-odd-content-type`  | `Content-Type: Text/Event-Stream; charset=utf-8`, one result event whose     |
 * |                         | data is `bytes` [300] bytes                                                  |
 * | `sse-priming`           | SSE: priming event (`id`, `retry: retry_ms` [25], empty data), then the result |
 * | `deep-nesting`          | JSON message of ~`bytes` [4 MiB] bytes: the result is `shape=array` -> `[[[…` |
 * |                         | or `shape=object` -> `{"a":{"a":…` (never closed); `sse=1`: as one SSE event |
 * | `node-bomb`             | JSON message of exactly `bytes` [4 MiB] bytes: `"x":[0,0,0,…]`                |
 * | `html-200`              | 200 `text/html` login page                                                  |
 * | `server-error`          | `status` [503] `text/html` error page naming an internal host                |
 * | `invalid-utf8`          | `shape=lift`: a text-only JSON result whose text holds the bytes C3 28 FF   |
 * |                         | in a string; `shape=plain`: a result with structuredContent and such a text |
 * |                         | `shape=other`: structuredContent and a text holding another JSON object,    |
 * |                         | both with those bytes in a string                                           |
 * | `proto-keys`            | a text-only JSON result: `{"__proto__":…,"constructor":…,"products":[]}`    |
 * | `adcp-error-only`       | structuredContent `{adcp_error:{…}}`, same JSON as text, no `isError`        |
 * | `duplicate-text`        | structuredContent, text 1 = its JSON copy, text 2 = a different sentence    |
 * | `expired-session`       | 404 JSON-RPC error "Session not found" for every request but initialize     |
 * | `text-over-bound`       | a text-only result whose text is JSON `{"a":{"a":…` `depth` [100] deep;     |
 * |                         | `shape=nodes`: `{"a":[0,0,…]}` with `count` [100001] zeros                  |
 * | `get-stream`            | GET (standalone stream): a small event, one over `event_bytes` [2048]+1, a  |
 * |                         | small event, an unterminated `data:` line of `endless_bytes` [100000] then  |
 * |                         | a blank line, two small events; then the stream ends                        |
 * | `compressed-flood`      | `Content-Encoding: gzip`: a gzip header, then `mib` [8] MiB of EMPTY stored   |
 * |                         | deflate blocks (wire bytes that decode to nothing), then silence;            |
 * |                         | `middle=1`: `gzip, gzip` whose outer layer inflates to that flood (~97 KB    |
 * |                         | on the wire for 64 MiB); `sse=1`: claimed as `text/event-stream`             |
 * | `huge-headers`          | a 200 whose head carries `header_bytes` [1 MiB] of `x-junk-<n>` headers      |
 * | `garbage-response`      | reads the request, then answers bytes that are not HTTP at all               |
 * | `redirect`              | `status` [307] with `Location` -> this seller's `ok` mode (never followed)  |
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { pino } from 'pino';
import type { LocalErrorInput } from '../../src/errors/local-reply.js';
import { DECODER_CHUNK_BYTES } from '../../src/response/decode.js';
import { buildAdcpError, localErrorMessage } from '../../src/mcp/local-error.js';
import { stringifyJsonRpc } from '../../src/errors/json-rpc-text.js';
import { agentsYaml, startGateway, type AgentYaml, type RunningGateway } from '../helpers/gateway.js';
import type { RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway, type SellerAndGateway } from '../helpers/stack.js';
import { brotliOfZeros, gzipOfZeros, storedGzipOfZeros } from '../helpers/zero-bombs.js';

export const HOSTILE_MODES = [
  'ok',
  'oversized-json',
  'lying-length',
  'gzip-bomb',
  'brotli-bomb',
  'stacked-encodings',
  'unknown-encoding',
  'slow-drip',
  'headers-then-silence',
  'sse-data-line',
  'sse-many-events',
  'sse-reconnect',
  'sse-keepalive-forever',
  'sse-odd-content-type',
  'sse-priming',
  'deep-nesting',
  'node-bomb',
  'html-200',
  'server-error',
  'invalid-utf8',
  'proto-keys',
  'adcp-error-only',
  'duplicate-text',
  'expired-session',
  'text-over-bound',
  'get-stream',
  'compressed-flood',
  'huge-headers',
  'garbage-response',
  'redirect',
] as const;

export type HostileMode = (typeof HOSTILE_MODES)[number];

export type RpcId = string | number | null;

/** A request the seller received. */
export interface HostileRequest {
  readonly mode: string;
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** The JSON-RPC facts of a POST body (undefined for GET/DELETE or a body that is not one JSON object). */
  readonly rpc: { id: RpcId | undefined; method: string | undefined; toolName: string | undefined } | undefined;
}

export interface HostileSeller {
  /** `http://127.0.0.1:<port>/hostile/<mode>/mcp[?params]` */
  url(mode: HostileMode, params?: Record<string, string | number>): string;
  /** Every request received, in order. */
  readonly requests: HostileRequest[];
  /** The requests received for one mode. */
  requestsFor(mode: HostileMode): HostileRequest[];
  close(): Promise<void>;
}

/** Largest request body the seller reads (hosts in these tests send small JSON-RPC messages). */
const MAX_REQUEST_BYTES = 1024 * 1024;

export const GIB = 1024 * 1024 * 1024;
export const MIB = 1024 * 1024;

/** A JSON-RPC response envelope around `result`. */
export function resultMessage(id: RpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** A tools/call result message of exactly `bytes` UTF-8 bytes (one text item padded with `x`). */
export function resultMessageOfSize(id: RpcId, bytes: number): string {
  const base = resultMessage(id, { content: [{ type: 'text', text: '' }] });
  const pad = bytes - Buffer.byteLength(base);
  if (pad < 0) throw new Error(`a result message for id ${JSON.stringify(id)} needs at least ${Buffer.byteLength(base)} bytes`);
  return resultMessage(id, { content: [{ type: 'text', text: 'x'.repeat(pad) }] });
}

/**
 * An SSE event frame `[id: <id>\n]event: message\ndata: <logging notification>\n\n` of exactly
 * `frameBytes` bytes (the data is a `notifications/message`, which an SDK client ignores
 * unless it registered a handler).
 */
export function notificationFrame(frameBytes: number, id?: string): string {
  const head = `${id !== undefined ? `id: ${id}\n` : ''}event: message\ndata: `;
  const data = (pad: string) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: pad } });
  const fixed = Buffer.byteLength(head) + Buffer.byteLength(data('')) + 2;
  const pad = frameBytes - fixed;
  if (pad < 0) throw new Error(`an event frame needs at least ${fixed} bytes`);
  return `${head}${data('n'.repeat(pad))}\n\n`;
}

/** An SSE `message` event frame carrying `data` (one line), with an optional id. */
export function messageFrame(data: string, id?: string): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}event: message\ndata: ${data}\n\n`;
}

const bombCache = new Map<string, Promise<Buffer>>();

function cached(key: string, make: () => Promise<Buffer>): Promise<Buffer> {
  let p = bombCache.get(key);
  if (!p) {
    p = make();
    bombCache.set(key, p);
  }
  return p;
}

/**
 * gzip (deflate level 9, a full flush after each MiB) of `zeros` zero bytes (at least 3 MiB):
 * 1 GiB -> ~1 MB, its trailer's CRC-32 and size those of the zeros. Made once per process and
 * size, from three MiB of them (test/helpers/zero-bombs.ts).
 */
export function gzipBomb(zeros = GIB): Promise<Buffer> {
  return cached(`gzip:${zeros}`, () => gzipOfZeros(zeros, 9));
}

/** brotli (quality 5, flushed every 16 MiB) of `zeros` zero bytes (at least 48 MiB): 1 GiB -> ~1.6 KB. */
export function brotliBomb(zeros = GIB): Promise<Buffer> {
  return cached(`br:${zeros}`, () => brotliOfZeros(zeros, 5));
}

/** gzip level 0 (stored blocks) of `zeros` zero bytes, then gzip level 9 of that: the OUTER layer is the bomb. */
export function middleLayerBomb(zeros = 64 * MIB): Promise<Buffer> {
  return cached(`middle:${zeros}`, async () => {
    return zlib.gzipSync(storedGzipOfZeros(zeros), { level: 9 });
  });
}

/**
 * A gzip member header followed by empty, non-final stored deflate blocks (`00 00 00 FF FF`,
 * what a Z_SYNC_FLUSH with no input writes) up to `bytes`: valid, never-ending compressed
 * data that decodes to nothing.
 */
export function emptyBlockFlood(bytes: number): Buffer {
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff]);
  const blocks = Math.max(0, Math.floor((bytes - header.length) / 5));
  const out = Buffer.alloc(header.length + blocks * 5);
  header.copy(out, 0);
  if (blocks > 0) out.fill(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]), header.length);
  return out;
}

function parseRpc(body: Buffer): HostileRequest['rpc'] {
  try {
    const m = JSON.parse(body.toString('utf8')) as unknown;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return undefined;
    const msg = m as Record<string, unknown>;
    const params = (msg.params ?? {}) as Record<string, unknown>;
    const id = Object.hasOwn(msg, 'id') ? (msg.id as RpcId) : undefined;
    return {
      id,
      method: typeof msg.method === 'string' ? msg.method : undefined,
      toolName: msg.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined,
    };
  } catch {
    return undefined;
  }
}

interface Ctx {
  req: HostileRequest;
  res: http.ServerResponse;
  params: URLSearchParams;
  /** The JSON-RPC id to answer (null when the body had none). */
  id: RpcId;
  /** setTimeout that is cleared when the seller closes or the connection goes. */
  later(ms: number, fn: () => void): void;
  /** True once the connection to the gateway is gone. */
  gone(): boolean;
}

function num(params: URLSearchParams, name: string, dflt: number): number {
  const v = params.get(name);
  if (v === null) return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`hostile seller: bad ${name}=${v}`);
  return n;
}

/** Per-stream state of `sse-reconnect`, so a GET with Last-Event-ID continues the right request. */
interface ReconnectStream {
  rpcId: RpcId;
  params: URLSearchParams;
}

export async function startHostileSeller(): Promise<HostileSeller> {
  const requests: HostileRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const reconnectStreams = new Map<string, ReconnectStream>();
  let sessions = 0;
  let streamsMade = 0;

  const handle = async (ctx: Ctx, mode: string): Promise<void> => {
    const { req, res, params, id } = ctx;
    const json = (status: number, body: string | Buffer, headers: http.OutgoingHttpHeaders = {}): void =>
      void res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }).end(body);
    const sseHead = (contentType = 'text/event-stream'): void => void res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });

    // --- the MCP handshake and the boring parts, common to every mode ---
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method === 'GET') {
      const lastEventId = req.headers['last-event-id'];
      if (mode === 'sse-reconnect' && typeof lastEventId === 'string') return sseReconnectReplay(ctx, lastEventId);
      if (mode === 'get-stream' && lastEventId === undefined) return getStream(ctx);
      return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (req.rpc === undefined) return json(400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    if (req.rpc.method === 'initialize' && req.rpc.id !== undefined) {
      const params0 = (JSON.parse(req.body.toString('utf8')) as { params?: { protocolVersion?: unknown } }).params;
      const protocolVersion = typeof params0?.protocolVersion === 'string' ? params0.protocolVersion : '2025-11-25';
      const body = resultMessage(req.rpc.id, {
        protocolVersion,
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: 'hostile-seller', version: '1.0.0' },
      });
      return json(200, body, { 'mcp-session-id': `hostile-${++sessions}` });
    }
    if (req.rpc.id === undefined) return void res.writeHead(202).end();

    // --- the misbehaviours ---
    switch (mode) {
      case 'ok':
        return json(200, resultMessage(id, { content: [{ type: 'text', text: params.get('text') ?? 'ok' }] }));

      case 'oversized-json': {
        const body = resultMessageOfSize(id, num(params, 'bytes', 5 * MIB));
        const chunk = Math.max(1, num(params, 'chunk', 65536));
        const withLength = params.get('content_length') !== '0';
        res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': Buffer.byteLength(body) } : {}) });
        return writeInPieces(ctx, Buffer.from(body), chunk);
      }

      case 'lying-length': {
        const body = resultMessageOfSize(id, num(params, 'bytes', 2000));
        const claim = num(params, 'claim', 100);
        const bodyBytes = Buffer.byteLength(body);
        if (claim < bodyBytes) {
          // More bytes than claimed: written raw on the socket, past the announced framing.
          const socket = res.socket!;
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${claim}\r\n\r\n${body}`);
          socket.end();
          return;
        }
        // Fewer bytes than claimed, then the connection closes.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': claim });
        res.write(body, () => res.destroy());
        return;
      }

      case 'gzip-bomb': {
        const bomb = await gzipBomb(num(params, 'zeros', GIB));
        const contentType = params.get('sse') === '1' ? 'text/event-stream' : 'application/json';
        res.writeHead(200, { 'content-type': contentType, 'content-encoding': 'gzip', 'content-length': bomb.length });
        return writeInPieces(ctx, bomb, 65536);
      }

      case 'brotli-bomb': {
        const bomb = await brotliBomb(num(params, 'zeros', GIB));
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br', 'content-length': bomb.length });
        return writeInPieces(ctx, bomb, 65536);
      }

      case 'stacked-encodings': {
        const depth = params.get('depth');
        if (depth !== null) {
          let body = Buffer.from(resultMessage(id, { content: [{ type: 'text', text: 'stacked' }] }));
          const n = num(params, 'depth', 5);
          for (let i = 0; i < n; i++) body = zlib.gzipSync(body);
          return json(200, body, { 'content-encoding': Array.from({ length: n }, () => 'gzip').join(', ') });
        }
        const body =
          params.get('bomb') === 'middle'
            ? await middleLayerBomb(num(params, 'zeros', 64 * MIB))
            : zlib.gzipSync(await gzipBomb(num(params, 'zeros', GIB)), { level: 9 });
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip, gzip', 'content-length': body.length });
        return writeInPieces(ctx, body, 65536);
      }

      case 'unknown-encoding':
        return json(200, resultMessage(id, { content: [{ type: 'text', text: 'compressed?' }] }), { 'content-encoding': params.get('coding') ?? 'zstd' });

      case 'slow-drip': {
        const body = Buffer.from(resultMessage(id, { content: [{ type: 'text', text: 'drip' }] }));
        const interval = num(params, 'interval_ms', 50);
        res.writeHead(200, { 'content-type': 'application/json' });
        let i = 0;
        const tick = (): void => {
          if (ctx.gone()) return;
          if (i >= body.length) return void res.end();
          res.write(body.subarray(i, i + 1));
          i++;
          ctx.later(interval, tick);
        };
        return tick();
      }

      case 'headers-then-silence':
        if (params.get('type') === 'sse') sseHead();
        else res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        return; // and nothing more, ever

      case 'sse-data-line': {
        const bytes = num(params, 'bytes', 5000);
        sseHead();
        if (params.get('endless') === '1') {
          // One `data:` line that never ends: `bytes` bytes of it, then silence (no line break).
          res.write('event: message\ndata: ');
          return writeInPieces(ctx, Buffer.alloc(bytes, 'x'), 65536, false);
        }
        return void res.end(messageFrame(resultMessageOfSize(id, bytes), 'd1'));
      }

      case 'sse-many-events': {
        const count = num(params, 'count', 100);
        const eventBytes = num(params, 'event_bytes', 1024);
        sseHead();
        const frame = notificationFrame(eventBytes);
        let i = 0;
        const next = (): void => {
          // Bounded: `count` frames, written as the socket drains.
          while (i < count && !ctx.gone()) {
            i++;
            if (!res.write(frame)) return void res.once('drain', next);
          }
          if (i >= count && params.get('result') === '1' && !ctx.gone()) res.end(messageFrame(resultMessage(id, { content: [{ type: 'text', text: 'done' }] })));
        };
        return next();
      }

      case 'sse-reconnect': {
        const stream = `s${++streamsMade}`;
        reconnectStreams.set(stream, { rpcId: id, params });
        const eventBytes = num(params, 'event_bytes', 1024);
        const first = num(params, 'first_events', 3);
        sseHead();
        let out = '';
        if (params.get('priming') === '1') out += `id: ${stream}-0\nretry: ${num(params, 'retry_ms', 25)}\ndata: \n\n`;
        for (let n = 1; n <= first; n++) out += notificationFrame(eventBytes, `${stream}-${n}`);
        // Written in full, then the connection drops (no response yet).
        res.write(out, () => res.destroy());
        return;
      }

      case 'sse-keepalive-forever': {
        const interval = num(params, 'interval_ms', 20);
        const max = num(params, 'max', 10_000);
        sseHead();
        res.flushHeaders();
        let sent = 0;
        const tick = (): void => {
          if (ctx.gone() || sent >= max) return;
          sent++;
          res.write(': keepalive\n\n');
          ctx.later(interval, tick);
        };
        return ctx.later(interval, tick);
      }

      case 'sse-odd-content-type':
        sseHead('Text/Event-Stream; charset=utf-8');
        return void res.end(messageFrame(resultMessageOfSize(id, num(params, 'bytes', 300)), 'o1'));

      case 'sse-priming': {
        sseHead();
        res.write(`id: p-0\nretry: ${num(params, 'retry_ms', 25)}\ndata: \n\n`);
        return void res.end(messageFrame(resultMessage(id, { content: [{ type: 'text', text: 'primed' }] }), 'p-1'));
      }

      case 'deep-nesting': {
        const shape = params.get('shape') === 'object' ? '{"a":' : '[';
        const bytes = num(params, 'bytes', 4 * MIB);
        const prefix = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
        const reps = Math.floor((bytes - Buffer.byteLength(prefix)) / shape.length);
        const body = prefix + shape.repeat(reps);
        if (params.get('sse') === '1') {
          sseHead();
          return void res.end(messageFrame(body, 'n1'));
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        return writeInPieces(ctx, Buffer.from(body), 65536);
      }

      case 'node-bomb': {
        const bytes = num(params, 'bytes', 4 * MIB);
        const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[],"x":[0`;
        const tail = ']}}';
        const room = bytes - Buffer.byteLength(head) - tail.length;
        // `,0` pairs, and one `0` more... padded with spaces so the message is exactly `bytes` long.
        const pairs = Math.floor(room / 2);
        const body = head + ',0'.repeat(pairs) + ' '.repeat(room - 2 * pairs) + tail;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        return writeInPieces(ctx, Buffer.from(body), 65536);
      }

      case 'html-200':
        return void res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><html><body><h1>Please log in</h1><form action="/login"></form></body></html>');

      case 'server-error':
        return void res
          .writeHead(num(params, 'status', 503), { 'content-type': 'text/html' })
          .end('<h1>Service Unavailable</h1><pre>upstream db01.internal.example timed out</pre>');

      case 'invalid-utf8': {
        const bad = Buffer.from([0xc3, 0x28, 0xff]);
        const enc = (s: string) => Buffer.from(s, 'utf8');
        const idJson = JSON.stringify(id);
        const shape = params.get('shape');
        const body =
          shape === 'other'
            ? Buffer.concat([
                enc(`{"jsonrpc":"2.0","id":${idJson},"result":{"content":[{"type":"text","text":"{\\"name\\":\\"tea`),
                bad,
                enc(`\\"}"}],"structuredContent":{"name":"caf`),
                bad,
                enc(`"}}}`),
              ])
            : shape === 'plain'
            ? Buffer.concat([
                enc(`{"jsonrpc":"2.0","id":${idJson},"result":{"content":[{"type":"text","text":"caf`),
                bad,
                enc(`"}],"structuredContent":{"name":"caf`),
                bad,
                enc(`"}}}`),
              ])
            : Buffer.concat([
                enc(`{"jsonrpc":"2.0","id":${idJson},"result":{"content":[{"type":"text","text":"{\\"name\\":\\"caf`),
                bad,
                enc(`\\",\\"ok\\":true}"}]}}`),
              ]);
        return json(200, body);
      }

      case 'proto-keys': {
        const payload = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"products":[]}';
        return json(200, resultMessage(id, { content: [{ type: 'text', text: payload }] }));
      }

      case 'adcp-error-only': {
        const err = { adcp_error: { code: 'RATE_LIMITED', message: 'Slow down.', recovery: 'transient', retry_after: 30, details: { scope: 'account' } } };
        return json(200, resultMessage(id, { content: [{ type: 'text', text: JSON.stringify(err) }], structuredContent: err }));
      }

      case 'duplicate-text': {
        const payload = { products: [{ product_id: 'p1', name: 'Homepage takeover' }, { product_id: 'p2', name: 'Run of site' }], next_cursor: 'c2' };
        return json(
          200,
          resultMessage(id, {
            content: [
              { type: 'text', text: JSON.stringify(payload) },
              { type: 'text', text: 'Found 2 products; ask for the next page with cursor c2.' },
            ],
            structuredContent: payload,
          }),
        );
      }

      case 'expired-session':
        return json(404, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32001,"message":"Session not found"}}`);

      case 'text-over-bound': {
        const depth = num(params, 'depth', 100);
        const text =
          params.get('shape') === 'nodes'
            ? `{"a":[${Array.from({ length: num(params, 'count', 100_001) }, () => '0').join(',')}]}`
            : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
        return json(200, resultMessage(id, { content: [{ type: 'text', text }] }));
      }

      case 'compressed-flood': {
        const contentType = params.get('sse') === '1' ? 'text/event-stream' : 'application/json';
        const bytes = num(params, 'mib', 8) * MIB;
        const middle = params.get('middle') === '1';
        const body = middle ? await cached(`flood-middle:${bytes}`, async () => zlib.gzipSync(emptyBlockFlood(bytes), { level: 9 })) : emptyBlockFlood(bytes);
        res.writeHead(200, { 'content-type': contentType, 'content-encoding': middle ? 'gzip, gzip' : 'gzip' });
        return writeInPieces(ctx, body, 65536, false); // then silence, the connection left open
      }

      case 'huge-headers': {
        const total = num(params, 'header_bytes', MIB);
        const socket = res.socket!;
        let head = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n';
        for (let n = 0; head.length < total; n++) head += `x-junk-${n}: ${'j'.repeat(1000)}\r\n`;
        const body = resultMessage(id, { content: [{ type: 'text', text: 'after the headers' }] });
        socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        socket.end();
        return;
      }

      case 'garbage-response': {
        const socket = res.socket!;
        socket.write('SMTP 220 definitely not http\r\n\r\n{"jsonrpc":"2.0"}');
        socket.end();
        return;
      }

      case 'redirect':
        return void res.writeHead(num(params, 'status', 307), { location: `http://127.0.0.1:${(req.headers.host ?? '').split(':')[1] ?? ''}/hostile/ok/mcp` }).end();

      default:
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no such hostile mode: ${mode.slice(0, 64)}`);
    }
  };

  /** The standalone GET stream of `get-stream` (see the table above). */
  const getStream = (ctx: Ctx): void => {
    const { res, params } = ctx;
    const eventBytes = num(params, 'event_bytes', 2048);
    const endless = num(params, 'endless_bytes', 100_000);
    const note = (n: number) => messageFrame(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `g${n}` } }), `g${n}`);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: '' } });
    const overData = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'o'.repeat(eventBytes + 1 - Buffer.byteLength(big)) } });
    const steps: string[] = [
      note(1),
      messageFrame(overData, 'g2'),
      note(3),
      `id: g4\nevent: message\ndata: ${'x'.repeat(endless)}`,
      '\n\n',
      note(5),
      note(6),
    ];
    let i = 0;
    const next = (): void => {
      if (ctx.gone()) return;
      if (i >= steps.length) return void res.end();
      const step = steps[i++]!;
      // One step per write, each after the previous one was flushed, with a pause so the
      // gateway sees them as separate reads.
      res.write(step, () => ctx.later(10, next));
    };
    next();
  };

  /** `sse-reconnect`, GET with Last-Event-ID `<stream>-<n>`: the events after n, then the result or silence. */
  const sseReconnectReplay = (ctx: Ctx, lastEventId: string): void => {
    const { res } = ctx;
    const m = /^(s\d+)-(\d+)$/.exec(lastEventId);
    const stream = m ? reconnectStreams.get(m[1]!) : undefined;
    if (!m || !stream) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown Last-Event-ID');
    const eventBytes = num(stream.params, 'event_bytes', 1024);
    const second = num(stream.params, 'second_events', 2);
    const after = Number(m[2]);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let out = '';
    for (let n = after + 1; n <= after + second; n++) out += notificationFrame(eventBytes, `${m[1]}-${n}`);
    if (stream.params.get('result') === '1') out += messageFrame(resultMessage(stream.rpcId, { content: [{ type: 'text', text: 'done' }] }), `${m[1]}-${after + second + 1}`);
    res.write(out); // then silence: the gateway ends the stream
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const match = /^\/hostile\/([a-z0-9-]+)\/mcp$/.exec(url.pathname);
      const body = Buffer.concat(chunks);
      const rpc = req.method === 'POST' ? parseRpc(body) : undefined;
      const seen: HostileRequest = { mode: match?.[1] ?? '', method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, rpc };
      requests.push(seen);
      if (!match) return void res.writeHead(404).end();
      let closed = false;
      // This request's pending timers: cleared when its connection goes (and by close()).
      const mine = new Set<NodeJS.Timeout>();
      res.once('close', () => {
        closed = true;
        for (const t of mine) {
          clearTimeout(t);
          timers.delete(t);
        }
        mine.clear();
      });
      const ctx: Ctx = {
        req: seen,
        res,
        params: url.searchParams,
        id: rpc?.id ?? null,
        gone: () => closed || res.destroyed,
        later: (ms, fn) => {
          if (closed) return;
          const t = setTimeout(() => {
            timers.delete(t);
            mine.delete(t);
            fn();
          }, ms);
          timers.add(t);
          mine.add(t);
        },
      };
      handle(ctx, match[1]!).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  return {
    url(mode, params = {}) {
      const q = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
      return `${base}/hostile/${mode}/mcp${q ? `?${q}` : ''}`;
    },
    requests,
    requestsFor: (mode) => requests.filter((r) => r.mode === mode),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes `body` in `chunk`-byte pieces, honouring backpressure and stopping as soon as the
 * gateway goes away (a bounded loop: at most body.length / chunk writes). Ends the response
 * unless `end` is false (an "endless" body then simply stops, the connection left open).
 */
function writeInPieces(ctx: Ctx, body: Buffer, chunk: number, end = true): void {
  const { res } = ctx;
  let offset = 0;
  const next = (): void => {
    while (offset < body.length) {
      if (ctx.gone()) return;
      const piece = body.subarray(offset, offset + chunk);
      offset += piece.length;
      if (!res.write(piece)) return void res.once('drain', next);
    }
    if (end && !ctx.gone()) res.end();
  };
  next();
}

// ---------------------------------------------------------------------------------------------
// Helpers for the tests that point the gateway at the hostile seller: a gateway whose log
// lines are kept in memory (the exchange line carries bytes_from_seller, bytes_decoded,
// bytes_to_host, outcome, reason), and the exact answer the gateway must mint.
// ---------------------------------------------------------------------------------------------

/** The YAML head that turns SSE resumption on (resume tokens need a secret). */
export const RESUME_YAML = ['resume:', '  secret: hostile-resume-secret-0123456789abcdef'] as const;

/**
 * The regression suites' setup (test/helpers/stack.ts): the hostile seller, then an observed
 * gateway whose agents `agents(seller)` gives (YAML `head` lines first).
 */
export function useHostileStack(agents: (seller: HostileSeller) => Record<string, AgentYaml>, head?: readonly string[]): SellerAndGateway<HostileSeller, ObservedGateway> {
  return useSellerAndGateway(startHostileSeller, (seller) => startObservedGateway(agentsYaml(agents(seller), head)));
}

/** One parsed pino line. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface ObservedGateway extends RunningGateway {
  /** Every log line so far, parsed. */
  readonly lines: LogLine[];
  /** Resolves with the first line (already written or still to come) that matches, or rejects after `ms`. */
  waitForLine(match: (line: LogLine) => boolean, ms?: number): Promise<LogLine>;
  /** The `exchange` line of the exchange answering JSON-RPC id `rpcId` (by agent). */
  exchangeLine(agent: string, rpcId: RpcId, ms?: number): Promise<LogLine>;
}

/** Starts the real gateway (test/helpers/gateway.ts) with a pino logger writing into memory, at `info`. */
export async function startObservedGateway(yaml: string): Promise<ObservedGateway> {
  const lines: LogLine[] = [];
  const waiters = new Set<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (text.trim() === '') continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.match(line)) {
            waiters.delete(w);
            w.resolve(line);
          }
        }
      }
      cb();
    },
  });
  const gateway = await startGateway(yaml, { logger: pino({ level: 'info' }, sink) });
  const waitForLine = (match: (l: LogLine) => boolean, ms = 5_000): Promise<LogLine> => {
    const found = lines.find(match);
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      const w = {
        match,
        resolve: (l: LogLine) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(w);
        reject(new Error(`no matching log line within ${ms} ms`));
      }, ms);
      waiters.add(w);
    });
  };
  return {
    ...gateway,
    lines,
    waitForLine,
    exchangeLine: (agent, rpcId, ms) => waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.rpc_id === rpcId, ms),
  };
}

/** What a minted error is about: the request (id, method, tool) and the numbers the gateway measured. */
export type ExpectedError = LocalErrorInput & { id: RpcId; method: string; toolName?: string };

/**
 * The `observed_ms` a timed-out answer reports (deadline_exceeded, sse_deadline, sse_idle),
 * checked to be at least `limitMs` (the bound fired after its time, never before), so the
 * test can build the exact expected bytes with it.
 */
export function observedMsAtLeast(text: string, limitMs: number): number {
  const m = /"observed_ms":(\d+)/.exec(text.replace(/\\"/g, '"'));
  if (m === null) throw new Error(`no observed_ms in ${text.slice(0, 200)}`);
  const observed = Number(m[1]);
  if (!(observed >= limitMs)) throw new Error(`observed_ms ${observed} is under limit_ms ${limitMs}`);
  return observed;
}

/** The exact JSON-RPC message (as the gateway serializes it) answering a request with a minted error. */
export function expectedErrorJson(e: ExpectedError): string {
  const { id, method, ...rest } = e;
  return JSON.stringify(localErrorMessage(id, method, buildAdcpError({ method, ...rest })));
}

/**
 * Asserts that `r` is exactly the gateway's RESPONSE_TOO_LARGE `decoded_bytes` answer to a
 * `get_products` tools/call with this id (HTTP 200, no Content-Encoding), observed_bytes within
 * one decoder chunk past `limitBytes`; returns observed_bytes.
 */
export function assertDecodedBytesError(r: RawResponse, id: RpcId, limitBytes: number): number {
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-encoding'), null);
  const m = r.json() as { id: RpcId; result: { structuredContent: { adcp_error: { code: string; details: { reason: string; observed_bytes: number } } } } };
  assert.equal(m.id, id);
  assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
  assert.equal(m.result.structuredContent.adcp_error.details.reason, 'decoded_bytes');
  const observed = m.result.structuredContent.adcp_error.details.observed_bytes;
  assert.ok(observed > limitBytes && observed <= limitBytes + DECODER_CHUNK_BYTES, `observed_bytes ${observed}`);
  const expected = expectedErrorJson({ id, method: 'tools/call', toolName: 'get_products', reason: 'decoded_bytes', limitBytes, observedBytes: observed });
  assert.equal(r.text(), expected);
  assert.equal(r.bytes, Buffer.byteLength(expected));
  return observed;
}

/** The same message as the final SSE event the gateway writes on a stream already started. */
export function expectedErrorFrame(e: ExpectedError): string {
  return `event: message\ndata: ${expectedErrorJson(e)}\n\n`;
}

/**
 * A batch request as the host wrote it: its id (the value, with its text when a double changes
 * it: `9007199254740993`), and its method and tool name when they shape its error (a
 * `tools/call`, a `tasks/result`); a bare id is a request of another method (`ping`).
 */
export type BatchRequestId = RpcId | { id: RpcId; idText?: string; method?: string; toolName?: string };

/** A batch's `tools/call` of `tool` with this id, as {@link expectedBatchErrorJson} takes it: its error is the tool result it gets alone. */
export function batchToolCall(id: RpcId, tool: string): BatchRequestId {
  return { id, method: 'tools/call', toolName: tool };
}

/**
 * The exact JSON-RPC message answering one request of a batch with the batch's minted error:
 * the message that request gets sent alone (a tool error result for a `tools/call` or
 * `tasks/result`, with its recovery and, for a tool not read-only, the warning; a JSON-RPC
 * error for any other method), its id as the host wrote it.
 */
function batchRequestError(ref: BatchRequestId, e: LocalErrorInput): string {
  const { id, idText, method = '', toolName } = ref !== null && typeof ref === 'object' ? ref : { id: ref };
  return stringifyJsonRpc(localErrorMessage(id, method, buildAdcpError({ method, ...(toolName !== undefined ? { toolName } : {}), ...e })), idText);
}

/**
 * The exact JSON body of a batch's local error answered before anything was sent: a JSON array
 * of one error per request of `ids` (the batch's requests, in its order), HTTP 200.
 */
export function expectedBatchErrorJson(ids: readonly BatchRequestId[], e: LocalErrorInput): string {
  return `[${ids.map((ref) => batchRequestError(ref, e)).join(',')}]`;
}

/** The same errors as the final SSE events of a batch's stream, one per request still awaited (`ids`). */
export function expectedBatchErrorFrames(ids: readonly BatchRequestId[], e: LocalErrorInput): string {
  return ids.map((ref) => `event: message\ndata: ${batchRequestError(ref, e)}\n\n`).join('');
}

/** The gateway resume token format (`agw1.<payload>.<mac>`). */
export const RESUME_TOKEN = /^agw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

/**
 * A seller frame as the gateway forwards it: the seller's `id:` line replaced by `token`
 * (every other byte identical). Throws when the frame has no `id:` line.
 */
export function withToken(frame: string, token: string): string {
  const m = /^id: [^\n]*\n/.exec(frame);
  if (!m) throw new Error('frame has no id line');
  return `id: ${token}\n${frame.slice(m[0].length)}`;
}
