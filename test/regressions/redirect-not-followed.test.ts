/**
 * Regression: a seller answers with a redirect (a classic SSRF lever: point the gateway at
 * another host or an internal address).
 *
 * Input: tools/call answered `307` and `302` with `Location:` another path of the same
 * server (the hostile seller's `ok` mode, standing in for an internal address).
 * Expectation: never followed: the seller sees no request on the Location; the host gets
 * SERVICE_UNAVAILABLE `upstream_not_mcp` with details { upstream_status: 307 } (then 302),
 * for the request id, exactly the minted message (711 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ r307: seller.url('redirect', { status: 307 }), r302: seller.url('redirect', { status: 302 }) }));

describe('redirects', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const status of [307, 302]) {
    test(`${status}: not followed, upstream_not_mcp`, async () => {
      const r = await rawPost(stack.gateway.agentUrl(`r${status}`), toolCall(status, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('location'), null);
      const expected = expectedErrorJson({ id: status, method: 'tools/call', toolName: 'get_products', reason: 'upstream_not_mcp', upstreamStatus: status });
      assert.equal(r.text(), expected);
      assert.equal(r.bytes, 711);
      assert.equal(stack.seller.requestsFor('ok').length, 0, 'the Location was never requested');
      const line = await stack.gateway.exchangeLine(`r${status}`, status);
      assert.equal(line.reason, 'upstream_not_mcp');
      assert.equal(line.upstream_status, status);
    });
  }
});
