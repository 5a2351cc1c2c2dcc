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
 * rewrite: the seller's bytes, each ill-formed sequence replaced by U+FFFD (EF BF BD), so
 * the host gets well-formed UTF-8 (RFC 8259 §8.1) as on the SSE path.
 *
 * Reported failure (a new user's trial, 2026-12-03): (b) was forwarded byte for byte, logged
 * `ok`, and Python's `json.loads` failed on it (`UnicodeDecodeError ... byte 0xff`); the same
 * bytes over SSE became U+FFFD. Also (c): a text holding another JSON object (the parse path,
 * which leaves the message unchanged) and (d): a host on 2025-03-26 (no normalization).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({
  lift: seller.url('invalid-utf8', { shape: 'lift' }),
  plain: seller.url('invalid-utf8', { shape: 'plain' }),
  other: seller.url('invalid-utf8', { shape: 'other' }),
}));

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

  /** The seller's body for `shape`, with each ill-formed sequence (C3 28 FF: C3, then FF) as U+FFFD. */
  const repaired = (head: string, middle: string, tail: string): Buffer => {
    const fixed = Buffer.concat([Buffer.from([0xef, 0xbf, 0xbd]), Buffer.from('('), Buffer.from([0xef, 0xbf, 0xbd])]);
    return Buffer.concat([Buffer.from(head), fixed, Buffer.from(middle), fixed, Buffer.from(tail)]);
  };

  test('nothing to rewrite: the seller bytes with U+FFFD for the ill-formed ones (it was forwarded byte for byte)', async () => {
    const r = await call('plain', 2);
    assert.equal(r.status, 200);
    const want = repaired('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"caf', '"}],"structuredContent":{"name":"caf', '"}}}');
    assert.equal(r.body.toString('hex'), want.toString('hex'));
    assert.equal(r.bytes, want.length);
    const line = await stack.gateway.exchangeLine('plain', 2);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.bytes_to_host, want.length);
  });

  test('a text holding another object (the parse path leaves it): the seller bytes with U+FFFD', async () => {
    const r = await call('other', 3);
    assert.equal(r.status, 200);
    const want = repaired('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\\"name\\":\\"tea', '\\"}"}],"structuredContent":{"name":"caf', '"}}}');
    assert.equal(r.body.toString('hex'), want.toString('hex'));
    const line = await stack.gateway.exchangeLine('other', 3);
    assert.equal(line.outcome, 'ok');
  });

  test('a host on 2025-03-26 (no normalization): the seller bytes with U+FFFD', async () => {
    const r = await rawPost(stack.gateway.agentUrl('plain'), toolCall(4, 'get_products'), { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(r.status, 200);
    const want = repaired('{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"caf', '"}],"structuredContent":{"name":"caf', '"}}}');
    assert.equal(r.body.toString('hex'), want.toString('hex'));
  });
});
