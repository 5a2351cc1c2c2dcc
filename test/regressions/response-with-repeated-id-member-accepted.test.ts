/**
 * Regression: a seller's answer whose JSON-RPC message repeats a member name was read as
 * `JSON.parse` reads it (the last one wins) and accepted. A seller answering request 7 with
 * `{"jsonrpc":"2.0","id":999,"id":7,"result":{...}}` passed the gateway's "is this the
 * response to the request's id" check (the last `id` is 7), yet a host whose parser keeps the
 * first member reads id 999 and may route it to another pending call; a repeated `result`
 * shows such a host another result than the one the gateway bounded and rewrote. RFC 8259
 * §4: "The names within an object SHOULD be unique", and with repeats "the behavior of
 * software that receives such an object is unpredictable" (some keep the last, some the
 * first, some refuse).
 *
 * The rule now (docs/errors.md `upstream_not_mcp`): a JSON-RPC message from the seller whose
 * object repeats a member name (any name; in `result`: `content`, `structuredContent`,
 * `isError`, `resultType`; in a `content` item: `text`, `type`) is no valid answer.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, answering each call (dispatched on
 * the tool name, or the method) with the message below, `N` the request's id:
 * (a) JSON, `"id":999,"id":N` (the scan's fast path); (b) JSON, two `result` members;
 * (c) JSON, the second `id` written `"\u0069d"` (the parse path: escaped key);
 * (d) JSON, an unknown member `x` twice (parse path: the count of members);
 * (e) JSON, two `content` members in `result`; (f) JSON, two `text` members in a content item;
 * (g) `resources/read` (no tool result: a JSON-RPC error), repeated `id`; (h) `tools/list` (the
 * discovery hook parses every answer), repeated `result`;
 * (i) SSE, repeated `id`; (j) SSE, repeated `result`; (k) SSE, two `structuredContent`;
 * (l) a 2025-03-26 batch of calls 20 and 21 answered on SSE, the response to 20 with
 * `"id":999,"id":20` (after the response to 21); (m) a batch of calls 30 and 31 answered with
 * a JSON array, the response to 31 with two `result` members.
 * Expectation: (a)-(f), (i)-(k) exactly the gateway's `upstream_not_mcp` error for id N
 * (upstream_status 200; HTTP 200: a tools/call's local error is its tool result), as the
 * JSON body or the stream's one event; (g), (h) the same error as a JSON-RPC error for id N
 * (HTTP 200, as every local error for a request's id: errors/local-reply.ts); (l) the event
 * for id 21 as the seller sent it, then the error event for id 20, the request still awaited;
 * (m) HTTP 200, a JSON array of the error for ids 30 and 31 (a batch's local error answers each
 * of its requests: test/regressions/batch-local-error-answers-no-request.test.ts). Outcome
 * local_error, reason upstream_not_mcp each time.
 * Controls: the same messages with each name once (one unknown member `x` too) pass byte for
 * byte, outcome ok, on JSON and SSE.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { assertToolCallPassed, assertToolCallUpstreamNotMcp } from '../helpers/upstream-not-mcp.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const RESULT = '"result":{"content":[{"type":"text","text":"own answer"}]}';
const FOREIGN_RESULT = '"result":{"content":[{"type":"text","text":"another answer"}]}';
const JSONRPC = '"jsonrpc":"2.0"';
const SC = '{"a":1}';

/** The seller's message answering request `id`, by tool name or method. */
const MESSAGES: Record<string, (id: number) => string> = {
  json_repeated_id: (id) => `{${JSONRPC},"id":999,"id":${id},${RESULT}}`,
  json_repeated_result: (id) => `{${JSONRPC},"id":${id},${FOREIGN_RESULT},${RESULT}}`,
  json_escaped_repeated_id: (id) => `{${JSONRPC},"id":999,"\\u0069d":${id},${RESULT}}`,
  json_repeated_other: (id) => `{${JSONRPC},"id":${id},"x":1,"x":2,${RESULT}}`,
  json_repeated_content: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"first"}],"content":[{"type":"text","text":"own answer"}]}}`,
  json_repeated_text: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"first","text":"own answer"}]}}`,
  'resources/read': (id) => `{${JSONRPC},"id":999,"id":${id},"result":{"contents":[]}}`,
  'tools/list': (id) => `{${JSONRPC},"id":${id},"result":{"tools":[{"name":"evil","inputSchema":{"type":"object"}}]},"result":{"tools":[]}}`,
  sse_repeated_id: (id) => `{${JSONRPC},"id":999,"id":${id},${RESULT}}`,
  sse_repeated_result: (id) => `{${JSONRPC},"id":${id},${FOREIGN_RESULT},${RESULT}}`,
  sse_repeated_structured_content: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"own answer"}],"structuredContent":{"a":2},"structuredContent":${SC}}}`,
  json_control: (id) => `{${JSONRPC},"id":${id},"x":1,${RESULT}}`,
  sse_control: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"own answer"}],"structuredContent":${SC}}}`,
};

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const parsed = JSON.parse(req.body.toString('utf8')) as { id: number; method: string; params?: { name?: string } } | Array<{ id: number }>;
    if (Array.isArray(parsed)) {
      const [a, b] = [parsed[0]!.id, parsed[1]!.id];
      if (parsed[0]!.id === 20) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(frame(`{${JSONRPC},"id":${b},${RESULT}}`) + frame(`{${JSONRPC},"id":999,"id":${a},${RESULT}}`));
      }
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(`[{${JSONRPC},"id":${a},${RESULT}},{${JSONRPC},"id":${b},${FOREIGN_RESULT},${RESULT}}]`);
    }
    const name = parsed.method === 'tools/call' ? parsed.params!.name! : parsed.method;
    const message = MESSAGES[name]!(parsed.id);
    if (name.startsWith('sse_')) return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(frame(message));
    res.writeHead(200, { 'content-type': 'application/json' }).end(message);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

