/**
 * Regression (a hostile new-user trial 14, M1): "When a batch breaks a limit, the gateway's own
 * error answer has no bound." A host on MCP 2025-03-26 sent one JSON-RPC batch of 12,000
 * `tools/call` to an agent with `max_response_bytes: 100000`; the seller's answer was over the
 * limit, so the gateway minted an error for each request (about 1.1 KB each for a `tools/call`,
 * 460 bytes for a `ping`): a 13.5 MB answer for a 100,000-byte limit, minted in 1-2.6 s of the
 * event loop every agent shares. Only the request's bounds (`max_request_bytes`,
 * `max_json_nodes`) limited the batch.
 *
 * Now a batch holds at most the agent's `max_batch_messages` messages (default 100; requests,
 * notifications and host responses alike), judged when the request is read.
 * Input: batches of 101 pings, of 101 notifications, and of 3 messages to an agent with
 * `max_batch_messages: 2`. Expected: HTTP 400, a JSON-RPC error `batch_too_large` for id null
 * with `limit_messages` and `observed_messages`, byte for byte; the seller never contacted.
 * Controls: a batch of exactly 100 pings is forwarded and answered as the seller wrote it; a
 * batch of 100 `tools/call` whose answer breaks a 1000-byte limit gets its 100 minted errors,
 * so that answer is at most 100 times the largest of them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { postForwardedAsWritten } from '../helpers/refused-unsent.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const ping = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
const call = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"create_media_buy","arguments":{}}}`;
const note = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';
const batchOf = (n: number, element: (i: number) => string): string => `[${Array.from({ length: n }, (_, i) => element(i + 1)).join(',')}]`;

/** The seller's answer to a batch: an empty result for each request it holds, in order. */
function answerTo(batch: string): string {
  const elements = JSON.parse(batch) as { id?: number }[];
  return JSON.stringify(elements.filter((e) => e.id !== undefined).map((e) => ({ jsonrpc: '2.0', id: e.id, result: {} })));
}

/** The refusal, byte for byte. */
function refusal(observed: number, limit: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: `Invalid Request: the JSON-RPC batch holds ${observed} messages, over this agent's max_batch_messages (${limit}): send at most ${limit} per batch.`,
      data: { reason: 'batch_too_large', limit_messages: limit, observed_messages: observed },
    },
  });
}

describe('batch-minted-errors-unbounded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answerTo(req.body.toString('utf8')));
      }),
    (seller) =>
      startObservedGateway(
        agentsYaml({
          s: seller.url,
          small: { url: seller.url, max_response_bytes: '1000' },
          two: { url: seller.url, max_batch_messages: '2' },
        }),
      ),
  );

  for (const [label, agent, body, observed, limit] of [
    ['101 pings, the default max_batch_messages (100)', 's', batchOf(101, ping), 101, 100],
    ['101 notifications: every message counts', 's', batchOf(101, () => note), 101, 100],
    ['101 tools/call to an agent with a 1000-byte limit', 'small', batchOf(101, call), 101, 100],
    ['3 messages to an agent with max_batch_messages 2', 'two', `[${ping(1)},${note},${call(2)}]`, 3, 2],
  ] as const) {
    test(`${label}: 400 batch_too_large for id null, the seller never contacted`, async () => {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl(agent), body);
      assert.equal(r.status, 400);
      assert.equal(r.headers.get('content-type'), 'application/json');
      assert.equal(r.text(), refusal(observed, limit));
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
    });
  }

  test('control: a batch of exactly 100 pings is forwarded and answered as the seller wrote it', async () => {
    const batch = batchOf(100, ping);
    // No MCP-Protocol-Version: 2025-03-26, which has batches.
    const r = await postForwardedAsWritten(stack, 's', batch, null);
    assert.equal(r.status, 200);
    assert.equal(r.text, answerTo(batch));
  });

  test('control: 100 tools/call over a 1000-byte limit get 100 minted errors, at most 100 x the largest', async () => {
    const r = await rawPost(stack.gateway.agentUrl('small'), batchOf(100, call));
    assert.equal(r.status, 200);
    const answers = r.json() as { id: number; result: { isError: boolean; structuredContent: { adcp_error: { code: string } } } }[];
    assert.equal(answers.length, 100);
    assert.deepEqual(
      answers.map((a) => a.id),
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    for (const a of answers) assert.equal(a.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    const largest = Math.max(...answers.map((a) => Buffer.byteLength(JSON.stringify(a))));
    assert.ok(r.bytes <= 100 * (largest + 1) + 2, `${r.bytes} bytes for 100 errors of at most ${largest}`);
  });
});
