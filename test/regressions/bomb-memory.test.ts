/**
 * Regression: a decompression bomb's bytes never reach memory.
 *
 * Input: tools/call answered with `Content-Encoding: gzip` bombs of 64 MiB and of 1 GiB of
 * zeros (~1 MB compressed), as `application/json` and, the 1 GiB one, as
 * `text/event-stream`; limit: the 4 MiB default.
 * Expectation: whatever the seller sends, the gateway's decoded bytes stop near the limit:
 * the exchange log line's `bytes_decoded` is <= 4194304 + 65536 every time (measured: within
 * one 16 KiB zlib chunk), with reason `decoded_bytes` (JSON) or `sse_cumulative` (SSE: the
 * stream's cumulative bound counts the decoded bytes), for the request id. The memory
 * benchmark of the performance issue measures RSS; this test pins the count that bounds it.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GIB, MIB, gzipBomb, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
const SLACK = 64 * 1024;

before(async () => {
  await Promise.all([gzipBomb(GIB), gzipBomb(64 * MIB)]);
});
const stack = useHostileStack((seller) => ({
  'bomb-64m': seller.url('gzip-bomb', { zeros: 64 * MIB }),
  'bomb-1g': seller.url('gzip-bomb', { zeros: GIB }),
  'bomb-1g-sse': seller.url('gzip-bomb', { zeros: GIB, sse: 1 }),
}));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('bomb memory', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [agent, id] of [
    ['bomb-64m', 1],
    ['bomb-1g', 2],
  ] as const) {
    test(`${agent}: bytes_decoded stops within 64 KiB of the limit (decoded_bytes)`, async () => {
      const r = await call(agent, id);
      const m = r.json() as { id: number; result: { structuredContent: { adcp_error: { details: { reason: string } } } } };
      assert.equal(m.id, id);
      assert.equal(m.result.structuredContent.adcp_error.details.reason, 'decoded_bytes');
      const line = await stack.gateway.exchangeLine(agent, id);
      assert.equal(line.reason, 'decoded_bytes');
      const decoded = line.bytes_decoded as number;
      assert.ok(decoded > LIMIT && decoded <= LIMIT + SLACK, `bytes_decoded ${decoded}`);
    });
  }

  test('bomb-1g-sse: the SSE path stops as near (sse_cumulative)', async () => {
    const r = await call('bomb-1g-sse', 3);
    const [m] = sseMessages(r.text()) as Array<{ id: number; result: { structuredContent: { adcp_error: { details: { reason: string } } } } }>;
    assert.equal(m?.id, 3);
    assert.equal(m?.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    const line = await stack.gateway.exchangeLine('bomb-1g-sse', 3);
    assert.equal(line.reason, 'sse_cumulative');
    const decoded = line.bytes_decoded as number;
    assert.ok(decoded > LIMIT && decoded <= LIMIT + SLACK, `bytes_decoded ${decoded}`);
  });
});
