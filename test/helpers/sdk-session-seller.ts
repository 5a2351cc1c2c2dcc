/**
 * A real MCP TypeScript SDK 1.x seller with sessions, serving a `Server` the test builds: at
 * `/mcp`, an `initialize` without `Mcp-Session-Id` gets a new StreamableHTTPServerTransport
 * (`sessionIdGenerator: randomUUID`, no event store) and a new server, and each later request
 * goes to its session's transport (an unknown session: 404; no session and no `initialize`:
 * 400; DELETE ends the session); at `/stateless`, each request gets a fresh server and
 * transport with no session (so it takes any `Mcp-Session-Id`). The SDK transport maps each
 * response to its stream by the parsed request id, which is what
 * test/regressions/duplicate-in-flight-id-hangs-first-call.test.ts and
 * test/regressions/cancelled-call-gets-minted-upstream-reset.test.ts (the SDK client's
 * cancellation) need of it. With `eventStore` (a new store per session) its streams are
 * resumable: a priming event with an id on each POST stream (MCP 2025-11-25), replays on a GET
 * with `Last-Event-ID` (test/regressions/cancelled-call-resumed-gets-sse-idle.test.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export interface SdkSessionSeller {
  /** The stateful endpoint: `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The stateless endpoint: `http://127.0.0.1:<port>/stateless`. */
  readonly statelessUrl: string;
  /** Each JSON-RPC message POSTed to either endpoint, parsed, in order (a batch's elements one by one). */
  readonly messages: unknown[];
  /** The `Last-Event-ID` of each GET, in order (null for a GET without one: the standalone stream). */
  readonly gets: Array<string | null>;
  /**
   * The `Mcp-Session-Id` of each GET the seller answered 200, once its head is written: from
   * then on the session's transport has the stream (the SDK's standalone GET stream, where it
   * sends a request with no related request, dropping it while no such stream is open:
   * test/regressions/elicitation-wait-hits-sse-idle.test.ts).
   */
  readonly openedGets: string[];
  /** Closes every session's transport and the HTTP server. */
  close(): Promise<void>;
}

/**
 * Starts the seller on 127.0.0.1; `newServer` makes the server of each session (and of each
 * stateless request); `eventStore`, when given, the event store of each session.
 */
export async function startSdkSessionSeller(newServer: () => Server, eventStore?: () => EventStore): Promise<SdkSessionSeller> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const transports = new Set<StreamableHTTPServerTransport>();
  const messages: unknown[] = [];
  const gets: Array<string | null> = [];
  const openedGets: string[] = [];
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (req.method === 'GET') {
        gets.push((req.headers['last-event-id'] as string | undefined) ?? null);
        const session = req.headers['mcp-session-id'];
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
        res.writeHead = ((...args: unknown[]) => {
          const out = writeHead(...args);
          if (res.statusCode === 200 && typeof session === 'string') openedGets.push(session);
          return out;
        }) as ServerResponse['writeHead'];
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = req.method === 'POST' ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
      if (body !== undefined) messages.push(...(Array.isArray(body) ? body : [body]));
      if (req.url === '/stateless') {
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const server = newServer();
        res.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let t = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (t === undefined) {
        if (sid !== undefined || !isInitializeRequest(body)) {
          res.writeHead(sid ? 404 : 400).end();
          return;
        }
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          ...(eventStore !== undefined ? { eventStore: eventStore() } : {}),
          onsessioninitialized: (id) => void sessions.set(id, transport),
          onsessionclosed: (id) => void sessions.delete(id),
        });
        transports.add(transport);
        t = transport;
        await newServer().connect(t);
      }
      await t.handleRequest(req, res, body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    statelessUrl: `${base}/stateless`,
    messages,
    gets,
    openedGets,
    close: async () => {
      for (const t of transports) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
