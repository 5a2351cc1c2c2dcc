/**
 * A seller for the 2025-era revisions (2025-03-26, 2025-06-18, 2025-11-25), built with the
 * MCP TypeScript SDK 1.x server: stateful sessions (`Mcp-Session-Id`, DELETE), the standalone
 * GET stream, SSE answers with an event store (so 2025-11-25 clients get a priming event with
 * an id and `retry:`, and closed streams can be resumed with `Last-Event-ID`), a paginated
 * `tools/list`, and 2025-11-25 tasks (`tools/call` with `params.task`, `tasks/get`,
 * `tasks/result`, `tasks/list`).
 *
 * Every HTTP request it receives is recorded (method, headers, body) so tests can assert what
 * reached the seller through the gateway.
 *
 * Tools:
 *   list_products     structuredContent AND the same JSON as text (the double payload)
 *   get_media_buy     structuredContent plus a terse, different text (nothing to dedupe)
 *   build_report      task-capable (`execution.taskSupport: "optional"`); result is the double payload,
 *                     `rows` sizes it
 *   slow_report       2025-11-25 resumption: sends a progress notification, closes its own SSE
 *                     stream (`closeSSEStream`), waits until the client's `Last-Event-ID`
 *                     resume of that session is open (at most RESUME_WAIT_MS), then returns
 *                     the double payload, which the client receives on the resumed stream.
 *                     (Returning at once raced the SDK 1.x transport: a result stored while
 *                     a resume is being replayed, before its stream is registered, is neither
 *                     replayed nor written live; the client then timed out, ~1 run in 5 under
 *                     load.)
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { OrderedEventStore } from './ordered-event-store.js';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { isInitializeRequest, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface SellerRequest {
  readonly method: string;
  /** Lower-cased names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body of a POST (undefined for GET/DELETE). */
  readonly body: unknown;
  /** `method` of a POSTed JSON-RPC message, if any. */
  readonly rpcMethod: string | undefined;
}

export interface Sdk1Seller {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: SellerRequest[];
  /** Live session ids. */
  sessionIds(): string[];
  /** Forgets every session, as a seller does when sessions expire: later requests with those ids get 404. */
  expireSessions(): Promise<void>;
  /** Sends `notifications/tools/list_changed` on every session (no related request: the standalone GET stream). */
  notifyToolListChanged(): Promise<void>;
  close(): Promise<void>;
}

/** The paginated catalog: `tools/list` answers one page of {@link TOOLS_PAGE_SIZE} at a time. */
export const TOOLS_PAGE_SIZE = 2;
/** Cursor of page n (n >= 1): opaque to clients, and must reach the seller exactly as it sent it. */
export const pageCursor = (n: number): string => `opaque/page=${n}?+==`;

/** `retry:` the seller puts on its priming events (ms). */
export const SELLER_RETRY_MS = 25;

export function productsPayload(count = 6): Record<string, unknown> {
  return {
    status: 'completed',
    products: Array.from({ length: count }, (_, i) => ({
      product_id: `ctv_premium_${i + 1}`,
      name: `Premium CTV package ${i + 1}`,
      description: 'Connected TV inventory sold on a guaranteed basis across premium publishers, brand safe.',
      pricing_options: [{ pricing_option_id: `po_${i + 1}`, pricing_model: 'cpm', currency: 'USD', fixed_price: 30 + i }],
    })),
  };
}

function reportPayload(rows: number): Record<string, unknown> {
  return {
    status: 'completed',
    report_id: 'rpt_0001',
    rows: Array.from({ length: rows }, (_, i) => ({ geo: `US-${10_000 + i}`, impressions: 1_000 + i, spend: Number((18 + i / 100).toFixed(2)) })),
  };
}

const doublePayload = (data: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(data) }],
  structuredContent: data,
});

/** How long `slow_report` waits for the client's resume before returning anyway (ms). */
const RESUME_WAIT_MS = 20_000;

/** Resolves once a `Last-Event-ID` GET of the session has its response open, or after `timeoutMs`. */
type WaitForResume = (sessionId: string | undefined, timeoutMs: number) => Promise<void>;

