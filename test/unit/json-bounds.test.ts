// checkJsonBounds: exact depth/node counts, limit and limit+1, string awareness, bytes vs
// string, and fast failure on hostile input (mcp-response-extraction §Size Limits: bound
// JSON depth and node count; ARCHITECTURE §5).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';

const NO_LIMIT = { maxDepth: Infinity, maxNodes: Infinity };
const MiB4 = 4 * 1024 * 1024;

/** Reference counts, recursive, from the parsed value. */
function reference(value: unknown, depth = 0): { depth: number; nodes: number } {
  if (value === null || typeof value !== 'object') return { depth, nodes: 1 };
  let nodes = 1;
  let max = depth + 1;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    const r = reference(child, depth + 1);
    nodes += r.nodes;
    max = Math.max(max, r.depth);
  }
  return { depth: max, nodes };
}

function both(text: string, limits = NO_LIMIT) {
  const fromString = checkJsonBounds(text, limits);
  const fromBytes = checkJsonBounds(Buffer.from(text, 'utf8'), limits);
  assert.deepEqual(fromBytes, fromString, `bytes and string disagree on ${text.slice(0, 80)}`);
  return fromString;
}

describe('counts', () => {
  const cases: [string, number, number][] = [
    ['1', 0, 1],
    ['-12.5e+3', 0, 1],
    ['"a"', 0, 1],
    ['true', 0, 1],
    ['null', 0, 1],
    ['{}', 1, 1],
    ['[]', 1, 1],
    ['{"a":1}', 1, 2],
    ['{"a":1,"b":2}', 1, 3],
    ['["a","b"]', 1, 3],
    ['{"a":"b","c":["d",{"e":null}]}', 3, 6],
    ['[[[]]]', 3, 3],
    ['["[[[{{{", "]]]}}}"]', 1, 3],
    ['{"k\\"ey":"v\\\\","x":"\\\\\\"","y":[true,false]}', 2, 6],
    ['{ "a" : [ 1 , "x" , { } ] , "b" : "c" }', 3, 6],
    ['{"é":"ü€😀","😀":["日本"]}', 2, 4],
  ];
  for (const [text, depth, nodes] of cases) {
    test(text, () => {
      assert.deepEqual(both(text), { ok: true, depth, nodes });
      assert.deepEqual(reference(JSON.parse(text)), { depth, nodes });
    });
  }

  test('matches a recursive reference on generated documents (compact and pretty)', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const strings = ['', 'a', '"', '\\', '\\"', '[', '{', ']:,', 'é😀', 'x\ny'];
    const gen = (d: number): unknown => {
      const r = rand();
      if (d > 5 || r < 0.3) return [1, -2.5, true, false, null, strings[Math.floor(rand() * strings.length)]][Math.floor(rand() * 6)];
      const n = Math.floor(rand() * 5);
      if (r < 0.65) return Array.from({ length: n }, () => gen(d + 1));
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${strings[Math.floor(rand() * strings.length)]}${i}`, gen(d + 1)]));
    };
    for (let i = 0; i < 300; i++) {
      const value = gen(0);
      const expected = { ok: true, ...reference(value) };
      assert.deepEqual(both(JSON.stringify(value)), expected);
      assert.deepEqual(both(JSON.stringify(value, null, 2)), expected);
    }
  });
});

describe('limits', () => {
  test('depth: exactly at the limit passes, one more fails with observed = limit + 1', () => {
    assert.deepEqual(both('[[[]]]', { maxDepth: 3, maxNodes: 100 }), { ok: true, depth: 3, nodes: 3 });
    assert.deepEqual(both('[[[]]]', { maxDepth: 2, maxNodes: 100 }), { ok: false, reason: 'json_depth', limit: 2, observed: 3 });
    assert.deepEqual(both('{"a":{"b":{}}}', { maxDepth: 2, maxNodes: 100 }), { ok: false, reason: 'json_depth', limit: 2, observed: 3 });
    assert.deepEqual(both('1', { maxDepth: 0, maxNodes: 1 }), { ok: true, depth: 0, nodes: 1 });
    assert.deepEqual(both('[]', { maxDepth: 0, maxNodes: 1 }), { ok: false, reason: 'json_depth', limit: 0, observed: 1 });
  });

  test('nodes: exactly at the limit passes, one more fails with observed = limit + 1', () => {
    assert.deepEqual(both('[1,2,3]', { maxDepth: 10, maxNodes: 4 }), { ok: true, depth: 1, nodes: 4 });
    assert.deepEqual(both('[1,2,3]', { maxDepth: 10, maxNodes: 3 }), { ok: false, reason: 'json_nodes', limit: 3, observed: 4 });
    // A string after a comma is settled at the next character, or at the end of input.
    assert.deepEqual(both('["a","b"]', { maxDepth: 10, maxNodes: 2 }), { ok: false, reason: 'json_nodes', limit: 2, observed: 3 });
    assert.deepEqual(both('["a","b"', { maxDepth: 10, maxNodes: 2 }), { ok: false, reason: 'json_nodes', limit: 2, observed: 3 });
  });

  test('object keys never count, even at the limit', () => {
    assert.deepEqual(both('{"a":1,"b":2,"c":3}', { maxDepth: 1, maxNodes: 4 }), { ok: true, depth: 1, nodes: 4 });
    assert.deepEqual(both('{"a":1,"b":2,"c":3}', { maxDepth: 1, maxNodes: 3 }), { ok: false, reason: 'json_nodes', limit: 3, observed: 4 });
  });

  test('an opening bracket over both bounds reports json_depth', () => {
    assert.deepEqual(both('[[', { maxDepth: 1, maxNodes: 1 }), { ok: false, reason: 'json_depth', limit: 1, observed: 2 });
  });

  test('invalid limits throw RangeError', () => {
    assert.throws(() => checkJsonBounds('1', { maxDepth: -1, maxNodes: 1 }), RangeError);
    assert.throws(() => checkJsonBounds('1', { maxDepth: 1, maxNodes: 1.5 }), RangeError);
    assert.throws(() => checkJsonBounds('1', { maxDepth: Number.NaN, maxNodes: 1 }), RangeError);
  });

  test('brackets, quotes and escapes inside strings are skipped', () => {
    const text = JSON.stringify({ a: '[[[[{{{{"\\', b: ['\\"]]]', '\\\\'] });
    assert.deepEqual(both(text, { maxDepth: 2, maxNodes: 5 }), { ok: true, depth: 2, nodes: 5 });
  });

  test('syntax is not validated (JSON.parse does that); unterminated input ends the scan', () => {
    assert.deepEqual(both('["abc'), { ok: true, depth: 1, nodes: 2 });
    assert.deepEqual(both(']]]'), { ok: true, depth: 0, nodes: 0 });
  });
});

describe('hostile input fails fast', () => {
  const limits = { maxDepth: 64, maxNodes: 100_000 };

  test('4 MiB of [ fails with json_depth at 65', () => {
    const text = '['.repeat(MiB4);
    assert.deepEqual(checkJsonBounds(text, limits), { ok: false, reason: 'json_depth', limit: 64, observed: 65 });
    assert.deepEqual(checkJsonBounds(Buffer.from(text), limits), { ok: false, reason: 'json_depth', limit: 64, observed: 65 });
  });

  test('4 MiB of {"a": fails with json_depth at 65', () => {
    const text = '{"a":'.repeat(MiB4 / 5);
    assert.deepEqual(both(text, limits), { ok: false, reason: 'json_depth', limit: 64, observed: 65 });
  });

  test('4 MiB of [0,0,0,… fails with json_nodes at node 100001', () => {
    const text = '[' + '0,'.repeat(MiB4 / 2);
    assert.deepEqual(both(text, limits), { ok: false, reason: 'json_nodes', limit: 100_000, observed: 100_001 });
  });

  // No timing asserted (speed is the bench's): a scan quadratic in the escapes would run into the test's time limit.
  test('a 4 MiB string of escaped quotes is scanned whole', () => {
    const text = '["' + '\\\\\\"'.repeat(MiB4 / 4) + '"]';
    assert.deepEqual(both(text, limits), { ok: true, depth: 1, nodes: 2 });
  });
});
