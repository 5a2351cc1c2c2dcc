/**
 * Regression: SSE event data with `NaN`, `Infinity` or `-Infinity` literals, which
 * `JSON.parse` refuses, was forwarded unread "as the seller sent it", while Python's `json`
 * and pydantic (the MCP Python SDK client parses each event with
 * `JSONRPCMessage.model_validate_json`) read it as a JSON-RPC message.
 *
 * Reported failure (a new user's trial 8, F2): on call 1's stream a response for id 2 with
 * `"score":NaN` was forwarded (a Python host routes it to call 2, past its limits and
 * rewrite); a response for the call's own id with `NaN` went out un-normalized, followed by
 * the gateway's `upstream_reset` for the same id (two answers); on the standalone GET stream
 * the `NaN` copy of a response passed where the valid copy was dropped (`get_stream_response`).
 *
 * Input: a raw seller answers `tools/call` of each tool below with one SSE stream; a
 * 2025-03-26 batch of calls 40 and 41; `subscriptions/listen` (a long-lived stream); a GET
 * (the standalone stream) carrying a mix of events.
 * Expectation: on a call's stream, a response with such a literal for another id, for the
 * call's own id, with no id, `-Infinity` in an error, an array holding one, and a message with
 * the call's id and no `method`: exactly the gateway's `upstream_not_mcp` error event for the
 * call's id (nothing of the seller's event, no second answer), outcome local_error; on the
 * batch's stream the error for each request; on the long-lived stream the event is dropped
 * (warning, reason upstream_not_mcp) and the notifications around it pass; on the GET stream
 * every response is dropped `get_stream_response`, the notifications pass as the seller's
 * bytes.
 * Controls: a notification with `NaN` (and `"result"` in its params), and `NaN` only inside
 * strings of the response, go out as before.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { droppedInLines } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const good = (id: number): string => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"ok"}]}}`;
const NOTE_NAN = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":NaN,"result":"partial"}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';

/** The events a call's stream carries before its real answer, by tool name; `$ID` is the call's id. */
const REFUSED: Record<string, string> = {
  other_id: '{"jsonrpc":"2.0","id":999,"result":{"content":[{"type":"text","text":"x"}],"score":NaN}}',
  own_id: '{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"x"}],"score":NaN}}',
  own_id_infinity: '{"jsonrpc":"2.0","id":$ID,"result":{"content":[],"structuredContent":{"v":Infinity}}}',
  no_id: '{"jsonrpc":"2.0","result":{"v":NaN}}',
  error_minus_infinity: '{"jsonrpc":"2.0","id":999,"error":{"code":-32000,"message":"m","data":-Infinity}}',
  array: '[{"jsonrpc":"2.0","id":999,"result":{"v":NaN}}]',
  own_id_no_method: '{"jsonrpc":"2.0","id":$ID,"v":NaN}',
  spaced: '{ "jsonrpc" : "2.0" , "id" : 999 , "result" : { "v" : [ 1 , NaN ] } }',
};
/** Controls: forwarded as the seller sent them, then the call's real answer. */
const PASSED: Record<string, string> = {
  notification: NOTE_NAN,
  in_strings: '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"NaN and -Infinity \\"NaN\\"","result":"x"}}',
};

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.method === 'GET') {
      // The standalone stream: responses (NaN copies and a valid one) among notifications.
      return void res.end(
        [
          NOTE,
          '{"jsonrpc":"2.0","id":7,"result":{"content":[],"score":NaN}}',
          NOTE_NAN,
          '[{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"m","data":Infinity}}]',
          '{"jsonrpc":"2.0","id":9,"result":{}}',
          NOTE,
        ]
          .map(frame)
          .join(''),
      );
    }
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number; method: string; params?: { name?: string } } | Array<{ id: number }>;
    if (Array.isArray(msg)) return void res.end(frame('{"jsonrpc":"2.0","id":40,"result":{"content":[],"v":NaN}}') + frame(good(40)) + frame(good(41)));
    if (msg.method === 'subscriptions/listen') return void res.end(frame(NOTE) + frame(REFUSED.other_id!) + frame(NOTE));
    const name = msg.params!.name!;
    const before = (REFUSED[name] ?? PASSED[name])!.replace('$ID', String(msg.id));
    res.end(frame(before) + frame(good(msg.id)));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const DROPPED = 'SSE stream: event dropped';

describe('SSE data with NaN/Infinity literals is judged as a lenient host reads it', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 100;
  for (const tool of Object.keys(REFUSED)) {
    test(`${tool}: upstream_not_mcp for the call's id, nothing of the event forwarded`, async () => {
      const rpcId = ++id;
      const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, tool), tool === 'array' ? {} : HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedErrorFrame({ id: rpcId, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().exchangeLine('seller', rpcId);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
    });
  }

  for (const [tool, data] of Object.entries(PASSED)) {
    test(`control, ${tool}: forwarded as the seller sent it, then the answer`, async () => {
      const rpcId = ++id;
      const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, tool), HEADERS);
      assert.equal(r.text(), frame(data) + frame(good(rpcId)));
      const line = await gw().exchangeLine('seller', rpcId);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    });
  }

  test('a batch\'s stream: a NaN response for one of its ids is upstream_not_mcp for each request', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(40, 'a'), toolCall(41, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorFrames([batchToolCall(40, 'a'), batchToolCall(41, 'b')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });

  test('a long-lived stream (subscriptions/listen) drops a NaN response with a warning and goes on', async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: 14, method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' });
    assert.equal(r.text(), frame(NOTE) + frame(NOTE));
    const warning = await gw().waitForLine((l) => l.msg === DROPPED && l.reason === 'upstream_not_mcp');
    assert.equal(warning.agent, 'seller');
    const line = await gw().exchangeLine('seller', 14);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: 'upstream_not_mcp' });
  });

  test('the standalone GET stream drops every response, NaN copies included; notifications pass', async () => {
    const seen = gw().lines.length;
    const res = await fetch(gw().agentUrl('seller'), { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' } });
    assert.equal(res.status, 200);
    assert.equal(await withTimeout(res.text(), 5_000, 'GET stream'), frame(NOTE) + frame(NOTE_NAN) + frame(NOTE));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'none');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: 'get_stream_response' });
    // Drop warnings are throttled per stream (a new user's trial 9, F5): counted from the lines of this stream.
    assert.deepEqual(droppedInLines(gw().lines.slice(seen), 'seller'), { get_stream_response: 3 });
    assert.deepEqual(line.events_dropped, { get_stream_response: 3 });
  });
});
