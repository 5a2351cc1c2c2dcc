/**
 * A stateless seller built with the MCP TypeScript SDK 1.x server, as the SDK's stateless
 * example runs one (`sessionIdGenerator: undefined`, a new `McpServer` and transport per HTTP
 * request, so any replica, or another seller, serves any host request without a session), with
 * the standalone GET stream: each open one keeps its server and transport until the host
 * closes it, its events stored with ids (an event store per stream), so that the gateway
 * mints resume tokens for them.
 *
 * Tool `whoami` answers the seller's tag. `notify(text)` sends `notifications/message` (level
 * info, `data` "<tag>: <text>") on every open standalone GET stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { OrderedEventStore } from './ordered-event-store.js';

export interface StatelessSellerRequest {
  readonly method: string;
  /** Lower-cased names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface StatelessSdk1Seller {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: StatelessSellerRequest[];
  /** How many standalone GET streams are open (their response head sent: the transport has registered them). */
  openGetStreams(): number;
  /** Sends `notifications/message` with data `<tag>: <text>` on every open standalone GET stream; returns how many. */
  notify(text: string): Promise<number>;
  close(): Promise<void>;
}

interface Served {
  readonly server: McpServer;
  readonly transport: StreamableHTTPServerTransport;
}

function serve(tag: string, withEvents: boolean): Served {
  const server = new McpServer({ name: `stateless-seller-${tag}`, version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('whoami', { description: 'The seller tag.' }, async () => ({ content: [{ type: 'text', text: `seller ${tag}` }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, ...(withEvents ? { eventStore: new OrderedEventStore() } : {}) });
  return { server, transport };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

export async function startStatelessSdk1Seller(tag: string): Promise<StatelessSdk1Seller> {
  const requests: StatelessSellerRequest[] = [];
  const getStreams = new Map<Served, ServerResponse>();
  const all = new Set<Served>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requests.push({ method: req.method ?? '', headers: { ...req.headers } });
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const served = serve(tag, req.method === 'GET');
    all.add(served);
    const get = req.method === 'GET';
    res.on('close', () => {
      getStreams.delete(served);
      all.delete(served);
      void served.transport.close().then(() => served.server.close());
    });
    await served.server.connect(served.transport);
    if (get) getStreams.set(served, res);
    await served.transport.handleRequest(req, res, body);
  }

  const httpServer: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    openGetStreams: () => [...getStreams.values()].filter((res) => res.headersSent).length,
    async notify(text) {
      const open = [...getStreams].filter(([, res]) => res.headersSent).map(([s]) => s);
      await Promise.all(open.map((s) => s.server.server.notification({ method: 'notifications/message', params: { level: 'info', data: `${tag}: ${text}` } })));
      return open.length;
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...all].map(async (s) => {
          await s.transport.close();
          await s.server.close();
        }));
        httpServer.closeAllConnections();
        await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      })();
      return closing;
    },
  };
}
