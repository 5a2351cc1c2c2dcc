/**
 * Regression: a seller answered a pending call on the standalone GET stream.
 *
 * Reported failure (a new user's trial, Medium): on `tools/call` id 1 the seller held back
 * its POST answer and pushed a ~42 KB response for id 1 (its JSON duplicated in a text item)
 * on the GET stream the MCP SDK client had opened (GET without Last-Event-ID). The SDK client
 * took it as its call's result: 4x the tool's 10,000-byte limit, the duplicate text not
 * removed, the GET line `bytes_saved: 0, outcome: "ok"`, the real call's exchange logged
 * `host_aborted`. MCP Streamable HTTP (2025-03-26, 2025-06-18, "Listening for Messages from
 * the Server"): on the stream a GET opens, "The server MUST NOT send a JSON-RPC response on
 * the stream unless resuming a stream associated with a previous client request."
 *
 * Input: a raw node:http seller behind the real gateway, a real MCP SDK 1.x client
 * (StreamableHTTPClientTransport; it opens the standalone GET stream after
 * `notifications/initialized`). On `tools/call` the seller starts the POST's SSE answer and
 * sends nothing on it, then writes on the GET stream: the ~42 KB response for the call's id,
 * a `notifications/message`, and a `ping` request (id `srv-<call id>`); once the client's
 * answer to that ping comes back (everything before it on the GET stream has been read):
 * (a) `hijacked` (tool limit 10,000 bytes): the seller answers the POST with its real, small
 *     result;
 * (b) `held` (tool `sse_idle_timeout_ms` 1500): the seller never answers the POST.
 * Expectation: the client never gets the injected result: (a) the seller's real answer,
 * outcome ok; (b) the gateway's `sse_idle` tool error for its id. The notification reached
 * the client's handler and the ping its default handler (the seller got its answer). The
 * gateway logged `SSE stream: event dropped` (warn, agent, reason
 * `get_stream_response`) and counted `adcp_gateway_sse_events_dropped_total{reason=
 * "get_stream_response"}` once per call.
 * (c) control, raw: a GET whose events mix responses (with and without an id, an error, a
 * `method` beside `result`, an array holding one, a key written with an escape) with
 * notifications and server requests: exactly the notifications and requests reach the host,
 * as the seller's bytes; one drop per response (counted by the throttled drop warnings and
 * the exchange line's `events_dropped`); the stream stays open until the seller ends it.
 * (d) a GET resuming the standalone stream (Last-Event-ID with the token of one of its events)
 *     is still that stream: a response there is dropped, the notification after it passes.
 * (e) control: a resumed GET (Last-Event-ID with the gateway's token, a POST's stream that
 * ended after its priming event, as the conformance `sse-retry` scenario does) still
 * delivers the call's response.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, RESUME_YAML, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { droppedInLines, droppedInMetrics } from '../helpers/drop-lines.js';

const DROPPED = 'SSE stream: event dropped';
const REASON = 'get_stream_response';
const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const NOTE = (id: number | string): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `working on ${id}` } });
const REAL = { content: [{ type: 'text', text: 'real answer' }] };

/** The injected result: ~42 KB, its structuredContent duplicated as JSON in a text item. */
function injected(id: number): string {
  const products = Array.from({ length: 100 }, (_, k) => ({ product_id: `p-${k}`, name: `Product ${k}`, description: 'd'.repeat(160) }));
  const structured = { products };
  return toolResponse(id, { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured });
}

/** The raw control's GET stream: [data, forwarded?]. */
const RAW_EVENTS: ReadonlyArray<readonly [string, boolean]> = [
  ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"line 1\\nline 2"}}', true],
  ['{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', false],
  ['{"jsonrpc":"2.0","id":"srv-9","method":"ping"}', true],
  ['{"jsonrpc":"2.0","result":{"content":[]}}', false],
  ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"the \\"result\\" was late"}}', true],
  ['{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}', false],
  ['{"jsonrpc":"2.0","id":3,"method":"ping","result":{}}', false],
  ['[{"jsonrpc":"2.0","id":4,"result":{}}]', false],
  ['{"jsonrpc":"2.0","id":5,"\\u0072esult":{}}', false],
  ['[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"m"}}]', false],
  ['{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"result":"nested"}}', true],
];

