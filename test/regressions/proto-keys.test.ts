/**
 * Regression (not an error): `__proto__` and `constructor` keys in a seller's payload.
 *
 * Input (host on 2025-06-18): a tools/call whose only content is the text
 * {"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"products":[]}.
 * Expectation: the text is lifted into structuredContent with `__proto__` and `constructor`
 * kept as plain own data keys, in order; the text becomes the summary
 * "Result in structuredContent (93 bytes): __proto__, constructor, products[0]."; nothing is
 * polluted in the gateway's process (this test runs in it): `({}).polluted` is undefined and
 * Object.prototype has no `polluted`. The host's body is exactly that message (263 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ proto: seller.url('proto-keys') }));

describe('__proto__ and constructor keys', { timeout: TEST_TIMEOUT_MS }, () => {
  test('kept as plain data, nothing polluted', async () => {
    const payload = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"products":[]}';
    const r = await rawPost(stack.gateway.agentUrl('proto'), toolCall(3, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    // Built as text: an object literal with a `__proto__` key would set a prototype instead.
    const summary = `Result in structuredContent (${Buffer.byteLength(payload)} bytes): __proto__, constructor, products[0].`;
    assert.equal(summary, 'Result in structuredContent (93 bytes): __proto__, constructor, products[0].');
    const expected = `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":${JSON.stringify(summary)}}],"structuredContent":${payload}}}`;
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 263);

    const sc = (r.json() as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;
    assert.deepEqual(Object.keys(sc), ['__proto__', 'constructor', 'products']);
    assert.equal(Object.getPrototypeOf(sc), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.equal((Object.prototype.constructor as unknown as { polluted?: unknown }).polluted, undefined);
    const line = await stack.gateway.exchangeLine('proto', 3);
    assert.equal(line.outcome, 'rewritten');
  });
});
