/**
 * A 2026-07-28 seller built with the MCP TypeScript SDK 2.x server (`@modelcontextprotocol/server`):
 * `createMcpHandler` with a low-level `Server` per request, mounted on node:http by a small
 * adapter here (node request -> web `Request`, web `Response` -> node response, streamed).
 *
 * Stateless, as the revision is: no sessions, GET and DELETE answered 405 by the SDK. It
 * records every request (method, headers, raw body) and every response body it sent, so tests
 * can assert what reached it through the gateway and what the host got compared to it.
 *
 * Tools (`tools/list` pages of {@link SDK2_TOOLS_PAGE_SIZE}, opaque cursors):
 *   list_products   structuredContent AND the same JSON as text; `region` is mirrored into
 *                   `Mcp-Param-Region` (`x-mcp-header`) by 2026-07-28 clients
 *   get_media_buy   structuredContent plus a terse, different text
 *   build_report    answers with a task handle (`resultType: "task"`, tasks extension) when the
 *                   request declares `io.modelcontextprotocol/tasks`; `tasks/get` reports the task in
 *                   the state the test set with {@link Sdk2Seller.setTask}
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server, type Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';

export interface Sdk2Request {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The raw body bytes (empty for GET/DELETE). */
  readonly body: Buffer;
  /** What the seller answered: status and the full body bytes it wrote. */
  response?: { status: number; contentType: string | null; body: Buffer };
}

export type TaskState =
  | { status: 'working' }
  | { status: 'completed'; result: Record<string, unknown> }
  | { status: 'failed'; error: { code: number; message: string } }
  | { status: 'cancelled' };

export interface Sdk2Seller {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly requests: Sdk2Request[];
  /** Sets what `tasks/get` reports for `taskId` from now on. */
  setTask(taskId: string, state: TaskState): void;
  close(): Promise<void>;
}

export const SDK2_TOOLS_PAGE_SIZE = 2;
export const sdk2PageCursor = (n: number): string => `c2/${n}/=?&`;
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export function sdk2Products(region = 'us-west1'): Record<string, unknown> {
  return {
    status: 'completed',
    region,
    products: Array.from({ length: 5 }, (_, i) => ({
      product_id: `olv_${i + 1}`,
      name: `Online video package ${i + 1}`,
      description: 'Online video inventory, non-guaranteed auction with a floor, viewability measured by a third party.',
    })),
  };
}

export function sdk2Report(rows = 15): Record<string, unknown> {
  return { status: 'completed', report_id: 'rpt_2026', rows: Array.from({ length: rows }, (_, i) => ({ day: i + 1, impressions: 10_000 + i * 7 })) };
}

export const doublePayload = (data: Record<string, unknown>): { content: { type: 'text'; text: string }[]; structuredContent: Record<string, unknown> } => ({
  content: [{ type: 'text', text: JSON.stringify(data) }],
  structuredContent: data,
});

export const SDK2_TOOLS: Tool[] = [
  {
    name: 'list_products',
    description: 'Products matching a brief.',
    inputSchema: {
      type: 'object' as const,
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, brief: { type: 'string' } },
    },
  },
  { name: 'get_media_buy', description: 'One media buy.', inputSchema: { type: 'object' as const, properties: { media_buy_id: { type: 'string' } } } },
  { name: 'build_report', description: 'A report built as a task.', inputSchema: { type: 'object' as const, properties: { rows: { type: 'integer' } } } },
];

const TIMESTAMP = '2026-08-01T10:00:00Z';

export async function startSdk2Seller(): Promise<Sdk2Seller> {
  const requests: Sdk2Request[] = [];
  const tasks = new Map<string, TaskState>();
  let taskCounter = 0;

  const taskFields = (taskId: string, status: string): Record<string, unknown> => ({
    taskId,
    status,
    createdAt: TIMESTAMP,
    lastUpdatedAt: TIMESTAMP,
    ttlMs: 60_000,
    pollIntervalMs: 10,
  });

  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'revision-seller-sdk2', version: '2.0.0' }, { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } });
    server.setRequestHandler('tools/list', (request) => {
      const cursor = request.params?.cursor;
      const page = cursor === undefined ? 1 : Number(/^c2\/(\d+)\//.exec(cursor)?.[1] ?? NaN);
      if (!Number.isInteger(page)) throw new Error(`unknown cursor ${cursor}`);
      const start = (page - 1) * SDK2_TOOLS_PAGE_SIZE;
      const tools = SDK2_TOOLS.slice(start, start + SDK2_TOOLS_PAGE_SIZE);
      return start + SDK2_TOOLS_PAGE_SIZE < SDK2_TOOLS.length ? { tools, nextCursor: sdk2PageCursor(page + 1) } : { tools };
    });
    server.setRequestHandler('tools/call', (request, ctx) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      switch (request.params.name) {
        case 'list_products':
          return doublePayload(sdk2Products(typeof args.region === 'string' ? args.region : undefined));
        case 'get_media_buy':
          return { content: [{ type: 'text', text: 'Media buy is active.' }], structuredContent: { media_buy_id: String(args.media_buy_id ?? ''), status: 'active' } };
        case 'build_report': {
          // The SDK lifts the request's `_meta` envelope off the params into ctx.mcpReq.envelope.
          const envelope = (ctx.mcpReq as { envelope?: Record<string, unknown> }).envelope ?? {};
          const caps = envelope['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> } | undefined;
          if (!caps?.extensions || !Object.hasOwn(caps.extensions, TASKS_EXTENSION)) return doublePayload(sdk2Report());
          const taskId = `task-${++taskCounter}`;
          tasks.set(taskId, { status: 'working' });
          // The tasks extension's CreateTaskResult: a Task with resultType "task" (SEP-2663).
          return { resultType: 'task', ...taskFields(taskId, 'working') } as never;
        }
        default:
          return { content: [{ type: 'text', text: `Unknown tool ${request.params.name}` }], isError: true };
      }
    });
    server.setRequestHandler('tasks/get', { params: z.looseObject({ taskId: z.string() }) }, (params) => {
      const state = tasks.get(params.taskId);
      if (!state) throw Object.assign(new Error('Failed to retrieve task: Task not found'), { code: -32602 });
      const base = taskFields(params.taskId, state.status);
      if (state.status === 'completed') return { ...base, result: state.result };
      if (state.status === 'failed') return { ...base, statusMessage: state.error.message, error: state.error };
      return base;
    });
    return server;
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const record: Sdk2Request = { method: req.method ?? '', headers: { ...req.headers }, body };
    requests.push(record);

    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && body.length > 0;
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method, headers, ...(hasBody ? { body } : {}) }),
    );
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => (out[name] = value));
    res.writeHead(response.status, out);
    res.flushHeaders();
    const sent: Buffer[] = [];
    if (response.body) {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        sent.push(Buffer.from(chunk));
        res.write(chunk);
      }
    }
    record.response = { status: response.status, contentType: response.headers.get('content-type'), body: Buffer.concat(sent) };
    res.end();
  }

  const httpServer: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    setTask: (taskId, state) => void tasks.set(taskId, state),
    close() {
      closing ??= (async () => {
        await handler.close();
        httpServer.closeAllConnections();
        await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      })();
      return closing;
    },
  };
}
