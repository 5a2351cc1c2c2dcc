/**
 * Regression: a seller that receives the request, then answers something the gateway cannot
 * read as an HTTP response.
 *
 * Input: a tools/call `create_media_buy` (a mutation) answered with (a) a 200 whose head
 * carries 1 MiB of `x-junk-<n>` headers (over undici's 16 KiB header limit); (b) bytes that
 * are not HTTP at all (`SMTP 220 …`). In both cases the seller HAS received the request.
 * Expectation: SERVICE_UNAVAILABLE, recovery `transient`, for the request id, whose message
 * warns that the seller may have completed the operation, so re-read its state before
 * retrying; never `upstream_unreachable`, which tells the host the request was not delivered
 * (a host would then safely retry a mutation that may have run). The reason: (a)
 * `upstream_headers_too_large` with `limit_bytes` 16384 (it was `upstream_reset`, which said
 * nothing of the headers: a hostile new user's trial 15, L3,
 * test/regressions/seller-headers-over-limit-reported-as-reset.test.ts); (b) `upstream_reset`.
 * The host's body is exactly the minted message. Control: a closed port still gives
 * `upstream_unreachable` (nothing was delivered).
 * Bug fixed: every upstream error whose code was not ECONNRESET, UND_ERR_SOCKET or EPIPE was
 * reported as `upstream_unreachable`, including HTTP parse errors after the request was
 * written (src/routing/handler.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, startHostileSeller, startObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { agentsYaml } from '../helpers/gateway.js';
import { closedPort } from '../helpers/ports.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useSellerAndGateway(startHostileSeller, async (seller) => {
  const closed = await closedPort();
  return startObservedGateway(
    agentsYaml({
      headers: seller.url('huge-headers', { header_bytes: 1024 * 1024 }),
      garbage: seller.url('garbage-response'),
      closed: `http://127.0.0.1:${closed}/mcp`,
    }),
  );
});

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'create_media_buy', { budget: 1 }), { 'mcp-protocol-version': '2025-06-18' });

describe('unreadable response head', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [agent, mode, id, reason, bytes] of [
    ['headers', 'huge-headers', 1, 'upstream_headers_too_large', 1058],
    ['garbage', 'garbage-response', 2, 'upstream_reset', 1052],
  ] as const) {
    test(`${agent}: delivered, so ${reason} with the re-read warning`, async () => {
      const r = await call(agent, id);
      assert.equal(stack.seller.requestsFor(mode).length, 1, 'the seller received the request');
      assert.equal(r.status, 200);
      const limits = reason === 'upstream_headers_too_large' ? { limitBytes: 16_384 } : {};
      const expected = expectedErrorJson({ id, method: 'tools/call', toolName: 'create_media_buy', reason, ...limits });
      assert.equal(r.text(), expected);
      assert.equal(r.bytes, bytes);
      const err = (r.json() as { result: { structuredContent: { adcp_error: { message: string; recovery: string } } } }).result.structuredContent.adcp_error;
      assert.match(err.message, /the seller may have completed the operation, so re-read its state before retrying\.$/);
      const line = await stack.gateway.exchangeLine(agent, id);
      assert.equal(line.reason, reason);
    });
  }

  test('control: a closed port is upstream_unreachable (nothing delivered)', async () => {
    const r = await call('closed', 3);
    const expected = expectedErrorJson({ id: 3, method: 'tools/call', toolName: 'create_media_buy', reason: 'upstream_unreachable' });
    assert.equal(r.text(), expected);
  });
});
