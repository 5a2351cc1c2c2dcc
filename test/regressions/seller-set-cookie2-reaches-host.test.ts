/**
 * Regression (hostile trial 31, M1): a seller's `Set-Cookie2` (RFC 2965, obsoleted by RFC 6265)
 * reached the host as the seller wrote it, while its `Set-Cookie` lines were rebuilt and scoped
 * to the agent's route (src/response/set-cookie.ts). Browsers, aiohttp, Python's default
 * http.cookiejar and Go ignore it, but Java's `java.net.CookieManager` (JDK 17 HttpClient) reads
 * it: `Set-Cookie2: evil=SC2SECRET; Version=1; Path=/` was stored at `/` and sent to the seller
 * behind every other agent. Now `Set-Cookie2` never reaches the host (src/response/headers.ts
 * STRIPPED_RESPONSE_HEADERS).
 *
 * Input: a raw seller answering a tools/call (JSON, and an SSE stream) with `Set-Cookie2` and a
 * `Set-Cookie`, through agent `acme`. Expected: no `set-cookie2` in the host's head; the
 * `Set-Cookie` scoped as ever.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startHeaderLinesSeller } from '../support/raw-seller.js';

describe("a seller's Set-Cookie2", () => {
  const stack = useSellerAndGateway(
    () => startHeaderLinesSeller(['Set-Cookie2: evil=SC2SECRET; Version=1; Path=/', 'Set-Cookie: ok=1; Path=/']),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  for (const tool of ['json', 'sse']) {
    test(`${tool}: not passed to the host; Set-Cookie scoped`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-06-18' }));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('set-cookie2'), null);
      assert.deepEqual(res.headers.getSetCookie(), ['ok=1; Path=/agents/acme/mcp']);
    });
  }
});
