/**
 * Regression: a node bomb, millions of tiny JSON values in a message under the byte limit.
 *
 * Input (limits: the defaults, 4194304 bytes, 100000 nodes): a tools/call answered with a
 * JSON message of exactly 4194304 bytes whose result holds `"x":[0,0,0,…]`, ~2.1 million
 * zeros.
 * Expectation: the structure scan stops at node 100001, before JSON.parse builds anything:
 * RESPONSE_TOO_LARGE `json_nodes`, limit_nodes 100000, observed_nodes 100001, limit_bytes
 * 4194304, observed_bytes 200041 (the body is scanned as it arrives: its bytes through the
 * 100001st value), for the request id; the host's body is exactly the minted message (1077
 * bytes), and the gateway stopped reading the seller there.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
const stack = useHostileStack((seller) => ({ nodes: seller.url('node-bomb', { bytes: LIMIT }) }));

describe('node bomb', { timeout: TEST_TIMEOUT_MS }, () => {
  test('json_nodes at node 100001', async () => {
    const r = await rawPost(stack.gateway.agentUrl('nodes'), toolCall(5, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    // Values before the zeros: the message, "2.0", the id, result, content, x (6); zero k is
    // value 6 + k at byte 52 + 2(k - 1): value 100001 is zero 99995, the scan's last byte.
    const observedBytes = 52 + 2 * (99995 - 1) + 1;
    assert.equal(observedBytes, 200041);
    const expected = expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'json_nodes', limit: 100000, observed: 100001, limitBytes: LIMIT, observedBytes });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 1077);
    const m = r.json() as { id: number; result: { structuredContent: { adcp_error: { code: string; details: unknown } } } };
    assert.equal(m.id, 5);
    assert.deepEqual(m.result.structuredContent.adcp_error.details, {
      reason: 'json_nodes',
      limit_nodes: 100000,
      observed_nodes: 100001,
      limit_bytes: 4194304,
      observed_bytes: 200041,
    });
    const line = await stack.gateway.exchangeLine('nodes', 5);
    assert.equal(line.reason, 'json_nodes');
    assert.ok((line.bytes_from_seller as number) < LIMIT / 2, 'stopped reading at the breach, not after 4 MiB');
  });
});
