/**
 * Regression (a new user's trial, Low: "JSON-RPC validation is loose"): a JSON-RPC batch
 * holding an `initialize` request reached the seller, although MCP 2025-03-26 (the one
 * revision with batches), Lifecycle: "The initialization request MUST NOT be part of a
 * JSON-RPC batch, as other requests and notifications are not possible until initialization
 * has completed."
 *
 * Input: batches (no MCP-Protocol-Version: 2025-03-26) with `initialize` as element 0 (alone,
 * and before a call), as element 1 after a notification, and in a batch over 1 KiB whose
 * `initialize` element is itself over 1 KiB (the peek's scan reading).
 * Expected: HTTP 400 and the JSON-RPC error body byte for byte: -32600, id null, `Invalid
 * Request: batch element <n> is an "initialize" request, which must not be part of a JSON-RPC
 * batch.`; one `refused` line (`invalid_request`); the seller never contacted. Control: the
 * same `initialize` sent alone is forwarded as written.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const INITIALIZE = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"trial","version":"1.0.0"}}}';
const BIG_INITIALIZE = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"experimental":{"pad":"${'p'.repeat(1500)}"}},"clientInfo":{"name":"trial","version":"1.0.0"}}}`;
const CALL = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const ANSWER = '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}';

function refusalBody(index: number): string {
  return `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch element ${index} is an \\"initialize\\" request, which must not be part of a JSON-RPC batch.","data":{"reason":"invalid_request"}}}`;
}

const CASES: ReadonlyArray<readonly [label: string, body: string, index: number]> = [
  ['initialize alone in a batch', `[${INITIALIZE}]`, 0],
  ['initialize before a call', `[${INITIALIZE},${CALL}]`, 0],
  ['initialize after a notification', `[${INITIALIZED}, ${INITIALIZE}]`, 1],
  ['over 1 KiB: a large initialize after a call', `[${CALL},${BIG_INITIALIZE}]`, 1],
];

describe('batch-initialize-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(req.body.toString('utf8').startsWith('[') ? `[${ANSWER}]` : ANSWER)),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  for (const [label, body, index] of CASES) {
    test(`${label}: 400 invalid_request naming element ${index}, the seller not contacted`, async () => {
      const seen = stack.seller.requests.length;
      const lines = stack.gateway.lines.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 400);
      assert.equal(r.text(), refusalBody(index));
      assert.equal(stack.seller.requests.length, seen, 'the seller was contacted');
      const refused = await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= lines);
      assert.deepEqual({ reason: refused.reason, status: refused.status }, { reason: 'invalid_request', status: 400 });
    });
  }

  test('control: initialize alone is forwarded as written', async () => {
    for (const body of [INITIALIZE, BIG_INITIALIZE]) {
      const seen = stack.seller.requests.length;
      const r = await rawPost(stack.gateway.agentUrl('s'), body);
      assert.equal(r.status, 200);
      assert.equal(r.text(), ANSWER);
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.equal(stack.seller.requests.at(-1)!.body.toString('utf8'), body);
    }
  });
});
