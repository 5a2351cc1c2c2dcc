/**
 * Regression: an SSE event with an `event:` name other than `message` skipped the JSON depth
 * and node bounds and every response check.
 *
 * Reported failure (a new user's trial 9, F1, High): a seller prefixed an event with
 * `event: x-custom` (any type but `message`; `event:  message`, two spaces, is the type
 * " message"). Its data got only the byte bounds: a response for id 999 on call 7's stream,
 * JSON nested 5,000 deep, an array of 200,001 values, a response on the standalone GET stream
 * and one on the stream answering a POSTed notification all reached the host, logged ok,
 * while the same data as an unnamed event was refused or dropped. The MCP TypeScript SDK
 * client dispatches only `message` events, but the MCP Go SDK client decodes every event,
 * whatever its name, and routes responses by id.
 *
 * Input: a raw node:http seller behind the real gateway (defaults: depth 64, 100,000 nodes,
 * 4 MiB per event), answering with SSE:
 * (a) a `tools/call`: a named event holding a response for id 999, then the call's real
 *     answer; the name as `event: x-custom` (one chunk, the planner's path), `event:  message`,
 *     `event:x-custom` (no space) and with CR LF line endings (the parser's path);
 * (b) a named event nested 100 deep; (c) a named event holding an array of 100,001 values;
 * (d) the standalone GET stream: named events holding a response for id 5 and an error for
 *     id 6, then a named notification;
 * (e) a POSTed notification's stream: a named event holding a response for id 1, then a named
 *     notification;
 * (f) the call's own response in a named event, then the same response unnamed;
 * (g) a batch (MCP 2025-03-26) of requests 1 and 2: request 1's response unnamed, then a named
 *     event holding request 2's response, or one for id 999;
 * (h) control: named events holding a progress notification (forwarded raw), a notification
 *     whose params hold a `"result"` key (parsed: it may be a response) and text that is no
 *     JSON, then the call's response as `event: message`.
 * Expectation: (a) the host gets exactly the gateway's `upstream_not_mcp` error event for the call's id,
 * outcome local_error; (b) `json_depth` (limit 64, observed 65) and (c) `json_nodes` (limit
 * 100000, observed 100001), each for the call's id as the only event; (d) and (e) exactly the named
 * notification, as the seller sent it, each response dropped (`get_stream_response`,
 * `notification_stream_response`: the stream's first drop logged with the `SSE
 * stream: event dropped` warning, the later ones in the summary at its end) and counted in
 * adcp_gateway_sse_events_dropped_total and the exchange line's `events_dropped`; (f) `upstream_not_mcp` for the call's id, nothing of either
 * response (a named event is no answer: clients differ on it, docs/errors.md); (g) request 1's
 * response, then `upstream_not_mcp` for request 2; (h) every byte the seller sent, names
 * included, outcome ok.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedBatchErrorFrames, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { assertGetStreamDrops, droppedInLines, droppedInMetrics } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * 1024 * 1024;
const DROPPED = 'SSE stream: event dropped';
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const named = (type: string, data: string): string => `event: ${type}\ndata: ${data}\n\n`;
const plain = (data: string): string => `data: ${data}\n\n`;
const answer = (id: number | string, text: string): string => toolResponse(id, { content: [{ type: 'text', text }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}';
const RESULT_KEY_NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"result":"pending"}}}';
const DEEP = '['.repeat(100) + ']'.repeat(100);
const NODES = `[${Array(100_001).fill('0').join(',')}]`;

/** The seller's SSE answer to `tools/call` id `id`, by tool name. */
const STREAMS: Record<string, (id: number) => string> = {
  foreign_custom: (id) => named('x-custom', answer(999, 'answer for call 999')) + plain(answer(id, 'real answer')),
  foreign_two_spaces: (id) => `event:  message\ndata: ${answer(999, 'answer for call 999')}\n\n` + plain(answer(id, 'real answer')),
  foreign_no_space: (id) => `event:x-custom\ndata: ${answer(999, 'answer for call 999')}\n\n` + plain(answer(id, 'real answer')),
  foreign_crlf: (id) => `event: x-custom\r\ndata: ${answer(999, 'answer for call 999')}\r\n\r\n` + plain(answer(id, 'real answer')),
  deep: (id) => named('x-custom', DEEP) + plain(answer(id, 'real answer')),
  nodes: (id) => named('x-custom', NODES) + plain(answer(id, 'real answer')),
  own: (id) => named('x-custom', answer(id, 'named answer')) + plain(answer(id, 'real answer')),
  control: (id) => named('progress', PROGRESS) + named('progress', RESULT_KEY_NOTE) + named('log', 'plain text, not JSON [') + named('message', answer(id, 'real answer')),
};

