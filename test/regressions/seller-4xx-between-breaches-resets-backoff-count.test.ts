/**
 * Pins a rule the docs did not state (a hostile new user's trial 48, item 4: "the backoff
 * breach count may be reset by a seller's HTTP 400"; docs/configuration.md,
 * `defaults.backoff_after_breaches`): a seller's own 4xx answer, passed through to the host,
 * is an answer within the bounds, so it ends a run of consecutive `RESPONSE_TOO_LARGE`
 * answers as any clean answer does (admission/agent-guard.ts; routing/handler.ts
 * `guardOutcome`: outcome `ok` is clean). 5xx, timeouts and resets neither count nor reset.
 *
 * Input: a raw seller answering `tools/call` id 1, 3, 4 with a 5,000-byte result (over agent
 * `a`'s 1000-byte `max_response_bytes`) and id 2 with HTTP 400; agent `a` with
 * `backoff_after_breaches: 2`. Calls 1 to 4 in turn.
 * Expected: 1 breaches (not backing off), 2 passes the seller's 400 through and resets the
 * count, 3 breaches (1 of 2: not backing off), 4 breaches (2 of 2: backing off).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { oversizedResult } from '../helpers/backoff-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const BAD_REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params' } });

describe('seller-4xx-between-breaches-resets-backoff-count', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
        if (id === 2) res.writeHead(400, { 'content-type': 'application/json' }).end(BAD_REQUEST);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(oversizedResult(id));
      }),
    (seller) =>
      startGateway(
        ['log_level: silent', 'agents:', '  a:', `    url: ${seller.url}`, '    max_response_bytes: 1000', '    backoff_after_breaches: 2', '    backoff_base_ms: 60000', '    backoff_max_ms: 60000', ''].join('\n'),
      ),
  );
  const call = (id: number) => withTimeout(rawPost(stack.gateway.agentUrl('a'), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' }));

  test("a seller's 400 between two breaches resets the count: the backoff starts only after two breaches in a row", async () => {
    const guard = stack.gateway.app.gateway.guard;
    const backingOff = () => guard.isBackingOff('a', 'tools/call get_products');
    const first = await call(1);
    assert.match(first.text(), /"reason":"raw_bytes"/);
    assert.equal(backingOff(), false, 'one breach of two');
    const refused = await call(2);
    assert.deepEqual([refused.status, refused.text()], [400, BAD_REQUEST], "the seller's 400 passed through as written");
    assert.equal(backingOff(), false);
    const third = await call(3);
    assert.match(third.text(), /"reason":"raw_bytes"/);
    assert.equal(backingOff(), false, 'the 400 reset the count: one breach of two again');
    const fourth = await call(4);
    assert.match(fourth.text(), /"reason":"raw_bytes"/);
    assert.equal(backingOff(), true, 'two breaches in a row');
    assert.equal(stack.seller.requests.length, 4);
  });
});
