/**
 * mcp/lenient-json.ts: a text with `NaN`, `Infinity`, `-Infinity` outside strings read as a
 * lenient host reads it (Python's json, pydantic), each literal as null; strings skipped
 * whole, escapes included. Hand-picked cases, then generated values written with such
 * literals at number positions and tricky strings (quotes, backslashes, the literals' own
 * letters), read back exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayHoldNonFiniteLiteral, NOT_LENIENT_JSON, parseWithNonFiniteLiterals } from '../../src/mcp/lenient-json.js';

test('hand-picked texts', () => {
  const cases: Array<[string, unknown]> = [
    ['{"a":NaN}', { a: null }],
    ['[Infinity,-Infinity,-NaN, NaN ]', [null, null, null, null]],
    ['{"jsonrpc":"2.0","id":2,"result":{"content":[],"score":NaN}}', { jsonrpc: '2.0', id: 2, result: { content: [], score: null } }],
    ['{"s":"x\\"NaN","v":NaN}', { s: 'x"NaN', v: null }],
    ['{"s":"\\\\","v":Infinity}', { s: '\\', v: null }],
    ['{"Infinity":NaN,"NaN":"Infinity"}', { Infinity: null, NaN: 'Infinity' }],
    ['{"a":[NaN,{"b":-Infinity}]}', { a: [null, { b: null }] }],
    ['{"é":"ü","v":NaN}', { 'é': 'ü', v: null }],
    // No literal outside strings: nothing lenient about it, whether JSON or not.
    ['{"s":"NaN"}', NOT_LENIENT_JSON],
    ['{"s":"Infinity"', NOT_LENIENT_JSON],
    ['{"a":1}', NOT_LENIENT_JSON],
    // Still no JSON text with the literals read as numbers.
    ['[1NaN]', NOT_LENIENT_JSON],
    ['[NaNx]', NOT_LENIENT_JSON],
    ['{"a":NaN', NOT_LENIENT_JSON],
    ['{"a":NaN,"s":"unterminated', NOT_LENIENT_JSON],
    ['{"a":nan}', NOT_LENIENT_JSON],
    ['{"a":+Infinity}', NOT_LENIENT_JSON],
    ['{"a":--Infinity}', NOT_LENIENT_JSON],
    ['NaN', null],
  ];
  for (const [text, expected] of cases) assert.deepEqual(parseWithNonFiniteLiterals(text), expected, text);
});

test('mayHoldNonFiniteLiteral: text and bytes', () => {
  for (const [data, expected] of [['{"a":NaN}', true], ['{"a":Infinity}', true], ['{"a":1}', false], ['{"a":"nan infinity"}', false]] as const) {
    assert.equal(mayHoldNonFiniteLiteral(data), expected, data);
    assert.equal(mayHoldNonFiniteLiteral(Buffer.from(data, 'utf8')), expected, data);
  }
});

test('generated values: each non-finite number read as null, strings kept exactly', () => {
  let seed = 12345;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const PIECES = ['NaN', 'Infinity', '-Infinity', '"', '\\', '\\"', 'a', 'é', '\\u0022', ' ', ':', ',', '[', '{'];
  const LITERALS = ['NaN', 'Infinity', '-Infinity'];
  /** [text with literals, the value a lenient reader gives] */
  const gen = (depth: number): [string, unknown] => {
    const r = random();
    if (depth > 3 || r < 0.3) {
      const kind = pick(['literal', 'number', 'string', 'null', 'bool']);
      if (kind === 'literal') return [pick(LITERALS), null];
      if (kind === 'number') return ['-1.5e3', -1500];
      if (kind === 'null') return ['null', null];
      if (kind === 'bool') return ['true', true];
      // A string made of raw pieces: its JSON text via JSON.stringify (escapes included).
      const s = Array.from({ length: Math.floor(random() * 6) }, () => pick(PIECES)).join('');
      return [JSON.stringify(s), s];
    }
    const n = Math.floor(random() * 4);
    const items = Array.from({ length: n }, () => gen(depth + 1));
    if (r < 0.65) return [`[${items.map(([t]) => t).join(',')}]`, items.map(([, v]) => v)];
    const keys = items.map((_, k) => `${pick(PIECES)}${k}`);
    const value: Record<string, unknown> = {};
    keys.forEach((key, k) => Object.defineProperty(value, key, { value: items[k]![1], enumerable: true, writable: true, configurable: true }));
    return [`{${items.map(([t], k) => `${JSON.stringify(keys[k])}:${t}`).join(',')}}`, value];
  };
  let withLiteral = 0;
  for (let k = 0; k < 500; k++) {
    const [text, value] = gen(0);
    const read = parseWithNonFiniteLiterals(text);
    let plain: unknown = NOT_LENIENT_JSON;
    try {
      plain = JSON.parse(text);
    } catch {
      withLiteral++;
    }
    // Valid JSON has no literal outside strings: nothing to read leniently.
    if (plain !== NOT_LENIENT_JSON) assert.equal(read, NOT_LENIENT_JSON, text);
    else assert.deepEqual(read, value, text);
  }
  assert.ok(withLiteral > 100, `generated texts with a literal: ${withLiteral}`);
});
