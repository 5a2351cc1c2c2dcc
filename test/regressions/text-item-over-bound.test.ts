/**
 * Regression (not an error): a `content[].text` item whose JSON is over a structure bound.
 *
 * Input (host on 2025-06-18, default bounds: depth 64, nodes 100000): a tools/call whose only
 * content is a text holding a JSON object (a) nested 100 deep, `{"a":{"a":…1…}}`; (b) with
 * 100001 zeros in an array, `{"a":[0,0,…]}`. The messages themselves are shallow and small
 * (the JSON is inside a string).
 * Expectation: the text is simply not lifted (ARCHITECTURE §5): the result passes through
 * byte for byte, no structuredContent is synthesized, no error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({
  deep: seller.url('text-over-bound', { depth: 100 }),
  wide: seller.url('text-over-bound', { shape: 'nodes', count: 100_001 }),
}));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('a text item over a structure bound', { timeout: TEST_TIMEOUT_MS }, () => {
  test('100 deep: not lifted, passed through', async () => {
    const want = resultMessage(1, { content: [{ type: 'text', text: '{"a":'.repeat(100) + '1' + '}'.repeat(100) }] });
    const r = await call('deep', 1);
    assert.equal(r.status, 200);
    assert.equal(r.text(), want);
    assert.equal(r.bytes, 874);
    const line = await stack.gateway.exchangeLine('deep', 1);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.reason, null);
  });

  test('100001 values: not lifted, passed through', async () => {
    const want = resultMessage(2, { content: [{ type: 'text', text: `{"a":[${Array.from({ length: 100_001 }, () => '0').join(',')}]}` }] });
    const r = await call('wide', 2);
    assert.equal(r.text(), want);
    assert.equal(r.bytes, Buffer.byteLength(want));
    const line = await stack.gateway.exchangeLine('wide', 2);
    assert.equal(line.outcome, 'ok');
  });
});
