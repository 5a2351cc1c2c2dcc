/**
 * Regression: a node bomb, millions of tiny JSON values in a message under the byte limit.
 *
 * Input (limits: the defaults, 4194304 bytes, 100000 nodes): a tools/call answered with a
 * JSON message of exactly 4194304 bytes whose result holds `"x":[0,0,0,…]`, ~2.1 million
 * zeros.
 * Expectation: the structure scan stops at node 100001, before JSON.parse builds anything:
 * RESPONSE_TOO_LARGE `json_nodes`, limit_nodes 100000, observed_nodes 100001, limit_bytes and
 * observed_bytes 4194304, for the request id; the host's body is exactly the minted message
 * (1079 bytes).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, expectedErrorJson, startHostileSeller, startObservedGateway, type HostileSeller, type ObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
let seller: HostileSeller;
let gw: ObservedGateway;

before(async () => {
  seller = await startHostileSeller();
  gw = await startObservedGateway(['agents:', '  nodes:', `    url: ${seller.url('node-bomb', { bytes: LIMIT })}`, ''].join('\n'));
});
after(async () => {
  await gw?.close();
  await seller?.close();
});

describe('node bomb', { timeout: TEST_TIMEOUT_MS }, () => {
  test('json_nodes at node 100001', async () => {
    const r = await rawPost(gw.agentUrl('nodes'), toolCall(5, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const expected = expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'get_products', reason: 'json_nodes', limit: 100000, observed: 100001, limitBytes: LIMIT, observedBytes: LIMIT });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 1079);
    const m = r.json() as { id: number; result: { structuredContent: { adcp_error: { code: string; details: unknown } } } };
    assert.equal(m.id, 5);
    assert.deepEqual(m.result.structuredContent.adcp_error.details, {
      reason: 'json_nodes',
      limit_nodes: 100000,
      observed_nodes: 100001,
      limit_bytes: 4194304,
      observed_bytes: 4194304,
    });
    const line = await gw.exchangeLine('nodes', 5);
    assert.equal(line.reason, 'json_nodes');
  });
});
