/**
 * src/response/reserialized-message.ts stringifyWithSellerId: JSON.stringify's text of the
 * message but its top-level `id`, written as the seller's bytes (a review, N1:
 * test/regressions/reserialized-answer-respells-seller-id.test.ts through the gateway).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scanJson } from '../../src/mcp/json-scan.js';
import { stringifyWithSellerId } from '../../src/response/reserialized-message.js';

/** The re-serialized text of the seller's `text`, parsed, with and without the scan's members. */
function both(text: string): [string, string] {
  const bytes = Buffer.from(text, 'utf8');
  const scan = scanJson(bytes, { maxDepth: 100, maxNodes: 10_000 });
  assert.ok(scan.ok);
  const message: unknown = JSON.parse(text);
  return [stringifyWithSellerId(message, bytes, scan.members), stringifyWithSellerId(message, bytes, undefined)];
}

test("the id goes out as the seller wrote it, every other member as JSON.stringify writes it", () => {
  const cases: [string, string][] = [
    ['{"jsonrpc":"2.0","id":7.0,"result":{"n":1.50}}', '{"jsonrpc":"2.0","id":7.0,"result":{"n":1.5}}'],
    ['{ "id" : 0.7e1 , "jsonrpc":"2.0","result":{}}', '{"id":0.7e1,"jsonrpc":"2.0","result":{}}'],
    ['{"jsonrpc":"2.0","id":"a\\u0022b","result":{"s":"\\u0037"}}', '{"jsonrpc":"2.0","id":"a\\u0022b","result":{"s":"7"}}'],
    // An escaped key: the scan's members cannot name the id; the walk does.
    ['{"jsonrpc":"2.0","\\u0069d":7E+0,"r\\u0065sult":{}}', '{"jsonrpc":"2.0","id":7E+0,"result":{}}'],
    ['{"jsonrpc":"2.0","id":-0.0,"result":{}}', '{"jsonrpc":"2.0","id":-0.0,"result":{}}'],
    // Integer-like keys first, as JSON.stringify orders them; a member `__proto__` kept.
    ['{"b":1,"2":2,"id":"x","__proto__":{"y":1}}', '{"2":2,"b":1,"id":"x","__proto__":{"y":1}}'],
  ];
  for (const [seller, expected] of cases) assert.deepEqual(both(seller), [expected, expected], seller);
});

test('without a number or string id, the text is JSON.stringify\'s', () => {
  for (const seller of ['{"jsonrpc":"2.0","id":null,"result":{}}', '{"jsonrpc":"2.0","result":{}}', '[{"id":1.0}]']) {
    const expected = JSON.stringify(JSON.parse(seller));
    assert.deepEqual(both(seller), [expected, expected], seller);
  }
});
