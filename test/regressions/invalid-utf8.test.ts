/**
 * Regression (not an error): JSON with invalid UTF-8 inside a string.
 *
 * Input (host on 2025-06-18, so results are normalized): a tools/call answered with JSON whose
 * string holds the bytes C3 28 FF (a truncated 2-byte sequence, then a byte never valid in
 * UTF-8): (a) a text-only result whose text is the JSON object {"name":"caf<C3 28 FF>","ok":true};
 * (b) a result with structuredContent whose strings hold the same bytes and a text item
 * that is no copy of it.
 * Expectation: never a crash, never an error. (a) The body is decoded with U+FFFD
 * replacement (WHATWG UTF-8 decode, as src/response/json-stage.ts documents): the text is
 * lifted into structuredContent {"name":"caf\uFFFD(\uFFFD","ok":true} and replaced by the
 * summary; the host's body is that re-serialized message, valid UTF-8. (b) Nothing to
 * rewrite: the seller's bytes are forwarded untouched, invalid bytes included.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ lift: seller.url('invalid-utf8', { shape: 'lift' }), plain: seller.url('invalid-utf8', { shape: 'plain' }) }));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('invalid UTF-8 inside a JSON string', { timeout: TEST_TIMEOUT_MS }, () => {
  test('lifted with U+FFFD replacement', async () => {
    const r = await call('lift', 1);
    assert.equal(r.status, 200);
    const text = '{"name":"caf\uFFFD(\uFFFD","ok":true}';
    const expected = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: `Result in structuredContent (${Buffer.byteLength(text)} bytes): name, ok.` }],
        structuredContent: { name: 'caf\uFFFD(\uFFFD', ok: true },
      },
    });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 174);
    assert.equal(Buffer.from(r.body.toString('utf8'), 'utf8').equals(r.body), true, 'the host gets valid UTF-8');
    const line = await stack.gateway.exchangeLine('lift', 1);
    assert.equal(line.outcome, 'rewritten');
    assert.equal(line.reason, null);
  });

  test('nothing to rewrite: the seller bytes, untouched', async () => {
    const r = await call('plain', 2);
    assert.equal(r.status, 200);
    const bad = Buffer.from([0xc3, 0x28, 0xff]);
    const want = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"caf'),
      bad,
      Buffer.from('"}],"structuredContent":{"name":"caf'),
      bad,
      Buffer.from('"}}}'),
    ]);
    assert.equal(r.body.equals(want), true);
    assert.equal(r.bytes, want.length);
    const line = await stack.gateway.exchangeLine('plain', 2);
    assert.equal(line.outcome, 'ok');
  });
});
