/**
 * Regression: a message with the call's own id carrying both `method` and `result` (or
 * `error`) was passed on as the answer, on SSE and as a JSON body.
 *
 * Reported failure (a new user's trial, 2026-12-03): the MCP SDK client could not read it (a
 * ZodError "Unrecognized key result" for the JSON body, a timeout on SSE) while the gateway
 * logged `ok`; docs/errors.md allowed it ("with the request's own id and one of the two it is
 * the response"). A message with a `method` beside `result` or `error` is no response
 * (JSON-RPC 2.0 §5 has no `method`) nor a request or notification (§4 has no `result` or
 * `error`), whatever its id: now `upstream_not_mcp` on a request's stream, as a JSON body
 * answering a request, and in a batch's answer.
 *
 * Input: a raw seller answers each tools/call with the message `{"jsonrpc":"2.0","id":N,
 * "method":"tools/call", + result or error}`: (a) SSE, `result`; (b) SSE, `error`; (c) JSON,
 * `result`; (d) JSON, `error`; (e) JSON, `result`, the `method` key written with an escape
 * (`"\u006dethod"`: the parse path); (f) SSE on a 2025-03-26 host, the message as the one
 * element of an array; (g) a 2025-03-26 batch of calls 20 and 21 answered on SSE with
 * `[method + result for 20, the response to 21]`.
 * Controls: the response to N without `method`, on SSE and as JSON, outcome ok.
 * Expectation: (a), (b), (f) exactly the gateway's `upstream_not_mcp` error event
 * (upstream_status 200) for id N; (c)-(e) the `upstream_not_mcp` error JSON for id N (HTTP
 * 200: a tools/call's local error is its tool result); (g) the `upstream_not_mcp` error event
 * for each of the batch's requests, 20 and 21 (the refused event answered neither: a batch's
 * local error answers each request still awaited, test/regressions/batch-local-error-answers-no-request.test.ts);
 * outcome local_error each time.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedErrorFrame, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'own answer' }] });
const RESULT = '"result":{"content":[{"type":"text","text":"own answer"}]}';
const ERROR = '"error":{"code":-32603,"message":"failed"}';
const withMethod = (id: number, member: string, methodKey = 'method'): string => `{"jsonrpc":"2.0","id":${id},"${methodKey}":"tools/call",${member}}`;

/** The seller's answer to call `id`, by tool name: [content type, body]. */
const ANSWERS: Record<string, (id: number) => [string, string]> = {
  sse_result: (id) => ['text/event-stream', frame(withMethod(id, RESULT))],
  sse_error: (id) => ['text/event-stream', frame(withMethod(id, ERROR))],
  json_result: (id) => ['application/json', withMethod(id, RESULT)],
  json_error: (id) => ['application/json', withMethod(id, ERROR)],
  json_escaped_method: (id) => ['application/json', withMethod(id, RESULT, '\\u006dethod')],
  sse_array: (id) => ['text/event-stream', frame(`[${withMethod(id, RESULT)}]`)],
  sse_control: (id) => ['text/event-stream', frame(small(id))],
  json_control: (id) => ['application/json', small(id)],
};

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const parsed = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } } | Array<{ id: number }>;
    if (Array.isArray(parsed)) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(frame(`[${withMethod(parsed[0]!.id, RESULT)},${small(parsed[1]!.id)}]`));
    }
    const [type, body] = ANSWERS[parsed.params.name]!(parsed.id);
    res.writeHead(200, { 'content-type': type }).end(body);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

describe('a message with method and result (or error) for the own id is no answer', { timeout: TEST_TIMEOUT_MS }, () => {
  const cases: Array<[string, number, Record<string, string>]> = [
    ['sse_result', 7, HEADERS],
    ['sse_error', 8, HEADERS],
    ['json_result', 9, HEADERS],
    ['json_error', 10, HEADERS],
    ['json_escaped_method', 11, HEADERS],
    ['sse_array', 12, {}],
  ];
  for (const [tool, id, headers] of cases) {
    test(`${tool}: upstream_not_mcp for the request's id`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), headers);
      const expected = { id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
      // A tools/call's local error is its tool result (isError), HTTP 200, on either path.
      assert.equal(r.status, 200);
      assert.equal(r.text(), tool.startsWith('json') ? expectedErrorJson(expected) : expectedErrorFrame(expected));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('a batch answered with method and result for one of its ids: upstream_not_mcp for each of its requests', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(20, 'a'), toolCall(21, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorFrames([batchToolCall(20, 'a'), batchToolCall(21, 'b')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  for (const [tool, id] of [['sse_control', 13], ['json_control', 14]] as const) {
    test(`control: ${tool}, the response without method, passes`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), tool === 'sse_control' ? frame(small(id)) : small(id));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    });
  }
});