let getStream: ServerResponse | undefined;
let getOpened: () => void = () => {};
let getReady = new Promise<void>((resolve) => (getOpened = resolve));
/** Resolvers waiting for the client's answer to a server request, by its id. */
const answered = new Map<string, (body: unknown) => void>();
const clientAnswers: unknown[] = [];
/** Call ids by the seller event id of their POST stream's priming event (tool `resumed`). */
const primed = new Map<string, number>();

function waitForAnswer(id: string): Promise<unknown> {
  return new Promise((resolve) => answered.set(id, resolve));
}

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.url === '/raw') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(RAW_EVENTS.map(([data]) => frame(data)).join(''));
      return;
    }
    if (req.url === '/listen') {
      // The standalone GET stream with an event id, then its resume (the gateway's token for g-1).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.headers['last-event-id'] === undefined) res.end(`id: g-1\n${frame(NOTE('g-1'))}`);
      else res.end(frame(toolResponse(1, REAL)) + frame(NOTE('g-2')));
      return;
    }
    if (req.method === 'GET') {
      const lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (typeof lastEventId === 'string') {
        // Resuming the POST stream of tool `resumed`: its response, then the end.
        const id = primed.get(lastEventId)!;
        res.end(frame(toolResponse(id, REAL)));
        return;
      }
      res.flushHeaders();
      getStream = res;
      getOpened();
      return;
    }
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number | string; method?: string; params?: { name?: string; protocolVersion?: string } };
    if (msg.method === 'initialize') {
      const result = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'get-stream-hijack', version: '1' } };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(toolResponse(msg.id as number, result));
      return;
    }
    if (msg.method === undefined) {
      // The client's answer to a server request.
      clientAnswers.push(msg);
      answered.get(String(msg.id))?.(msg);
      return void res.writeHead(202).end();
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    const id = msg.id as number;
    const name = msg.params?.name;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (name === 'resumed') {
      primed.set(`r-${id}`, id);
      res.end(`id: r-${id}\nretry: 500\ndata: \n\n`);
      return;
    }
    res.flushHeaders();
    void (async () => {
      await getReady;
      const pong = waitForAnswer(`srv-${id}`);
      getStream!.write(frame(injected(id)) + frame(NOTE(id)) + frame(JSON.stringify({ jsonrpc: '2.0', id: `srv-${id}`, method: 'ping' })));
      await pong;
      if (name === 'hijacked') res.end(frame(toolResponse(id, REAL)));
      // `held`: never answered; the gateway's sse_idle ends it.
    })();
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(
    agentsYaml(
      {
        seller: { url: seller.url, tools: '{ hijacked: { max_response_bytes: 10000 }, held: { sse_idle_timeout_ms: 1500 } }' },
        raw: seller.url.replace(/\/mcp$/, '/raw'),
        listen: seller.url.replace(/\/mcp$/, '/listen'),
      },
      RESUME_YAML,
    ),
  ),
);
const gw = (): ObservedGateway => stack.gateway;

async function dropped(agent: string): Promise<number> {
  return droppedInMetrics(await gw().app.gateway.metrics.render(), agent, REASON);
}

/** An SDK client connected through the gateway, its logging notifications recorded. */
async function connect(): Promise<{ client: Client; notes: string[] }> {
  getReady = new Promise<void>((resolve) => (getOpened = resolve));
  const client = new Client({ name: 'get-stream-hijack-test', version: '1' });
  stack.closeAfter(client);
  const notes: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(String(n.params.data)));
  await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(gw().agentUrl('seller')))), 5_000, 'connect');
  await withTimeout(getReady, 5_000, 'the client opens its GET stream');
  return { client, notes };
}

