/**
 * Every paginated list keeps its `cursor` / `nextCursor` intact through the gateway, for hosts
 * on every 2025-era revision and for JSON and SSE answers: `tools/list`, `resources/list`,
 * `resources/templates/list`, `prompts/list` (and `tasks/list`, in tasks-2025-11-25.test.ts;
 * 2026-07-28 lists in revision-2026-07-28.test.ts). List results are never rewritten: the
 * host gets the seller's bytes. The seller is a low-level SDK 1.x server whose cursors are
 * deliberately awkward (slashes, `=`, `+`, `?`, unicode) opaque strings.
 */
import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, sseMessages } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const PAGES = 3;
const cursorOf = (list: string, page: number): string => `${list}/p${page}?k=a+b==/é`;

/** Page `page` (1-based) of `list`: two items, and a nextCursor until the last page. */
function page(list: string, cursor: string | undefined, item: (i: number) => Record<string, unknown>): Record<string, unknown> {
  const n = cursor === undefined ? 1 : Array.from({ length: PAGES }, (_, i) => cursorOf(list, i + 1)).indexOf(cursor) + 1;
  if (n < 1) throw new Error(`bad cursor ${cursor}`);
  const key = { 'tools/list': 'tools', 'resources/list': 'resources', 'resources/templates/list': 'resourceTemplates', 'prompts/list': 'prompts' }[list]!;
  const items = [item(n * 2 - 1), item(n * 2)];
  return n < PAGES ? { [key]: items, nextCursor: cursorOf(list, n + 1) } : { [key]: items };
}

function buildServer(): Server {
  const server = new Server({ name: 'paginated-seller', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (r) =>
    page('tools/list', r.params?.cursor, (i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' } })) as never,
  );
  server.setRequestHandler(ListResourcesRequestSchema, (r) =>
    page('resources/list', r.params?.cursor, (i) => ({ uri: `adcp://report/${i}`, name: `report ${i}` })) as never,
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (r) =>
    page('resources/templates/list', r.params?.cursor, (i) => ({ uriTemplate: `adcp://report/{id}/${i}`, name: `template ${i}` })) as never,
  );
  server.setRequestHandler(ListPromptsRequestSchema, (r) => page('prompts/list', r.params?.cursor, (i) => ({ name: `prompt_${i}` })) as never);
  return server;
}

const LISTS = ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'] as const;
const REVISIONS = ['2025-03-26', '2025-06-18', '2025-11-25'] as const;

describe('pagination: cursors and nextCursor pass through every list untouched', { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  let http: HttpServer;
  let gateway: RunningGateway;
  let base: string;
  const seenCursors: (string | undefined)[] = [];

  before(async () => {
    // Stateless: /json answers application/json, /sse answers text/event-stream.
    http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { params?: { cursor?: string } };
        seenCursors.push(body.params?.cursor);
        const server = buildServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: req.url === '/json' });
        res.on('close', () => void transport.close().then(() => server.close()));
        void server.connect(transport).then(() => transport.handleRequest(req, res, body));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    gateway = await startGateway(['log_level: silent', 'agents:', '  json:', `    url: ${base}/json`, '  sse:', `    url: ${base}/sse`, ''].join('\n'));
  });
  after(async () => {
    await gateway?.close();
    http?.closeAllConnections();
    await new Promise<void>((resolve) => http?.close(() => resolve()));
  });

  for (const mode of ['json', 'sse'] as const) {
    for (const revision of REVISIONS) {
      test(`${mode}, host on ${revision}: every page of every list, byte for byte`, { timeout: TEST_TIMEOUT_MS }, async () => {
        const headers: Record<string, string> = revision === '2025-03-26' ? {} : { 'mcp-protocol-version': revision };
        for (const list of LISTS) {
          let cursor: string | undefined;
          const cursors: (string | undefined)[] = [];
          for (let n = 1; n <= PAGES; n++) {
            const message = { jsonrpc: '2.0', id: n, method: list, params: cursor === undefined ? {} : { cursor } };
            const direct = await withTimeout(rawPost(`${base}/${mode}`, message, headers));
            const from = seenCursors.length;
            const via = await withTimeout(rawPost(gateway.agentUrl(mode), message, headers));
            assert.equal(via.status, 200);
            assert.equal(seenCursors[from], cursor, 'the seller got the cursor exactly');
            const result = ((mode === 'json' ? via.json() : sseMessages(via.text())[0]) as { result: { nextCursor?: string } }).result;
            if (mode === 'json') assert.ok(via.body.equals(direct.body), `${list} page ${n}: the seller's bytes`);
            else assert.deepEqual(sseMessages(via.text()), sseMessages(direct.text()), `${list} page ${n}`);
            cursors.push(cursor);
            cursor = result.nextCursor;
          }
          assert.equal(cursor, undefined, `${list}: the last page has no nextCursor`);
          assert.deepEqual(cursors, [undefined, cursorOf(list, 2), cursorOf(list, 3)]);
        }
      });
    }
  }
});
