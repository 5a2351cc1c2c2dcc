/**
 * Regression: on a request's SSE stream, a JSON-RPC message with both a `method` and a
 * `result` (or an `error`) for another request's id was forwarded.
 *
 * Reported failure (a reviewer): the stage refuses a response to another id (`upstream_not_mcp`
 * for the request's id: test/regressions/sse-response-for-another-id.test.ts), but any message
 * with a `method` member was taken for a server-to-client request or notification and
 * forwarded. Such a message is neither a valid request or notification (JSON-RPC 2.0 §4: no
 * `result` or `error`) nor a valid response (§5: no `method`), and a client that looks for
 * `result`/`error` first takes it for the response to another of its pending calls, past that
 * call's own limits and rewrite. Now (src/response/sse-message.ts isForeignResponse) a
 * `method` no longer exempts a message that has a `result` or an `error`: it is judged as a
 * response, so the same rule applies as to one without `method`.
 *
 * Input: a raw seller answers each call over SSE (`event: message`, one `data:` line per event)
 * with, before the response to the request's id N:
 * (a) `method` + `result` for id N + 1; (b) `method` + `error` for N + 1; (c) `method` +
 * `result` for the id as a string (`"N"`); (d) `method`, `result` and `error` for N itself;
 * (e) (a) with the `method` key written with an escape (`"\u006dethod"`: the parse path);
 * (f) (a) on a tools/list stream (a discovery request: the stage parses every candidate);
 * (h) `method` + `result` for N itself (no response either, whatever its id: a new user's
 * trial, 2026-12-03, test/regressions/method-and-result-for-own-id-passed-as-answer.test.ts).
 * Controls: (g) a server-to-client request (id 99, `method`, `params`) and a notification
 * pass as before; (i) a long-lived stream
 * (`subscriptions/listen`) drops (a) with the `SSE stream: event dropped` warning.
 * Expectation: (a)-(f) exactly one event, the gateway's `upstream_not_mcp` error (upstream_status
 * 200) for the request's id, nothing of the seller's message; outcome local_error, reason
 * upstream_not_mcp; (h) the same. (g) the seller's bytes, outcome ok. (i) the notifications around the
 * dropped event, outcome ok, reason upstream_not_mcp.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'own answer' }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const PING = '{"jsonrpc":"2.0","id":99,"method":"ping","params":{}}';
const CONTENT = '{"content":[{"type":"text","text":"for another call"}]}';

/** The seller's SSE events before the response to `id`, by tool name (or method). */
const BEFORE: Record<string, (id: number) => string[]> = {
  method_result_next_id: (id) => [`{"jsonrpc":"2.0","id":${id + 1},"method":"tools/call","result":${CONTENT}}`],
  method_error_next_id: (id) => [`{"jsonrpc":"2.0","id":${id + 1},"method":"ping","error":{"code":-32600,"message":"Invalid Request"}}`],
  method_result_string_id: (id) => [`{"jsonrpc":"2.0","id":"${id}","method":"tools/call","result":${CONTENT}}`],
  method_result_error_own_id: (id) => [`{"jsonrpc":"2.0","id":${id},"method":"tools/call","result":${CONTENT},"error":{"code":-32603,"message":"x"}}`],
  escaped_method_key: (id) => [`{"jsonrpc":"2.0","id":${id + 1},"\\u006dethod":"tools/call","result":${CONTENT}}`],
  'tools/list': (id) => [`{"jsonrpc":"2.0","id":${id + 1},"method":"tools/list","result":{"tools":[]}}`],
  control: () => [NOTE, PING],
  listen: (id) => [NOTE, `{"jsonrpc":"2.0","id":${id + 1},"method":"tools/call","result":${CONTENT}}`, NOTE],
};
/** (h): the response to the request itself carries a `method` member. */
const OWN_WITH_METHOD = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","result":{"content":[{"type":"text","text":"own answer"}]}}`;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number; method: string; params?: { name?: string } };
    const id = msg.id;
    const name = msg.method === 'tools/call' ? (msg.params?.name ?? '') : msg.method === 'subscriptions/listen' ? 'listen' : msg.method;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (name === 'own_with_method') return void res.end(frame(OWN_WITH_METHOD(id)));
    const events = BEFORE[name]!(id).map(frame).join('');
    // A long-lived stream has no response to end it: the seller ends it.
    const answer = name === 'tools/list' ? toolResponse(id, { tools: [] }) : small(id);
    res.end(name === 'listen' ? events : events + frame(answer));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

describe('SSE message with method and result for another id', { timeout: TEST_TIMEOUT_MS }, () => {
  const refused: Array<[string, number]> = [
    ['method_result_next_id', 7],
    ['method_error_next_id', 8],
    ['method_result_string_id', 9],
    ['method_result_error_own_id', 10],
    ['escaped_method_key', 11],
  ];
  for (const [tool, id] of refused) {
    test(`${tool}: upstream_not_mcp for the request's id, the seller's message not forwarded`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      assert.equal(r.text(), expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('tools/list (every candidate parsed): upstream_not_mcp as a JSON-RPC error for the request id', async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: 12, method: 'tools/list', params: {} }, HEADERS);
    assert.equal(r.text(), expectedErrorFrame({ id: 12, method: 'tools/list', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().exchangeLine('seller', 12);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('control: a server request and a notification on the stream pass as before', async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall('c-1', 'control'), HEADERS);
    assert.equal(r.text(), frame(NOTE) + frame(PING) + frame(small('c-1')));
    const line = await gw().exchangeLine('seller', 'c-1');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test("method and result for the request's own id is no response either (a new user's trial, 2026-12-03)", async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall(13, 'own_with_method'), HEADERS);
    assert.equal(r.text(), expectedErrorFrame({ id: 13, method: 'tools/call', toolName: 'own_with_method', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().exchangeLine('seller', 13);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('a long-lived stream (subscriptions/listen) drops the event with a warning and goes on', async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: 14, method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' });
    assert.equal(r.text(), frame(NOTE) + frame(NOTE));
    const warning = await gw().waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.reason === 'upstream_not_mcp');
    assert.equal(warning.agent, 'seller');
    const line = await gw().exchangeLine('seller', 14);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: 'upstream_not_mcp' });
  });
});
