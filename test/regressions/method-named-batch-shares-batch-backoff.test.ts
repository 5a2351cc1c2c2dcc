/**
 * Regression (hostile trial 46, item 1): a lone request whose method is `batch` had the call
 * kind of a JSON-RPC batch (admission/agent-guard.ts `callKind`: BATCH_CALL_KIND is `batch`),
 * so with `backoff_after_breaches: 1` and a batch whose answer breached, a
 * `{"jsonrpc":"2.0","id":3,"method":"batch"}` waited out the batch backoff and, sent as its
 * probe, its clean answer ended it. Likewise a request of method `""` had the kind of a message
 * without a method (`''`). Now a method equal to a reserved kind, or empty, is quoted as a
 * method holding a space is: `method "batch"`, `method ""`.
 *
 * Input: a raw seller answering a batch with a 5,000-byte result and any lone request with
 * `-32601`; agent `a` with `max_response_bytes: 1000`, `backoff_after_breaches: 1`, a 60 s
 * backoff, a 1 s `response_deadline_ms`. A batch, then a request of method `batch`.
 * Expected: the batch breaches (`raw_bytes`) and the batch kind backs off; the request of
 * method `batch` is sent at once and its answer passed as the seller wrote it; the batch kind
 * still backs off. The kinds' exact names.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BATCH_CALL_KIND, callKind } from '../../src/admission/agent-guard.js';
import { methodNotFound, oversizedResult, useBackoffStack } from '../helpers/backoff-stack.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

describe('method-named-batch-shares-batch-backoff', { timeout: TEST_TIMEOUT_MS }, () => {
  const { stack, post } = useBackoffStack(
    (body) => (body.startsWith('[') ? `[${oversizedResult(1)}]` : methodNotFound((JSON.parse(body) as { id: number }).id)),
    ['max_response_bytes: 1000', 'backoff_after_breaches: 1'],
    // Batches are of MCP 2025-03-26 (2025-06-18 dropped them).
    '2025-03-26',
  );

  test('a request of method "batch" is a kind of its own: sent at once while batches back off, its clean answer ending nothing', async () => {
    const batch = await post([toolCall(1, 'get_products')]);
    assert.equal(batch.status, 200);
    assert.match(batch.text(), /"reason":"raw_bytes"/);
    const guard = stack.gateway.app.gateway.guard;
    assert.equal(guard.isBackingOff('a', BATCH_CALL_KIND), true);
    const odd = await post({ jsonrpc: '2.0', id: 3, method: 'batch' });
    assert.deepEqual([odd.status, odd.text()], [200, methodNotFound(3)]);
    assert.deepEqual(
      stack.seller.requests.map((r) => r.body.toString('utf8').startsWith('[')),
      [true, false],
    );
    assert.equal(guard.isBackingOff('a', BATCH_CALL_KIND), true, 'batches still back off');
  });

  test('the kinds’ names: a method equal to a reserved kind or empty is quoted', () => {
    assert.deepEqual(
      [callKind(undefined, undefined, true), callKind('batch', undefined), callKind(undefined, undefined), callKind('', undefined), callKind('batches', undefined)],
      ['batch', 'method "batch"', '', 'method ""', 'batches'],
    );
  });
});
