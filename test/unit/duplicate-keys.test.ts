/** src/mcp/duplicate-keys.ts: a text whose object repeats a key is told from one that does not. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collapsesDuplicateKeys } from '../../src/mcp/duplicate-keys.js';
import { valueCount } from '../../src/mcp/deep-equal.js';

test('valueCount counts every value, keys not', () => {
  assert.equal(valueCount({}), 1);
  assert.equal(valueCount({ a: 1, b: [true, null, 'x'] }), 6);
  assert.equal(valueCount([[[]]]), 3);
  assert.equal(valueCount('s'), 1);
});

test('a repeated key at any depth is found; the same values without one are not', () => {
  for (const [text, repeated] of [
    ['{"a":1,"a":2}', true],
    ['{"a":{"b":1,"b":1}}', true],
    ['[{"x":[1,{"k":null,"k":null}]}]', true],
    ['{"a":1,"b":2}', false],
    ['{ "a" : [ 1 , 2 ] }', false],
    ['{"a":{"a":{"a":1}}}', false],
    ['{"\\u0061":1,"a":2}', true], // the same key, written two ways
  ] as const) {
    assert.equal(collapsesDuplicateKeys(text, valueCount(JSON.parse(text))), repeated, text);
  }
});
