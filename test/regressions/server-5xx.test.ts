/**
 * Regression: a seller answers with a 5xx (and an HTML page naming its internals).
 *
 * Input: tools/call answered 503, then 500, `text/html`, the body naming
 * `db01.internal.example`.
 * Expectation: SERVICE_UNAVAILABLE `upstream_status`, details { upstream_status: 503 } (then
 * 500), recovery `transient`, for the request id; the seller's body never reaches the host:
 * the host's body is exactly the minted message (676 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ s503: seller.url('server-error', { status: 503 }), s500: seller.url('server-error', { status: 500 }) }));

describe('5xx', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const status of [503, 500]) {
    test(`${status}: upstream_status, no seller byte`, async () => {
      const r = await rawPost(stack.gateway.agentUrl(`s${status}`), toolCall(status, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(r.status, 200);
      const expected = expectedErrorJson({ id: status, method: 'tools/call', toolName: 'get_products', reason: 'upstream_status', upstreamStatus: status });
      assert.equal(r.text(), expected);
      assert.equal(r.bytes, 676);
      assert.ok(!r.text().includes('db01'));
      const m = r.json() as { id: number; result: { structuredContent: { adcp_error: { code: string; recovery: string } } } };
      assert.equal(m.id, status);
      assert.equal(m.result.structuredContent.adcp_error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(m.result.structuredContent.adcp_error.recovery, 'transient');
      const line = await stack.gateway.exchangeLine(`s${status}`, status);
      assert.equal(line.reason, 'upstream_status');
      assert.equal(line.upstream_status, status);
    });
  }
});
