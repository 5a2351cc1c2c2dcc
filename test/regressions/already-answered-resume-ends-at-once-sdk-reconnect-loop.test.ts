/**
 * Regression (a hostile trial 17, M2): a resume from the token of the event that carried the
 * response (`already_answered`) got an SSE stream that ended at once, empty. The MCP SDK 1.x
 * client (1.32) treats a POST stream as answered only on a *result*: after a JSON-RPC *error*
 * response on a resumable stream it resumes with GET + `Last-Event-ID`. Straight to the seller,
 * that GET is held open (nothing to replay) and nothing else happens; through the gateway the
 * empty stream ended at once, the client (no event, so no id) reconnected with a plain GET, and
 * the seller answered 409 (the session's standalone stream exists) three times: 7 `onerror`s
 * ending "Maximum reconnection attempts (3) exceeded", 4 extra requests per failed call.
 *
 * Expectation: such a resume gets HTTP 200 `text/event-stream` at once and a stream held open
 * with no byte in it, the seller not contacted, until the host closes it, or until the agent's
 * sse_idle_timeout_ms, or a graceful shutdown (`endStreams`): then it ends plainly after the
 * one event `id: <the token resumed from>` (as an idle standalone GET stream ends after its
 * pending id), so a client resumes from it again, not with no id (at a shutdown, then the
 * `retry:` of shutdown_sse_retry_ms, as on every stream a shutdown ends plainly). The exchange line, written
 * as it ends: outcome `already_answered`, reason null, upstream_status null.
 *
 * Input: (1) raw: a raw seller on 127.0.0.1 answers a tools/call over SSE (`id: e1`, the
 * response); GETs with `Last-Event-ID: <its token>`, sse_idle_timeout_ms 300. (2) an SDK 1.x
 * seller (low-level Server, an event store, retry 20 ms) whose tool throws McpError -32602,
 * and an SDK 1.x client (maxRetries 3) calling it through the gateway
 * (sse_idle_timeout_ms 5000): 3 s after the call failed, no 409, no GET but the client's
 * standalone one at the seller, no `onerror`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { OrderedEventStore } from '../support/sdk1/ordered-event-store.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { recordingFetch, type SeenExchange } from '../helpers/recording-fetch.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const IDLE_MS = 300;

/** A 2025-era SDK seller whose one tool answers with a JSON-RPC error; every request's method, Last-Event-ID and status recorded. */
interface ErrSeller {
  readonly url: string;
  readonly seen: { method: string; lastEventId: string | undefined; status?: number }[];
  close(): Promise<void>;
}

async function startErrSeller(): Promise<ErrSeller> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const seen: ErrSeller['seen'] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const entry: ErrSeller['seen'][number] = { method: req.method ?? '', lastEventId: req.headers['last-event-id'] as string | undefined };
    seen.push(entry);
    res.once('finish', () => void (entry.status = res.statusCode));
    res.once('close', () => void (entry.status ??= res.statusCode));
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (transport === undefined) {
      if (sid !== undefined || !isInitializeRequest(body)) {
        res.writeHead(sid !== undefined ? 404 : 400, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no session"}}');
        return;
      }
      const server = new Server({ name: 'rpcerr-seller', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'rpcerr', inputSchema: { type: 'object' } }] }));
      server.setRequestHandler(CallToolRequestSchema, () => {
        throw new McpError(-32602, 'bad params here');
      });
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new OrderedEventStore(),
        retryInterval: 20,
        onsessioninitialized: (id) => void sessions.set(id, t),
      });
      await server.connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, body);
  };
  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    async close() {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

interface Held {
  status: number | undefined;
  type: string | undefined;
  /** ms from the request to the response head. */
  headAfterMs: number;
  /**
   * Resolves with the whole body and the ms from the request to the end: the gateway's idle
   * timer starts after the request arrived, so the end comes at least sse_idle_timeout_ms
   * after it. (Measured from the head, it read 275.7 ms against 300 in a CI run under load:
   * the head had reached the client late.)
   */
  ended: Promise<{ body: string; afterMs: number }>;
  destroy(): void;
}

/** GETs `url` with `Last-Event-ID: token`; resolves at the response head. */
function resumeGet(url: string, token: string): Promise<Held> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } }, (res) => {
      const head = performance.now();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => void (body += c));
      const ended = new Promise<{ body: string; afterMs: number }>((done) => res.once('end', () => done({ body, afterMs: performance.now() - t0 })));
      resolve({ status: res.statusCode, type: res.headers['content-type'], headAfterMs: head - t0, ended, destroy: () => req.destroy() });
    });
    req.once('error', reject);
    req.end();
  });
}

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } }, RESUME_YAML)),
);

/** POSTs tools/call `id`, answered over SSE by the response with `id: e1`: its (final) token. */
async function finalToken(id: number): Promise<string> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`id: e1\ndata: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`);
  };
  const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), HEADERS);
  assert.equal(r.status, 200);
  const [token] = sseIds(r.text());
  assert.ok(token !== undefined, r.text());
  await stack.gateway.exchangeLine('s', id);
  return token;
}