const GET_STREAM = named('x-custom', answer(5, 'answer to pending call 5')) + named('x-custom', '{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"m"}}') + named('progress', NOTE);
const NOTIFICATION_STREAM = named('x', answer(1, 'answer to pending call 1')) + named('progress', NOTE);
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const LIST = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
const BATCH = `[${PING},${LIST}]`;
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(GET_STREAM);
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const body = req.body.toString('utf8');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (body.startsWith('[')) {
      const second = body.includes('"batch_foreign"') ? '{"jsonrpc":"2.0","id":999,"result":{}}' : '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
      return void res.end(plain(R1) + named('x-custom', second));
    }
    const msg = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
    if (msg.id === undefined) return void res.end(NOTIFICATION_STREAM);
    res.end(STREAMS[msg.params?.name ?? '']!(msg.id));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;

async function dropped(reason: string): Promise<number> {
  return droppedInMetrics(await gw().app.gateway.metrics.render(), 'seller', reason);
}


describe('a named SSE event is judged as a message event', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 0;
  /** Calls `tool` with a fresh id; the response, the id and its exchange line. */
  async function call(tool: string): Promise<{ text: string; bytes: number; id: number; outcome: unknown; reason: unknown }> {
    const rpcId = ++id;
    const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, tool), HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const line = await gw().exchangeLine('seller', rpcId);
    assert.equal(line.bytes_to_host, r.bytes);
    return { text: r.text(), bytes: r.bytes, id: rpcId, outcome: line.outcome, reason: line.reason };
  }

  for (const tool of ['foreign_custom', 'foreign_two_spaces', 'foreign_no_space', 'foreign_crlf']) {
    test(`${tool}: a response for another id ends the stream with upstream_not_mcp, nothing of it forwarded`, async () => {
      const r = await call(tool);
      assert.equal(r.text, expectedErrorFrame({ id: r.id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      assert.deepEqual({ outcome: r.outcome, reason: r.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
    });
  }

  test('deep: a named event over max_json_depth is json_depth for the call', async () => {
    const r = await call('deep');
    assert.equal(r.text, expectedErrorFrame({ id: r.id, method: 'tools/call', toolName: 'deep', reason: 'json_depth', limit: 64, observed: 65, limitBytes: LIMIT, observedBytes: DEEP.length }));
    assert.deepEqual({ outcome: r.outcome, reason: r.reason }, { outcome: 'local_error', reason: 'json_depth' });
  });

  test('nodes: a named event over max_json_nodes is json_nodes for the call', async () => {
    const r = await call('nodes');
    assert.equal(r.text, expectedErrorFrame({ id: r.id, method: 'tools/call', toolName: 'nodes', reason: 'json_nodes', limit: 100_000, observed: 100_001, limitBytes: LIMIT, observedBytes: NODES.length }));
    assert.deepEqual({ outcome: r.outcome, reason: r.reason }, { outcome: 'local_error', reason: 'json_nodes' });
  });

  test('own: the call\'s own response in a named event is no answer: upstream_not_mcp, neither response forwarded', async () => {
    const r = await call('own');
    assert.equal(r.text, expectedErrorFrame({ id: r.id, method: 'tools/call', toolName: 'own', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    assert.deepEqual({ outcome: r.outcome, reason: r.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('control: named notifications and text pass byte for byte with their names, then the answer', async () => {
    const r = await call('control');
    assert.equal(r.text, STREAMS.control!(r.id));
    assert.deepEqual({ outcome: r.outcome, reason: r.reason }, { outcome: 'ok', reason: null });
  });

  test('the standalone GET stream: named responses are dropped get_stream_response, the named notification passes', async () => {
    await assertGetStreamDrops(gw(), 'seller', HEADERS, named('progress', NOTE), 2);
  });

  test('a POSTed notification\'s stream: the named response is dropped notification_stream_response, the named notification passes', async () => {
    const before = await dropped('notification_stream_response');
    const seen = gw().lines.length;
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', method: 'notifications/initialized' }, HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), named('progress', NOTE));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'notification' && gw().lines.indexOf(l) >= seen);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'ok', reason: 'notification_stream_response', bytes_to_host: r.bytes });
    assert.deepEqual(droppedInLines(gw().lines.slice(seen), 'seller'), { notification_stream_response: 1 });
    assert.equal(gw().lines.slice(seen).filter((l) => l.msg === DROPPED && l.agent === 'seller').length, 1);
    assert.deepEqual(line.events_dropped, { notification_stream_response: 1 });
    assert.equal(await dropped('notification_stream_response'), before + 1);
  });

  for (const [label, batch] of [
    ['request 2\'s own response', BATCH],
    ['a response for id 999', `[${PING},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"batch_foreign","arguments":{}}}]`],
  ] as const) {
    test(`a batch's stream: ${label} in a named event is upstream_not_mcp for request 2, request 1's answer forwarded`, async () => {
      const seen = gw().lines.length;
      const r = await rawPost(gw().agentUrl('seller'), batch, { 'mcp-protocol-version': '2025-03-26' });
      assert.equal(r.status, 200);
      const second = batch === BATCH ? 2 : { id: 2, method: 'tools/call', toolName: 'batch_foreign' };
      assert.equal(r.text(), plain(R1) + expectedBatchErrorFrames([second], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }
});
