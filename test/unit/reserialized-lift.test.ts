/**
 * mcp/reserialized-lift.ts: what `JSON.stringify` of a lifted text's object would drop (a
 * hostile trial 26, L1; the end-to-end test:
 * test/regressions/tasks-get-lift-loses-repeated-key-and-negative-zero.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';
import { reserializedLiftLoss } from '../../src/mcp/reserialized-lift.js';

const loss = (text: string, counted: boolean): string | undefined => {
  const bounds = checkJsonBounds(text, { maxDepth: Infinity, maxNodes: Infinity });
  return reserializedLiftLoss(text, JSON.parse(text) as object, counted && bounds.ok ? bounds.nodes : undefined);
};

test('a repeated key at any depth, plain or escaped; a negative zero of any spelling; the key first', () => {
  for (const counted of [true, false]) {
    for (const [text, expected] of [
      ['{"status":"rejected","status":"approved"}', 'repeated_key'],
      ['{"status":"rejected","\\u0073tatus":"approved"}', 'repeated_key'],
      ['{"a":[{"k":1,"k":2}]}', 'repeated_key'],
      ['{"a":-0.0,"b":1,"b":2}', 'repeated_key'],
      ['{"neg":-0.0}', 'negative_zero'],
      ['{"a":[1,{"x":-0e3}]}', 'negative_zero'],
      ['{"a":-0}', 'negative_zero'],
      // The same values re-serialized: nothing lost.
      ['{"price":1.0,"e":1E2,"z":0.0,"n":-0.5,"s":"-0"}', undefined],
      ['{"a":{"k":1},"b":{"k":1}}', undefined],
    ] as const) {
      assert.equal(loss(text, counted), expected, `${text} (counted: ${counted})`);
    }
  }
});
