/** src/mcp/duplicate-keys.ts: a text whose object repeats a key is told from one that does not. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collapsesDuplicateKeys, keyWrittenOnce, topLevelKeyRepeats } from '../../src/mcp/duplicate-keys.js';
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

test('topLevelKeyRepeats: the keys written more than once at the top level, escaped spellings included (trial 24, L2)', () => {
  const keys = ['status', 'a', 'b', 'c'];
  for (const [text, repeated] of [
    ['{"status":"rejected","status":"approved","a":1}', ['status']],
    ['{"st\\u0061tus":"x","status":"y","a":[1],"a":[1,2]}', ['status', 'a']],
    ['{"a":{"b":1,"b":2},"c":3}', []], // a repeat deeper down: none at the top
    ['{"a":1,"b":2}', []],
  ] as const) {
    const repeats = topLevelKeyRepeats(text, JSON.parse(text) as object);
    assert.deepEqual(keys.filter(repeats), repeated, text);
  }
  // More members than the scan records (64): from the counts; a repeat anywhere makes every key one.
  const many = (extra: string): string => `{${Array.from({ length: 70 }, (_, k) => `"k${k}":${k}`).join(',')}${extra}}`;
  assert.deepEqual(['k0', 'status'].filter(topLevelKeyRepeats(many(',"status":"x"'), JSON.parse(many(',"status":"x"')) as object)), []);
  const repeating = many(',"status":"x","status":"y"');
  assert.deepEqual(['k0', 'status'].filter(topLevelKeyRepeats(repeating, JSON.parse(repeating) as object)), ['k0', 'status']);
});

test('keyWrittenOnce: proves a key written at most once; anything that may be a second writing says no', () => {
  const once = (text: string, key: string): boolean => keyWrittenOnce(text, key, text.includes('\\u'));
  assert.equal(once('{"status":"a","x":[1]}', 'status'), true);
  assert.equal(once('{"x":1}', 'status'), true, 'not written at all');
  assert.equal(once('{"status":"a","status":"b"}', 'status'), false);
  assert.equal(once('{"status":"a","o":{"status":1}}', 'status'), false, 'a nested key: the caller asks the scan');
  assert.equal(once('{"status":"a","k":"status"}', 'status'), false, 'a value of the same spelling');
  assert.equal(once('{"status":"a","st\\u0061tus":"b"}', 'status'), false, 'an escape may spell it');
  assert.equal(once('{"statuses":1,"status":2}', 'status'), true);
});
