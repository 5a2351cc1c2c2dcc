/**
 * Two real MCP TypeScript SDK 1.x sellers for the shutdown-drain regressions
 * (test/regressions/restart-with-secret-loses-answered-sse-call.test.ts,
 * test/regressions/drain-ends-get-stream-into-draining-refusals.test.ts), on 127.0.0.1:
 *
 * - `sse`: stateful (`Mcp-Session-Id`), with an event store (every SSE event carries an id, so
 *   a stream through a gateway with a configured resume secret can be resumed) and the
 *   standalone GET stream. Tool `sse_call`: one progress notification (an event with an id),
 *   then its result once the test releases it.
 *   Tool `poll_call` (SEP-1699 polling): one progress notification, then, once `poll_close` is
 *   released, the seller closes its own SSE stream for the call (`closeSSEStream`), and
 *   answers once `poll_call` is released (on the stream the client resumes with `Last-Event-ID`).
 * - `json`: stateless, `enableJsonResponse` (answers are JSON bodies; a GET gets 405, which
 *   the SDK client takes as "no standalone stream"). Tool `json_call`: its result once released.
 *
 * `release(tool)` lets every run of `tool` waiting now (and every later one) answer.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { OrderedEventStore } from './ordered-event-store.js';

export const SSE_RESULT = { content: [{ type: 'text', text: 'sse_call done' }] };
export const POLL_RESULT = { content: [{ type: 'text', text: 'poll_call done' }] };
export const JSON_RESULT = { content: [{ type: 'text', text: 'json_call done' }] };

export interface DrainSellers {
  /** `http://127.0.0.1:<port>/mcp` of the stateful SSE seller. */
  readonly sseUrl: string;
  /** `http://127.0.0.1:<port>/mcp` of the stateless JSON seller. */
  readonly jsonUrl: string;
  /** Lets `tool`'s runs answer, now and from now on. */
  release(tool: 'sse_call' | 'json_call' | 'poll_close' | 'poll_call'): void;
  /** Holds both tools again (between tests). */
  reset(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return chunks.length === 0 ? undefined : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

export async function startDrainSellers(): Promise<DrainSellers> {
  const released = new Set<string>();
  const waiting = new Map<string, Set<() => void>>();
  const until = (tool: string): Promise<void> =>
    released.has(tool)
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          if (!waiting.has(tool)) waiting.set(tool, new Set());
          waiting.get(tool)!.add(resolve);
        });

  const build = (name: string): McpServer => {
    const server = new McpServer({ name, version: '1.0.0' });
    server.registerTool('sse_call', { description: 'Progress, then its result once released.' }, async (extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
      await until('sse_call');
      return SSE_RESULT as never;
    });
    server.registerTool('poll_call', { description: 'Progress, closes its stream, then its result.' }, async (extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
      await until('poll_close');
      extra.closeSSEStream?.();
      await until('poll_call');
      return POLL_RESULT as never;
    });
    server.registerTool('json_call', { description: 'Its result once released.' }, async () => {
      await until('json_call');
      return JSON_RESULT as never;
    });
    return server;
  };

  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const events = new OrderedEventStore();
  const sse = await listen(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (transport === undefined) {
      if (sid !== undefined) return void res.writeHead(404).end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
      const fresh: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: events,
        onsessioninitialized: (id) => void sessions.set(id, fresh),
      });
      transport = fresh;
      await build('drain-sse').connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  const json = await listen(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const body = await readBody(req);
    const server = build('drain-json');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });

  return {
    sseUrl: sse.url,
    jsonUrl: json.url,
    release(tool) {
      released.add(tool);
      for (const resolve of waiting.get(tool) ?? []) resolve();
      waiting.delete(tool);
    },
    reset() {
      released.clear();
    },
    async close() {
      for (const tool of ['sse_call', 'json_call', 'poll_close', 'poll_call']) released.add(tool);
      for (const set of waiting.values()) for (const resolve of set) resolve();
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      for (const { server } of [sse, json]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/** One HTTP exchange a client made through {@link watchingFetch}: a status, or `failed` (ECONNREFUSED, a reset). */
export interface Attempt {
  readonly method: string;
  readonly lastEventId: string | null;
  readonly status: number | 'failed';
  /** Date.now() when it answered or failed. */
  readonly at: number;
}

/** A fetch for the SDK client's transport that records every attempt in `seen`, and calls `onGetOpen` when a GET is answered 200. */
export function watchingFetch(seen: Attempt[], onGetOpen: () => void = () => {}): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const method = init?.method ?? 'GET';
    const lastEventId = new Headers(init?.headers).get('last-event-id');
    try {
      const res = await fetch(url, init);
      seen.push({ method, lastEventId, status: res.status, at: Date.now() });
      if (method === 'GET' && res.status === 200) onGetOpen();
      return res;
    } catch (err) {
      seen.push({ method, lastEventId, status: 'failed', at: Date.now() });
      throw err;
    }
  };
}
