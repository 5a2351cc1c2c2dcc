/**
 * Regression (a hostile trial 54, F1, answer side, Medium): a seller's answer whose JSON-RPC
 * message object has very many members stalled every agent. The scan proves a message free of
 * repeated names only when it has at most one name outside the JSON-RPC members, so such an
 * answer took the parse path, and V8 parses an object of many distinct keys slowly:
 * `{"jsonrpc":"2.0","id":1,"result":{…},"k0":0,…,"k99989":0}` (1.09 MB, inside the default
 * `max_response_bytes` and 100,000-node bound) cost ~200 ms of the event loop per answer, as
 * JSON or as an SSE event; ~120-150 ms with the keys inside its `error`. Now a seller's message
 * object, or its `error`, of more than 1000 members (request/message-members.ts
 * MAX_MESSAGE_MEMBERS, the bound a host's message is held to) is no answer the gateway reads:
 * `upstream_not_mcp`, told from the scan without `JSON.parse` (response/wide-answer.ts).
 *
 * Input: a gateway (one agent `seller`, default limits) in front of a raw seller answering each
 * `tools/call` by its tool name, `N` the call's id: 99,990 keys `k0`…`k99989` in the message
 * object beside its `result` (`json_wide_message`, `sse_wide_message`: as the JSON body, as the
 * stream's one event), in its `error` (`json_wide_error`, `sse_wide_error`); `JSON.parse`
 * wrapped for the test, counting calls on a text of 512 KiB or more.
 * Expected: each exactly the gateway's `upstream_not_mcp` for id N (upstream_status 200; HTTP
 * 200, the JSON body or the stream's one event), outcome local_error with the bytes the host
 * got, and no `JSON.parse` of the answer. Controls: a message of exactly 1000 members and an
 * `error` of 1000 pass as the seller wrote them; an SSE notification of 99,993 members before
 * the response goes out as written, unparsed (nothing to rewrite in it). No timing asserted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countBigParses } from '../helpers/big-parses.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { assertToolCallPassed, assertToolCallUpstreamNotMcp } from '../helpers/upstream-not-mcp.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';

const keys = (n: number): string => Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',');
const KEYS = keys(99_990);
const RESULT = '"result":{"content":[{"type":"text","text":"own answer"}]}';
const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const WIDE_NOTIFICATION = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"},${KEYS}}`;

/** The seller's message answering call `id`, by tool name. */
const MESSAGES: Record<string, (id: number) => string> = {
  json_wide_message: (id) => `{"jsonrpc":"2.0","id":${id},${RESULT},${KEYS}}`,
  json_wide_error: (id) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"x",${KEYS}}}`,
  sse_wide_message: (id) => `{"jsonrpc":"2.0","id":${id},${RESULT},${KEYS}}`,
  sse_wide_error: (id) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"x",${KEYS}}}`,
  // 3 + 997 members; an error of 2 + 998.
  json_control_1000: (id) => `{"jsonrpc":"2.0","id":${id},${RESULT},${keys(997)}}`,
  json_control_error_1000: (id) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32000,"message":"x",${keys(998)}}}`,
  sse_control_notification: (id) => `{"jsonrpc":"2.0","id":${id},${RESULT}}`,
};

/** A text of this many characters or more is an answer: `JSON.parse` of one is counted. */
const BIG = 512 * 1024;

describe('wide-answer-object-stalls-event-loop', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const m = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
        const tool = m.params.name;
        const message = MESSAGES[tool]!(m.id);
        if (tool.startsWith('json')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(message);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end((tool === 'sse_control_notification' ? frame(WIDE_NOTIFICATION) : '') + frame(message));
      }),
    (seller) => startObservedGateway(agentsYaml({ seller: seller.url })),
  );
  const bigParses = countBigParses(BIG);

  let id = 1;
  for (const tool of ['json_wide_message', 'json_wide_error', 'sse_wide_message', 'sse_wide_error']) {
    test(`${tool}: upstream_not_mcp for the call's id, no JSON.parse of the answer`, async () => {
      bigParses.reset();
      await assertToolCallUpstreamNotMcp(stack.gateway, tool, id++, {});
      assert.equal(bigParses.count, 0, 'JSON.parse of the answer');
    });
  }

  test('controls: a message of 1000 members, an error of 1000, pass as written', async () => {
    for (const tool of ['json_control_1000', 'json_control_error_1000']) {
      const n = id++;
      await assertToolCallPassed(stack.gateway, tool, n, {}, MESSAGES[tool]!(n));
    }
  });

  test('control: an SSE notification of 99,993 members before the response goes out as written, unparsed', async () => {
    bigParses.reset();
    const n = id++;
    await assertToolCallPassed(stack.gateway, 'sse_control_notification', n, {}, frame(WIDE_NOTIFICATION) + frame(MESSAGES.sse_control_notification!(n)));
    assert.equal(bigParses.count, 0, 'JSON.parse of the notification');
  });
});
