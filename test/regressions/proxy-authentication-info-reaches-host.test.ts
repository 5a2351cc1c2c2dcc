/**
 * Regression (hostile trial 28, L3 a): a seller's `Proxy-Authentication-Info` reached the host,
 * and so did every other `Proxy-*` response header but `Proxy-Authenticate` and
 * `Proxy-Connection`, the two stripped by name. RFC 9110 §11.7.3: Proxy-Authentication-Info is
 * for the next client in the chain, here the gateway, as Proxy-Authenticate is (§11.7.1); the
 * host's own client may act on them for a proxy of its own. Now every `Proxy-*` name is
 * stripped, by prefix (src/response/headers.ts STRIPPED_RESPONSE_PREFIXES), as every
 * `Access-Control-*` is: `Proxy-Status` (RFC 9209: the seller side's intermediaries) included.
 *
 * Input: a raw seller answering a tools/call (JSON, and an SSE stream) with `Proxy-*` headers
 * in several cases, beside a header of its own, through agent `acme`.
 * Expected: no `proxy-*` name in the host's head; the seller's own header passes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startHeaderLinesSeller } from '../support/raw-seller.js';

const PROXY_HEADERS = [
  'Proxy-Authentication-Info: nextnonce="abc"',
  'Proxy-Authenticate: Basic realm="seller-proxy"',
  'Proxy-Connection: keep-alive',
  'Proxy-Status: seller-cdn; error=connection_timeout',
  'PROXY-Foo: y',
  'proxy-authorization: Basic Zm9vOmJhcg==',
];

describe("a seller's Proxy-* response headers", () => {
  const stack = useSellerAndGateway(
    () => startHeaderLinesSeller(['X-Seller-Trace: t-1', ...PROXY_HEADERS]),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  for (const tool of ['json', 'sse']) {
    test(`${tool}: none reaches the host`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-06-18' }));
      assert.equal(res.status, 200);
      assert.deepEqual([...res.headers.keys()].filter((name) => name.startsWith('proxy-')), []);
      assert.equal(res.headers.get('x-seller-trace'), 't-1');
    });
  }
});