describe('a response on the standalone GET stream never answers a pending call', { timeout: TEST_TIMEOUT_MS }, () => {
  test('hijacked: the client gets the seller\'s real POST answer, not the injected result', async () => {
    const before = await dropped('seller');
    const { client, notes } = await connect();
    const result = await withTimeout(client.callTool({ name: 'hijacked', arguments: {} }), 10_000, 'callTool');
    assert.deepEqual(result, REAL);
    // Controls on the same GET stream: the notification reached the client, the ping was answered.
    assert.deepEqual(notes, ['working on 1']);
    assert.ok(clientAnswers.some((m) => (m as { id: unknown }).id === 'srv-1'), 'the client answered the server request');
    const warning = await gw().waitForLine((l) => l.msg === DROPPED && l.reason === REASON);
    assert.deepEqual({ level: warning.level, agent: warning.agent }, { level: 40, agent: 'seller' });
    assert.equal(await dropped('seller'), before + 1);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.tool === 'hijacked');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, rpc_id: line.rpc_id }, { outcome: 'ok', reason: null, rpc_id: 1 });
    await client.close();
  });

  test('held: the client gets the gateway\'s sse_idle error for its id, not the injected result', async () => {
    const before = await dropped('seller');
    const { client, notes } = await connect();
    const result = (await withTimeout(client.callTool({ name: 'held', arguments: {} }), 10_000, 'callTool')) as {
      isError?: boolean;
      structuredContent?: { adcp_error?: { code: string; details: { reason: string } } };
    };
    assert.equal(result.isError, true);
    assert.deepEqual(
      { code: result.structuredContent?.adcp_error?.code, reason: result.structuredContent?.adcp_error?.details.reason },
      { code: 'SERVICE_UNAVAILABLE', reason: 'sse_idle' },
    );
    assert.deepEqual(notes, ['working on 1']);
    assert.equal(await dropped('seller'), before + 1);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.tool === 'held');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'sse_idle' });
    await client.close();
  });

  test('control, raw: notifications and requests pass as the seller sent them; every response shape is dropped', async () => {
    const before = await dropped('raw');
    const res = await fetch(gw().agentUrl('raw'), { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } });
    assert.equal(res.status, 200);
    const text = await withTimeout(res.text(), 5_000, 'GET stream');
    assert.equal(text, RAW_EVENTS.filter(([, kept]) => kept).map(([data]) => frame(data)).join(''));
    const drops = RAW_EVENTS.filter(([, kept]) => !kept).length;
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'raw');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'ok', reason: REASON, bytes_to_host: Buffer.byteLength(text) });
    // The drop warnings are throttled per stream (the first drop's line, then a summary: a new
    // user's trial 9, F5); they account for every drop, as the exchange line does.
    assert.deepEqual(droppedInLines(gw().lines, 'raw'), { [REASON]: drops });
    assert.deepEqual(line.events_dropped, { [REASON]: drops });
    assert.equal(await dropped('raw'), before + drops);
  });

  test('a GET resuming the standalone stream (its own token) is still that stream: the response is dropped', async () => {
    const headers = { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const first = await withTimeout((await fetch(gw().agentUrl('listen'), { headers })).text(), 5_000, 'GET stream');
    const token = /^id: (\S+)$/m.exec(first)?.[1];
    assert.ok(token !== undefined && token !== 'g-1', 'the event id went out as a gateway token');
    const resumed = await fetch(gw().agentUrl('listen'), { headers: { ...headers, 'last-event-id': token } });
    assert.equal(resumed.status, 200);
    assert.equal(await withTimeout(resumed.text(), 5_000, 'resumed GET stream'), frame(NOTE('g-2')));
    assert.equal(await dropped('listen'), 1);
  });

  test('control: a resumed GET (Last-Event-ID, the gateway\'s token) still delivers the call\'s response', async () => {
    const { client } = await connect();
    const result = await withTimeout(client.callTool({ name: 'resumed', arguments: {} }), 10_000, 'callTool');
    assert.deepEqual(result, REAL);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.tool === 'resumed');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    await client.close();
  });
});
