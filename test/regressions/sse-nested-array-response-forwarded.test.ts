/**
 * Regression: nested arrays `[[{…"id":999,"result"…}]]` passed on every SSE stream (a
 * request's, a batch's, the standalone GET stream).
 *
 * Reported failure (a new user's trial, 2026-12-03): an array's elements were judged only
 * when they were objects, so an array inside the array was passed over and the event went to
 * the host, logged ok; the same as a JSON body is refused `upstream_not_mcp`. An array
 * element that is not an object is no JSON-RPC message (JSON-RPC 2.0 §6), and a lenient
 * client that flattens it reads a response for another call. Now: on a request's or a
 * batch's stream `upstream_not_mcp` (sse-message.ts batchVerdict, batch-answers.ts); on the
 * standalone GET stream the event is dropped `get_stream_response` (sse-message.ts
 * standaloneVerdict), the stream goes on.
 *
 * Input: a raw seller answers (a) a tools/call (2025-03-26, which has batches) with
 * `[[response for 999]]`, then its response; (b) the same with `[[the response]]`; (c) a
 * batch of calls 20 and 21 with `[[response for 20]]`, then the array of both responses;
 * (d) the standalone GET (agent `listen`) with `[[response for 999]]`, then a notification.
 * Expectation: (a), (b) exactly the `upstream_not_mcp` error event for the request's id;
 * (c) exactly the error event for each of the batch's requests, 20 and 21 (a batch's local
 * error answers each request still awaited: test/regressions/batch-local-error-answers-no-request.test.ts);
 * outcome local_error each time. (d) only the
 * notification, the `SSE stream: event dropped` warning with reason
 * `get_stream_response`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'answer' }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/listen') return void res.end(frame(`[[${small(999)}]]`) + frame(NOTE));
    const parsed = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } } | Array<{ id: number }>;
    if (Array.isArray(parsed)) return void res.end(frame(`[[${small(parsed[0]!.id)}]]`) + frame(`[${parsed.map((m) => small(m.id)).join(',')}]`));
    const id = parsed.id;
    res.end(frame(parsed.params.name === 'nested_own' ? `[[${small(id)}]]` : `[[${small(999)}]]`) + frame(small(id)));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(agentsYaml({ seller: seller.url, listen: seller.url.replace(/\/mcp$/, '/listen') })),
);
const gw = (): ObservedGateway => stack.gateway;

describe('SSE nested arrays holding a response', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [tool, id] of [['nested_other', 7], ['nested_own', 8]] as const) {
    test(`${tool} on a request's stream: upstream_not_mcp for the request's id`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool));
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test("on a batch's stream: upstream_not_mcp for each of its requests", async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(20, 'a'), toolCall(21, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorFrames([batchToolCall(20, 'a'), batchToolCall(21, 'b')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('on the standalone GET stream: dropped get_stream_response, the notification passes', async () => {
    const res = await fetch(gw().agentUrl('listen'), { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), frame(NOTE));
    const warning = await gw().waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.agent === 'listen');
    assert.equal(warning.reason, 'get_stream_response');
  });
});
