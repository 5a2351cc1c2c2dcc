/**
 * Regression: an SSE answer to one request carried a JSON-RPC response for another id.
 *
 * Reported failure (a new user's trial): a seller answered call B on call A's stream; a real
 * SDK client with two concurrent calls routed that response to B's pending request (clients
 * match responses by id alone), so B's tool, configured with a 2,000-byte limit, got a 200 KB
 * answer, not deduped, while B's own exchange was logged host_aborted. The JSON path refuses
 * such a body (`upstream_not_mcp`: json-stage.ts answersExchange); the SSE path forwarded it.
 *
 * Input: a raw node:http seller answers each tools/call over SSE (`event: message`, one
 * `data:` line per event) with, before the response to the request's id:
 * (a) a response for the id + 1; (b) one for the id as a string (`"7"` for 7); (c) one for
 * the id + 1 whose `id` key is written with an escape (the parse path, not the scan's);
 * (d) an error for id null; (e) control: a notification and a server-to-client request (id
 * 99, it has a `method`), which pass as before.
 * Expectation: (a)-(d) the host gets exactly one event, the gateway's `upstream_not_mcp`
 * error (upstream_status 200) for the request's id, and nothing of the foreign response;
 * the exchange line says outcome local_error, reason upstream_not_mcp. (e) the host gets the
 * seller's bytes unchanged, outcome ok. (f) a long-lived stream (`subscriptions/listen`, a
 * request but no response ends it) drops that event with the `SSE stream: event
 * dropped` warning and goes on: the host gets the notifications around it. SDK: call A's stream carries B's response; A gets the
 * upstream_not_mcp error result, B its own small answer from its own exchange (outcome ok).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

type Id = string | number;
const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: Id | null, text = 'own answer'): string => toolResponse(id as Id, { content: [{ type: 'text', text }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const PING = '{"jsonrpc":"2.0","id":99,"method":"ping"}';
const HIJACK = small(0, 'h'.repeat(200_000));

/** The seller's SSE events before the response to `id`, by tool name. */
const BEFORE: Record<string, (id: number) => string[]> = {
  next_id: (id) => [small(id + 1, 'for another call')],
  string_id: (id) => [small(String(id), 'for another call')],
  escaped_id_key: (id) => [`{"jsonrpc":"2.0","\\u0069d":${id + 1},"result":{"content":[]}}`],
  null_id_error: () => ['{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}'],
  control: () => [NOTE, PING],
  listen: (id) => [NOTE, small(id + 1, 'for another call'), NOTE],
};

let hijackDone: () => void = () => {};
const hijackClosed = new Promise<void>((resolve) => (hijackDone = resolve));

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    // The SDK client's close: DELETE (ends the session); its standalone GET stream: none here.
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method: string; params?: { name?: string; protocolVersion?: string } };
    if (msg.method === 'initialize') {
      const result = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'foreign-id', version: '1' } };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(toolResponse(msg.id!, result));
      return;
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    const id = msg.id;
    const name = msg.method === 'subscriptions/listen' ? 'listen' : (msg.params?.name ?? '');
    if (name === 'small_tool') {
      // Answers once call A's stream is over (its upstream request closed): no timing.
      void hijackClosed.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(small(id)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (name === 'hijack_a') {
      res.on('close', () => hijackDone());
      // B's id: the SDK client numbers its requests in order, B right after A.
      res.end(frame(HIJACK.replace('"id":0', `"id":${id + 1}`)) + frame(small(id)));
      return;
    }
    const events = BEFORE[name]!(id).map(frame).join('');
    // A long-lived stream has no response to end it: the seller ends it.
    res.end(name === 'listen' ? events : events + frame(small(id)));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(agentsYaml({ seller: seller.url, limited: { url: seller.url, tools: '{ small_tool: { max_response_bytes: 2000 } }' } })),
);
const gw = (): ObservedGateway => stack.gateway;

describe('SSE response for another id', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [tool, id] of [['next_id', 7], ['string_id', 7], ['escaped_id_key', 8], ['null_id_error', 9]] as const) {
    test(`${tool}: upstream_not_mcp for the request's id, the foreign response not forwarded`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      const expected = expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 });
      assert.equal(r.text(), expected);
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('control: notifications and server requests on the stream pass as before', async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall('c-1', 'control'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.text(), frame(NOTE) + frame(PING) + frame(small('c-1')));
    const line = await gw().exchangeLine('seller', 'c-1');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test('a long-lived stream (subscriptions/listen) drops the event with a warning and goes on', async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: 'l-1', method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' });
    assert.equal(r.text(), frame(NOTE) + frame(NOTE));
    const warning = await gw().waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.reason === 'upstream_not_mcp');
    assert.equal(warning.agent, 'seller');
    const line = await gw().exchangeLine('seller', 'l-1');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: 'upstream_not_mcp' });
  });

  test('SDK client: a response on call A\'s stream never answers call B', async () => {
    const client = new Client({ name: 'foreign-id-test', version: '1' });
    stack.closeAfter(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(gw().agentUrl('limited'))));
    const a = client.callTool({ name: 'hijack_a', arguments: {} });
    const b = client.callTool({ name: 'small_tool', arguments: {} });
    const [ra, rb] = await Promise.all([a, b]);
    const err = (ra.structuredContent as { adcp_error: { details: Record<string, unknown> } }).adcp_error;
    assert.deepEqual({ isError: ra.isError, details: err.details }, { isError: true, details: { reason: 'upstream_not_mcp', upstream_status: 200 } });
    assert.deepEqual(rb, { content: [{ type: 'text', text: 'own answer' }] });
    const lineB = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'limited' && l.tool === 'small_tool');
    assert.deepEqual({ outcome: lineB.outcome, reason: lineB.reason }, { outcome: 'ok', reason: null });
  });
});
