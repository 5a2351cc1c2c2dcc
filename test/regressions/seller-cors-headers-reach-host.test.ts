/**
 * Regression (a new user's trial, 2026-12-03): the seller's CORS response headers
 * (`access-control-allow-origin: *`, `access-control-allow-credentials`, ...) reached the
 * host. A browser reads them as the gateway's own policy: a seller could decide which web
 * pages may read the gateway's answers (with DNS rebinding, finding 1 of that trial, any
 * page). They are now stripped (src/response/headers.ts); the gateway serves no browser
 * unless `allowed_origins` lists its origin (test/regressions/dns-rebinding-origin-uses-credentials.test.ts).
 *
 * Input: a raw seller answering a tools/call with JSON and every CORS response header, plus
 * `mcp-session-id` and `x-seller-trace` (control: other headers still pass).
 * Expected: the host's response has no `access-control-*` header; the two others pass.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-credentials': 'true',
  'access-control-allow-methods': 'POST, GET',
  'access-control-allow-headers': 'content-type',
  'access-control-expose-headers': 'mcp-session-id',
  'access-control-max-age': '86400',
};

describe("the seller's CORS headers never reach the host", () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) =>
        void res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1', 'x-seller-trace': 't-1', ...CORS })
          .end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'),
      ),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('access-control-* stripped; other headers pass', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(
      fetch(stack.gateway.agentUrl('acme'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(toolCall(7, 'get_products')),
      }),
    );
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.deepEqual([...res.headers.keys()].filter((name) => name.startsWith('access-control-')), []);
    assert.deepEqual([res.headers.get('mcp-session-id'), res.headers.get('x-seller-trace')], ['s-1', 't-1']);
  });
});
