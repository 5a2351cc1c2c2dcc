import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonDeepEqualCount, valueCount } from '../../src/mcp/deep-equal.js';

const VALUES: unknown[] = [
  {},
  [],
  'a',
  0,
  null,
  { a: 1, b: [true, null, 'x', { c: [] }] },
  [[[]], { d: { e: { f: [1, 2, 3] } } }],
  JSON.parse('{"__proto__":{"x":1},"y":[{"z":null}]}'),
];

test('jsonDeepEqualCount: the number of values of equal values (valueCount), keys in any order', () => {
  for (const v of VALUES) {
    const copy = JSON.parse(JSON.stringify(v)) as unknown;
    assert.equal(jsonDeepEqualCount(v, copy), valueCount(v), JSON.stringify(v));
  }
  assert.equal(jsonDeepEqualCount({ a: 1, b: { c: [2] } }, { b: { c: [2] }, a: 1 }), 5);
});

test('jsonDeepEqualCount: values below a shared object are counted too', () => {
  const shared = { a: [1, 2], b: { c: null } };
  assert.equal(jsonDeepEqualCount({ s: shared, t: 1 }, { t: 1, s: shared }), 1 + valueCount(shared) + 1);
  assert.equal(jsonDeepEqualCount(shared, shared), valueCount(shared));
});

test('jsonDeepEqualCount: -1 for values that differ', () => {
  assert.equal(jsonDeepEqualCount({ a: 1 }, { a: 2 }), -1);
  assert.equal(jsonDeepEqualCount({ a: 1 }, { a: 1, b: 2 }), -1);
  assert.equal(jsonDeepEqualCount([1, [2]], [1, [3]]), -1);
  assert.equal(jsonDeepEqualCount({ 0: 'x' }, ['x']), -1);
  assert.equal(jsonDeepEqualCount(null, {}), -1);
});

test("jsonDeepEqualCount with b's key counts kept: same answers, each of b's objects counted once over many comparisons", () => {
  const b = { x: { y: [1, { z: 2 }] }, w: 'v' };
  const counts = new Map<object, number>();
  assert.equal(jsonDeepEqualCount({ w: 'v', x: { y: [1, { z: 2 }] } }, b, counts), valueCount(b));
  assert.equal(jsonDeepEqualCount({ w: 'v' }, b, counts), -1);
  assert.equal(jsonDeepEqualCount({ w: 'v', x: { y: [1, { z: 3 }] } }, b, counts), -1);
  assert.equal(jsonDeepEqualCount({ w: 'v', x: { y: [1, { z: 2, q: 1 }] } }, b, counts), -1);
  assert.deepEqual([...counts.entries()], [[b, 2], [b.x, 1], [b.x.y[1], 1]]);
});
