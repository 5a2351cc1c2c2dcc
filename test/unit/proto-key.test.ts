/**
 * src/mcp/proto-key.ts and the scan's flag (json-scan.ts ObjectTextFacts.mayHoldProtoKey): a
 * text whose JSON object holds a member `__proto__` at any depth, written plainly or with
 * escapes, is told from one that does not (a hostile trial 24, L1). The scan's flag may be set
 * for a text without one (a key with an escape of one of its characters), never missing one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdsProtoKey, mayHoldProtoKey } from '../../src/mcp/proto-key.js';
import { scanObjectText, TEXT_OVER_BOUND } from '../../src/mcp/json-scan.js';

const HOLDING = [
  '{"__proto__":{"polluted":1},"a":1}',
  '{"a":{"b":{"c":{"__proto__":1}}}}',
  '{"a":{"b":{"c":{"x":1,"__proto__":"v"}}}}',
  '{"a":{"b":{"c":[{"__proto__":null}]}}}',
  '{"a":[[[{"__proto__":[]}]]]}',
  '{"\\u005f_proto__":1}',
  '{"\\u005F\\u005F\\u0070\\u0072\\u006F\\u0074\\u006f\\u005f\\u005f":1}',
  '{"a":{"b":{"__pro\\u0074o__":1}}}',
  '{ "__proto__" : 1 }',
  '{"a":{"b":{"c" : {"__proto__" : 1}}}}',
];
const NOT_HOLDING = [
  '{"caf\\u00e9":1,"a":{"b":{"\\u00e9":2}}}',
  '{"a":"__proto__","b":{"c":{"d":"__proto__"}}}',
  '{"__proto_":1,"__proto__x":2,"a":{"b":{"c":{"__proto_":1,"___proto__":2}}}}',
  '{"x":"\\u0070","\\u0061":1}',
  '{"a":[1,2,{"b":"\\u005f_proto__"}]}',
];
/** Not holding one, but with a key the scan cannot rule out without decoding it (an escape of `_`). */
const MAYBE = ['{"a\\u005fb":1}', '{"a":{"b":{"\\u0070":1}}}'];

/** The scan of `text` as a `content[].text` JSON string. */
function scanFlag(text: string): boolean {
  const body = Buffer.from(JSON.stringify(text));
  const facts = scanObjectText(body, [0, body.length], { maxDepth: 64, maxNodes: 1000 });
  assert.ok(facts && facts !== TEXT_OVER_BOUND, text);
  return facts.mayHoldProtoKey;
}

test('a member __proto__ at any depth, plain or escaped: the walk, the pre-filter and the scan find it', () => {
  for (const text of HOLDING) {
    assert.equal(holdsProtoKey(JSON.parse(text)), true, text);
    assert.equal(mayHoldProtoKey(text), true, text);
    assert.equal(scanFlag(text), true, text);
  }
});

test('a __proto__ value, a near key, an escape of another character: none of them', () => {
  for (const text of NOT_HOLDING) {
    assert.equal(holdsProtoKey(JSON.parse(text)), false, text);
    assert.equal(scanFlag(text), false, text);
  }
  for (const text of MAYBE) {
    assert.equal(scanFlag(text), true, `may: ${text}`);
    assert.equal(mayHoldProtoKey(text), true, `may: ${text}`);
    assert.equal(holdsProtoKey(JSON.parse(text)), false, `the walk decides: ${text}`);
  }
});

test('a __proto__ value in an array, and a deep text, do not overflow the walk', () => {
  const deep = '['.repeat(5000) + '{"__proto__":1}' + ']'.repeat(5000);
  assert.equal(holdsProtoKey(JSON.parse(deep)), true);
  assert.equal(holdsProtoKey(JSON.parse('['.repeat(5000) + '1' + ']'.repeat(5000))), false);
});
