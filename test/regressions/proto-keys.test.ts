/**
 * Regression (not an error): `__proto__` and `constructor` keys in a seller's payload.
 *
 * Input (host on 2025-06-18): a tools/call whose only content is the text
 * {"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"products":[]}.
 * Expectation: nothing is polluted in the gateway's process (this test runs in it):
 * `({}).polluted` is undefined and Object.prototype has no `polluted`. The text is not lifted
 * (a hostile trial 24, L1: the MCP TypeScript SDK client reads `structuredContent` without a
 * `__proto__` member, so the lift and its summary would leave such a host no copy of it;
 * test/regressions/lifted-proto-member-lost-to-sdk-host.test.ts): the host's body is the
 * seller's message exactly, and the exchange line says `text_not_lifted: "proto_key"`. Before
 * trial 24 it was lifted, `__proto__` and `constructor` kept as plain own data keys.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ proto: seller.url('proto-keys') }));

describe('__proto__ and constructor keys', { timeout: TEST_TIMEOUT_MS }, () => {
  test('kept as plain data, nothing polluted, not lifted', async () => {
    const payload = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"products":[]}';
    const r = await rawPost(stack.gateway.agentUrl('proto'), toolCall(3, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), resultMessage(3, { content: [{ type: 'text', text: payload }] }));

    const text = (r.json() as { result: { content: { text: string }[] } }).result.content[0]!.text;
    const parsed = JSON.parse(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ['__proto__', 'constructor', 'products']);
    assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
    assert.equal((Object.prototype.constructor as unknown as { polluted?: unknown }).polluted, undefined);
    const line = await stack.gateway.exchangeLine('proto', 3);
    assert.deepEqual([line.outcome, line.text_not_lifted], ['ok', 'proto_key']);
  });
});