const gets = (): number => stack.seller.requests.filter((q) => q.method === 'GET').length;

/** The resume's exchange line (the one for `id` after `posted`). */
const resumeLine = (id: number) => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.rpc_id === id && l.http_method === 'GET');

describe('already-answered-resume-ends-at-once-sdk-reconnect-loop', { timeout: TEST_TIMEOUT_MS }, () => {
  test('raw: 200 text/event-stream at once, held with no byte until sse_idle_timeout_ms, then `id: <token>` and a plain end; seller not contacted', async () => {
    const token = await finalToken(31);
    const before = gets();
    const held = await resumeGet(stack.gateway.agentUrl('s'), token);
    assert.deepEqual({ status: held.status, type: held.type }, { status: 200, type: 'text/event-stream' });
    assert.ok(held.headAfterMs < IDLE_MS / 2, `head after ${held.headAfterMs} ms`);
    const { body, afterMs } = await withTimeout(held.ended, 5_000, 'held stream end');
    assert.equal(body, `id: ${token}\n\n`);
    assert.ok(afterMs >= IDLE_MS - 20, `ended after ${afterMs} ms, before sse_idle_timeout_ms`);
    assert.equal(gets(), before, 'the seller gets no GET');
    const line = await resumeLine(31);
    assert.deepEqual(
      { status: line.status, upstream_status: line.upstream_status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, bytes_from_seller: line.bytes_from_seller },
      { status: 200, upstream_status: null, outcome: 'already_answered', reason: null, bytes_to_host: body.length, bytes_from_seller: 0 },
    );
  });

  test('raw: the host closing the held stream ends it (outcome already_answered, 0 bytes), and it leaves the open streams', async () => {
    const token = await finalToken(32);
    const held = await resumeGet(stack.gateway.agentUrl('s'), token);
    assert.equal(held.status, 200);
    assert.equal(stack.gateway.app.gateway.openStreams, 1);
    held.destroy();
    const line = await resumeLine(32);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'already_answered', reason: null, bytes_to_host: 0 });
    assert.equal(stack.gateway.app.gateway.openStreams, 0);
  });

  test('raw: a graceful shutdown (endStreams) ends the held stream plainly after `id: <token>`, once no request is in flight', async () => {
    const token = await finalToken(33);
    const held = await resumeGet(stack.gateway.agentUrl('s'), token);
    assert.equal(held.status, 200);
    // It answers no request: not what a shutdown waits for, left during its grace (trial 49, finding 2).
    assert.equal(stack.gateway.app.gateway.requestsInFlight, 0);
    assert.equal(stack.gateway.app.gateway.endStreams('grace'), 0);
    assert.equal(stack.gateway.app.gateway.endStreams('no_requests'), 1);
    const { body } = await withTimeout(held.ended, 5_000, 'held stream end');
    // Then the shutdown's retry: (shutdown_sse_retry_ms, default 5000; trial 53, F1).
    assert.equal(body, `id: ${token}\n\nretry: 5000\n\n`);
    assert.equal((await resumeLine(33)).outcome, 'already_answered');
    assert.equal(stack.gateway.app.gateway.openStreams, 0);
  });

  test('SDK 1.x client and seller: a JSON-RPC error answer, then no 409, no extra GET at the seller, no onerror', async () => {
    const seller = await startErrSeller();
    const gateway = await startObservedGateway(agentsYaml({ e: { url: seller.url, sse_idle_timeout_ms: 5_000 } }, RESUME_YAML));
    const seenByClient: SeenExchange[] = [];
    const client = new Client({ name: 'host', version: '1.0.0' });
    const errors: string[] = [];
    client.onerror = (e) => void errors.push(String(e));
    const transport = new StreamableHTTPClientTransport(new URL(gateway.agentUrl('e')), {
      fetch: recordingFetch(seenByClient),
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
    });
    try {
      await withTimeout(client.connect(transport), 10_000, 'connect');
      await assert.rejects(withTimeout(client.callTool({ name: 'rpcerr', arguments: {} }), 10_000, 'callTool'), /bad params here/);
      // The client waits the `retry:` it got (the seller's 20 ms, clamped by the gateway to
      // 500) before each reconnect: the resume at ~0.5 s, then, before, a plain GET and its
      // 409 every ~0.5 s, the last onerror ("Maximum reconnection attempts (3) exceeded") by ~2.5 s.
      await new Promise((r) => setTimeout(r, 3_000));
      const resumes = seenByClient.filter((s) => s.method === 'GET' && s.lastEventId !== null);
      assert.equal(resumes.length, 1, 'the client resumed once, from the error response\'s token');
      assert.equal(resumes[0]!.status, 200);
      assert.deepEqual(seenByClient.filter((s) => s.status === 409).length, 0);
      assert.deepEqual(
        seller.seen.filter((s) => s.method === 'GET').map((s) => ({ lastEventId: s.lastEventId, status: s.status ?? 200 })),
        [{ lastEventId: undefined, status: 200 }],
        'only the client\'s standalone GET reached the seller',
      );
      assert.deepEqual(errors, []);
    } finally {
      await client.close();
      await gateway.close();
      await seller.close();
    }
  });
});