function buildServer(taskStore: InMemoryTaskStore, waitForResume: WaitForResume): McpServer {
  const server = new McpServer(
    { name: 'revision-seller-sdk1', version: '1.0.0' },
    {
      capabilities: { logging: {}, tools: { listChanged: true }, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );

  server.registerTool(
    'list_products',
    { description: 'Products matching a brief.', inputSchema: { brief: z.string().optional(), max_results: z.number().int().optional() } },
    async ({ max_results }) => doublePayload(productsPayload(max_results ?? 6)),
  );
  server.registerTool(
    'get_media_buy',
    { description: 'One media buy.', inputSchema: { media_buy_id: z.string() } },
    async ({ media_buy_id }) => ({
      content: [{ type: 'text', text: `Media buy ${media_buy_id} is active.` }],
      structuredContent: { media_buy_id, status: 'active' },
    }),
  );
  server.registerTool(
    'slow_report',
    { description: 'A report whose stream the seller closes before the result (2025-11-25 polling).', inputSchema: { rows: z.number().int().optional() } },
    async ({ rows }, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'queued' } });
      }
      // SEP-1699: the server ends the POST stream on purpose; the client resumes with Last-Event-ID.
      extra.closeSSEStream?.();
      await waitForResume(extra.sessionId, RESUME_WAIT_MS);
      return doublePayload(reportPayload(rows ?? 20));
    },
  );
  server.experimental.tasks.registerToolTask(
    'build_report',
    { description: 'A report built as a task.', inputSchema: { rows: z.number().int().optional() }, execution: { taskSupport: 'optional' } },
    {
      async createTask({ rows }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 10 });
        // The work is done at once: the task is completed before the CreateTaskResult goes out.
        await store.storeTaskResult(task.taskId, 'completed', doublePayload(reportPayload(rows ?? 20)));
        return { task };
      },
      async getTask(_args, { taskId, taskStore: store }) {
        return store.getTask(taskId);
      },
      async getTaskResult(_args, { taskId, taskStore: store }) {
        return (await store.getTaskResult(taskId)) as CallToolResult;
      },
    },
  );

  // tools/list by pages, with opaque cursors the client must hand back untouched.
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const all: Tool[] = TOOL_DEFINITIONS;
    const cursor = request.params?.cursor;
    let page = 1;
    if (cursor !== undefined) {
      const i = Array.from({ length: all.length }, (_, k) => pageCursor(k + 1)).indexOf(cursor);
      if (i < 0) throw new Error(`unknown cursor ${cursor}`);
      page = i + 1;
    }
    const start = (page - 1) * TOOLS_PAGE_SIZE;
    const tools = all.slice(start, start + TOOLS_PAGE_SIZE);
    return start + TOOLS_PAGE_SIZE < all.length ? { tools, nextCursor: pageCursor(page + 1) } : { tools };
  });
  return server;
}

/** The JSON Schema definitions `tools/list` serves (hand-written: the list handler is the seller's own). */
export const TOOL_DEFINITIONS: Tool[] = [
  { name: 'list_products', description: 'Products matching a brief.', inputSchema: { type: 'object', properties: { brief: { type: 'string' }, max_results: { type: 'integer' } } } },
  { name: 'get_media_buy', description: 'One media buy.', inputSchema: { type: 'object', properties: { media_buy_id: { type: 'string' } }, required: ['media_buy_id'] } },
  { name: 'slow_report', description: 'A report whose stream the seller closes before the result.', inputSchema: { type: 'object', properties: { rows: { type: 'integer' } } } },
  {
    name: 'build_report',
    description: 'A report built as a task.',
    inputSchema: { type: 'object', properties: { rows: { type: 'integer' } } },
    execution: { taskSupport: 'optional' },
  },
];

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

export async function startSdk1Seller(): Promise<Sdk1Seller> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const requests: SellerRequest[] = [];
  // One task store for the seller: task ids outlive the request that made them.
  const taskStore = new InMemoryTaskStore();
  /** Per session: callbacks of `slow_report` calls waiting for the client's resume. */
  const resumeWaiters = new Map<string, (() => void)[]>();
  const waitForResume: WaitForResume = (sessionId, timeoutMs) =>
    new Promise<void>((resolve) => {
      if (sessionId === undefined) return resolve();
      const timer = setTimeout(resolve, timeoutMs);
      const list = resumeWaiters.get(sessionId) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      resumeWaiters.set(sessionId, list);
    });
  /** Wakes the session's waiters once the resumed stream's headers are out (the transport registered it before). */
  const notifyResumed = async (sessionId: string, res: ServerResponse): Promise<void> => {
    for (let i = 0; i < 2_500 && !res.headersSent && !res.destroyed; i++) await new Promise((r) => setTimeout(r, 2));
    const list = resumeWaiters.get(sessionId) ?? [];
    resumeWaiters.delete(sessionId);
    for (const wake of list) wake();
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const rpcMethod = body && typeof body === 'object' && !Array.isArray(body) ? (body as { method?: unknown }).method : undefined;
    requests.push({ method: req.method ?? '', headers: { ...req.headers }, body, rpcMethod: typeof rpcMethod === 'string' ? rpcMethod : undefined });

    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) return sendError(res, 404, -32001, 'Session not found');
      const resumed = req.method === 'GET' && req.headers['last-event-id'] !== undefined ? notifyResumed(sessionId, res) : undefined;
      await session.transport.handleRequest(req, res, body);
      await resumed;
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return sendError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const server = buildServer(taskStore, waitForResume);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new OrderedEventStore(),
      retryInterval: SELLER_RETRY_MS,
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const httpServer: Server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://seller.invalid').pathname !== '/mcp') return sendError(res, 404, -32601, 'Not found');
    handle(req, res).catch(() => sendError(res, 500, -32603, 'Internal server error'));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;

  const closeAll = async (): Promise<void> => {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(all.map(async ({ transport, server }) => {
      await transport.close();
      await server.close();
    }));
  };
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    sessionIds: () => [...sessions.keys()],
    expireSessions: closeAll,
    async notifyToolListChanged() {
      for (const { server } of sessions.values()) server.sendToolListChanged();
      await Promise.resolve();
    },
    close() {
      closing ??= (async () => {
        await closeAll();
        httpServer.closeAllConnections();
        await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      })();
      return closing;
    },
  };
}