describe('a seller message that repeats a member name is no answer', { timeout: TEST_TIMEOUT_MS }, () => {
  const toolCases: Array<[string, number]> = [
    ['json_repeated_id', 7],
    ['json_repeated_result', 8],
    ['json_escaped_repeated_id', 9],
    ['json_repeated_other', 10],
    ['json_repeated_content', 11],
    ['json_repeated_text', 12],
    ['sse_repeated_id', 13],
    ['sse_repeated_result', 14],
    ['sse_repeated_structured_content', 15],
  ];
  for (const [tool, id] of toolCases) {
    test(`${tool}: upstream_not_mcp for the request's id`, async () => {
      await assertToolCallUpstreamNotMcp(gw(), tool, id, HEADERS);
    });
  }

  for (const [method, id] of [['resources/read', 16], ['tools/list', 17]] as const) {
    test(`${method}, a JSON body repeating ${method === 'tools/list' ? 'result' : 'id'}: upstream_not_mcp as a JSON-RPC error for the request's id`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id, method, params: method === 'tools/list' ? {} : { uri: 'x:/y' } }, HEADERS);
      // A request with an id gets its local error with HTTP 200 (errors/local-reply.ts); 502 is for id null.
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedErrorJson({ id, method, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
    });
  }

  test('a batch answered on SSE with a response repeating its id: the events before it, then upstream_not_mcp for request 20, still awaited', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(20, 'a'), toolCall(21, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(`{${JSONRPC},"id":21,${RESULT}}`) + expectedBatchErrorFrames([batchToolCall(20, 'a')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch' && l.outcome !== 'ok');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('a batch answered with a JSON array whose second response repeats result: HTTP 200, upstream_not_mcp for each of its requests', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(30, 'a'), toolCall(31, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorJson([batchToolCall(30, 'a'), batchToolCall(31, 'b')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });

  for (const [tool, id] of [['json_control', 40], ['sse_control', 41]] as const) {
    test(`control: ${tool}, each name once, passes byte for byte`, async () => {
      const message = MESSAGES[tool]!(id);
      await assertToolCallPassed(gw(), tool, id, HEADERS, tool === 'sse_control' ? frame(message) : message);
    });
  }
});
