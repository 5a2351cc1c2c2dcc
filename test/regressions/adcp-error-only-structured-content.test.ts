/**
 * Regression (not an error of the gateway's): structuredContent holding only `adcp_error`,
 * without `isError`.
 *
 * Input (host on 2025-06-18): a tools/call answered with
 * structuredContent {"adcp_error":{"code":"RATE_LIMITED",…,"retry_after":30,…}} and the same
 * JSON as the only text item, no `isError`.
 * Expectation: passed through as it is, byte for byte: neither lifted nor deduped (the
 * host reads the error text), not turned into a gateway error, `isError` not added,
 * `recovery`, `retry_after` and `details` kept (extraction spec rule 4: such a result is an
 * error missing its flag, for the host to handle).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ err: seller.url('adcp-error-only') }));

describe('structuredContent with only adcp_error, no isError', { timeout: TEST_TIMEOUT_MS }, () => {
  test('passes through byte for byte', async () => {
    const r = await rawPost(stack.gateway.agentUrl('err'), toolCall(4, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    const err = { adcp_error: { code: 'RATE_LIMITED', message: 'Slow down.', recovery: 'transient', retry_after: 30, details: { scope: 'account' } } };
    const want = resultMessage(4, { content: [{ type: 'text', text: JSON.stringify(err) }], structuredContent: err });
    assert.equal(r.status, 200);
    assert.equal(r.text(), want);
    assert.equal(r.bytes, Buffer.byteLength(want));
    const m = r.json() as { result: Record<string, unknown> };
    assert.equal(Object.hasOwn(m.result, 'isError'), false);
    const line = await stack.gateway.exchangeLine('err', 4);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.reason, null);
    assert.equal(line.bytes_saved, 0);
  });
});
