/**
 * Regression (a new user's trial): "Invalid batch elements are forwarded". A host body
 * `[1,{"jsonrpc":"2.0","id":1,"method":"tools/call",...}]` went to the seller unchanged (it
 * crashed a naive seller, which the gateway then reported as `upstream_reset`); so did the
 * nested `[[{...}]]`. A single message that is not JSON-RPC (`{"a":1}`, `true`, an invalid id)
 * was already refused before any seller was contacted.
 *
 * Input: batches (no MCP-Protocol-Version: MCP 2025-03-26, which has batches) whose element
 * 0, 1 or 2 is not a JSON-RPC message by the rules for a single message; one of them over
 * 1 KiB (the peek's scan reading, request/peek.ts).
 * Expected: HTTP 400, the JSON-RPC error body (-32600, id null) naming the element and what is
 * wrong with it, byte for byte; one `refused` line (reason `invalid_request`); the seller never
 * contacted. Control: a batch of a request, a notification and a host's response is forwarded
 * as the host wrote it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"CTV"}}}';
/** A valid request over 1 KiB on its own (the body is read by the scan, its element too). */
const BIG_CALL = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sync_creatives","arguments":{"notes":"${'n'.repeat(1500)}"}}}`;

function refusalBody(message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'invalid_request' } } });
}

const CASES: ReadonlyArray<readonly [label: string, body: string, message: string]> = [
  ['a number before a valid call', `[1,${CALL}]`, 'Invalid Request: batch element 0 is not a JSON-RPC message (a number, not an object).'],
  ['a nested batch', `[[${CALL}]]`, 'Invalid Request: batch element 0 is not a JSON-RPC message (an array, not an object).'],
  ['an object that is no JSON-RPC message', `[${CALL},{"a":1}]`, 'Invalid Request: batch element 1 is not a JSON-RPC message ("jsonrpc" must be "2.0").'],
  ['an invalid id', `[${CALL}, {"jsonrpc":"2.0","id":{},"method":"ping"}]`, 'Invalid Request: batch element 1 is not a JSON-RPC message ("id" must be a string, a number or null).'],
  ['neither a method nor a result', `[${CALL},{"jsonrpc":"2.0","id":3}]`, 'Invalid Request: batch element 1 is not a JSON-RPC message ("method" must be a string).'],
  ['true, then null', `[${CALL},${CALL},true,null]`, 'Invalid Request: batch element 2 is not a JSON-RPC message (a boolean, not an object).'],
  ['over 1 KiB: a string after a large call', `[${BIG_CALL},${CALL}, "${']},['.repeat(10)}"]`, 'Invalid Request: batch element 2 is not a JSON-RPC message (a string, not an object).'],
];

describe('batch-invalid-elements-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        // A naive seller: every element must be an object with a method or a result.
        const batch = JSON.parse(req.body.toString('utf8')) as Array<{ id?: unknown; method?: string }>;
        const answers = batch.filter((m) => m.method !== undefined && m.id !== undefined).map((m) => ({ jsonrpc: '2.0', id: m.id, result: {} }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const [label, body, message] of CASES) {
    test(`${label}: 400 invalid_request naming the element, the seller not contacted`, async () => {
      const seen = stack.seller.requests.length;
      const lines = stack.gateway.lines.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 400);
      assert.equal(r.text(), refusalBody(message));
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
      const refused = await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= lines);
      assert.deepEqual({ reason: refused.reason, status: refused.status, http_method: refused.http_method }, { reason: 'invalid_request', status: 400, http_method: 'POST' });
    });
  }

  test('control: a batch of a request, a notification and a host response is forwarded as written', async () => {
    const body = `[${CALL}, {"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"respprobe","result":{}},${BIG_CALL}]`;
    const seen = stack.seller.requests.length;
    const r = await rawPost(stack.gateway.agentUrl('s'), body);
    assert.equal(r.status, 200);
    assert.equal(r.text(), JSON.stringify([{ jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 2, result: {} }]));
    assert.equal(stack.seller.requests.length, seen + 1);
    assert.equal(stack.seller.requests.at(-1)!.body.toString('utf8'), body);
  });
});
