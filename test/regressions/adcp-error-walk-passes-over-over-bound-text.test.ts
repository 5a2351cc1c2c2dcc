/**
 * Reported failure (code review of hostile trial 38, F1): extractAdcpError's text fallback
 * (extract.ts, detection step 3) was documented as "the same walk and size bound as the
 * success fallback", but since F1 the success walk (findLiftableTextOrBound) ENDS at a text
 * over `maxDepth` / `maxNodes` while the error walk passed over it and returned a later
 * text's `adcp_error`. The transport-errors page's algorithm bounds neither depth nor count:
 * on the same tool result it returns the FIRST text's `adcp_error`, so the bounded walk gave
 * another error than the seller's result holds.
 *
 * Now both walks are one (extract.ts walkTextObjects): a text over a structure bound ends the
 * error walk too, and no error is extracted (`null`); a text over the byte bound is still
 * passed over (the per-item skip the spec names), as is a text that is no object.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAdcpError } from '../../src/mcp/extract.js';

const text = (t: string) => ({ type: 'text', text: t });
const BOUNDS = { maxTextBytes: 1000, maxDepth: 4, maxNodes: 10 };
const LATER = '{"adcp_error":{"code":"LATER"}}';
/** 5 levels deep (over maxDepth 4), its own adcp_error valid: the spec's algorithm returns it. */
const DEEP = '{"adcp_error":{"code":"FIRST","d":{"e":{"f":{}}}}}';
/** 11 values (over maxNodes 10). */
const WIDE = '{"adcp_error":{"code":"FIRST","n":[1,2,3,4,5,6,7]}}';

test('a text over the depth or node bound ends the adcp_error walk: no later error is taken for it', () => {
  // Unbounded, the first text's error is the answer (what the spec's algorithm returns).
  assert.deepEqual(extractAdcpError({ isError: true, content: [text(DEEP), text(LATER)] }), { code: 'FIRST', d: { e: { f: {} } } });
  assert.deepEqual(extractAdcpError({ isError: true, content: [text(WIDE), text(LATER)] }), { code: 'FIRST', n: [1, 2, 3, 4, 5, 6, 7] });
  // Bounded: not the later one.
  assert.equal(extractAdcpError({ isError: true, content: [text(DEEP), text(LATER)] }, BOUNDS), null);
  assert.equal(extractAdcpError({ isError: true, content: [text(WIDE), text(LATER)] }, BOUNDS), null);
  // In a JSON-RPC result envelope too.
  assert.equal(extractAdcpError({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [text(WIDE), text(LATER)] } }, BOUNDS), null);
  // Over a bound and no adcp_error in it: it still ends the walk (the spec's algorithm parses it, finds no error, and goes on; a bounded walk cannot know what it holds).
  assert.equal(extractAdcpError({ isError: true, content: [text('{"a":{"b":{"c":{"d":{}}}}}'), text(LATER)] }, BOUNDS), null);
});

test('controls: a text over the byte bound, no object, or an object without adcp_error is passed over', () => {
  const later = { code: 'LATER' };
  assert.deepEqual(extractAdcpError({ isError: true, content: [text(`{"adcp_error":{"code":"BIG","m":"${'x'.repeat(1000)}"}}`), text(LATER)] }, BOUNDS), later);
  assert.deepEqual(extractAdcpError({ isError: true, content: [text('Oops.'), text('{bad'), text('{"x":1}'), text(LATER)] }, BOUNDS), later);
  // Over the byte bound AND the depth bound: the byte bound decides (checked first), passed over.
  assert.deepEqual(extractAdcpError({ isError: true, content: [text(`{"a":{"b":{"c":{"d":{"e":"${'x'.repeat(1000)}"}}}}}`), text(LATER)] }, BOUNDS), later);
  // After the error is found, an over-bound text does not matter.
  assert.deepEqual(extractAdcpError({ isError: true, content: [text(LATER), text(DEEP)] }, BOUNDS), later);
});
