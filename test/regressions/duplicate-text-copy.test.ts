/**
 * Regression (not an error): a text item holding the whole payload again, plus a different
 * second text.
 *
 * Input (host on 2025-06-18): a tools/call result with structuredContent
 * {"products":[2 items],"next_cursor":"c2"}, content[0].text = that JSON again, content[1].text
 * = "Found 2 products; ask for the next page with cursor c2.".
 * Expectation: the copy is summarized ("Result in structuredContent (121 bytes):
 * products[2], next_cursor."), the other text is kept byte for byte, structuredContent is
 * untouched, nothing is removed or reordered. The host's body is exactly that message.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ dup: seller.url('duplicate-text') }));

describe('duplicated payload text plus another text', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the copy is summarized, the other text kept byte for byte', async () => {
    const payload = { products: [{ product_id: 'p1', name: 'Homepage takeover' }, { product_id: 'p2', name: 'Run of site' }], next_cursor: 'c2' };
    const other = 'Found 2 products; ask for the next page with cursor c2.';
    const sellerBody = resultMessage(5, { content: [{ type: 'text', text: JSON.stringify(payload) }, { type: 'text', text: other }], structuredContent: payload });
    const summary = 'Result in structuredContent (121 bytes): products[2], next_cursor.';
    assert.equal(Buffer.byteLength(JSON.stringify(payload)), 121);
    const want = resultMessage(5, { content: [{ type: 'text', text: summary }, { type: 'text', text: other }], structuredContent: payload });

    const r = await rawPost(stack.gateway.agentUrl('dup'), toolCall(5, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), want);
    assert.equal(r.bytes, Buffer.byteLength(want));
    const line = await stack.gateway.exchangeLine('dup', 5);
    assert.equal(line.outcome, 'rewritten');
    assert.equal(line.bytes_saved, Buffer.byteLength(sellerBody) - Buffer.byteLength(want));
  });
});
