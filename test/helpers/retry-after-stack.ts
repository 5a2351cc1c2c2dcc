/**
 * A seller answering every call 503 with the `Retry-After` value the test names, behind a
 * gateway (agent `acme`), for the Retry-After regression tests: `call(value)` sends a
 * `tools/call` of `get_products` (id 5) whose answer carries `value` as the seller's field (the
 * value travels to the seller URI-encoded in `x-retry-after`; node:http writes it as latin1, so
 * U+00A0 goes out as the byte 0xA0) and returns the host's body; `expected(s)` is the
 * gateway's `upstream_status` error for that call, with `retry_after: s` or none.
 * Register it inside a `describe` (it adds that suite's before/after hooks).
 */
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { agentsYaml, startGateway } from './gateway.js';
import { useSellerAndGateway } from './stack.js';
import { rawPost, toolCall } from './raw.js';
import { withTimeout } from './timeout.js';

export function useRetryAfterStack(): { call(retryAfter: string): Promise<string>; expected(retryAfterS: number | undefined): string } {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': decodeURIComponent(String(req.headers['x-retry-after'])) }).end('busy');
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );
  return {
    async call(retryAfter) {
      const r = await withTimeout(
        rawPost(stack.gateway.agentUrl('acme'), toolCall(5, 'get_products'), { 'mcp-protocol-version': '2025-06-18', 'x-retry-after': encodeURIComponent(retryAfter) }),
      );
      assert.equal(r.status, 200);
      return r.text();
    },
    expected: (retryAfterS) =>
      expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'upstream_status', upstreamStatus: 503, ...(retryAfterS !== undefined ? { retryAfterS } : {}) }),
  };
}
