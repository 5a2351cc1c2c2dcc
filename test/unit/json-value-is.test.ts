/**
 * json-value-at.ts jsonValueIs: the JSON stage's `jsonrpc` / `id` checks read from the bytes
 * (issue 5, 1 KiB fixed cost). It must answer exactly `valueAt(bytes, range) === expected`
 * (JSON.parse of the value) for every way a value can be written: the byte fast paths
 * (integers up to 15 digits, `null`, unescaped printable ASCII strings) and the parse they
 * fall back to (escapes, fractions, exponents, long numbers, non-ASCII).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonValueIs, valueAt } from '../../src/response/json-value-at.js';
import { scanJson, type ByteRange } from '../../src/mcp/json-scan.js';

const WRITTEN = [
  '"2.0"', '"2\\u002e0"', '"2.00"', '"2.0 "', '" 2.0"', '"2"', '""', '"\\u0032.0"', '"2.\\u0030"',
  '1', '-1', '0', '-0', '1.0', '1e0', '10', '01e1', '123456789012345', '-123456789012345', '1234567890123456', '9007199254740993', '0.5',
  'null', 'true', 'false', '"1"', '"abc"', '"ab\\"c"', '"a\\\\b"', '"a/b"', '"a\\/b"', '"\\u00e9"', '"é"', '"\\ud800"', '"\\t"', '"\x7f"',
  '[1]', '{"a":1}',
];
const EXPECTED: Array<string | number | null> = ['2.0', '2', '', 1, -1, 0, -0, 10, 123456789012345, -123456789012345, 1234567890123456, 9007199254740992, 0.5, null, '1', 'abc', 'ab"c', 'a\\b', 'a/b', 'é', '\ud800', '\t', '\x7f', 'true'];

/** The range of the `id` member of `{"id":<written>}` as the scan reports it. */
function idRange(body: Buffer): ByteRange {
  const scan = scanJson(body, { maxDepth: 8, maxNodes: 100 });
  assert.ok(scan.ok && scan.members?.id, body.toString());
  return scan.members.id;
}

test('jsonValueIs = (valueAt === expected) for every written form and expected value', () => {
  let fast = 0;
  for (const written of WRITTEN) {
    if (written === '01e1') continue; // not JSON
    const body = Buffer.from(`{"id":${written}}`);
    const range = idRange(body);
    for (const expected of EXPECTED) {
      const want = valueAt(body, range) === expected;
      assert.equal(jsonValueIs(body, range, expected), want, `${written} vs ${JSON.stringify(expected)}`);
      if (want) fast++;
    }
  }
  assert.ok(fast >= 20);
});

test('jsonValueIs: the usual forms are read from the bytes (no parse), a missing member is never equal', () => {
  const body = Buffer.from('{"jsonrpc":"2.0","id":42}');
  const scan = scanJson(body, { maxDepth: 8, maxNodes: 100 });
  assert.ok(scan.ok && scan.members);
  const parse = JSON.parse;
  JSON.parse = () => {
    throw new Error('parsed');
  };
  try {
    assert.equal(jsonValueIs(body, scan.members.jsonrpc, '2.0'), true);
    assert.equal(jsonValueIs(body, scan.members.id, 42), true);
    assert.equal(jsonValueIs(body, scan.members.id, 43), false);
    assert.equal(jsonValueIs(body, undefined, '2.0'), false);
    assert.equal(jsonValueIs(Buffer.from('{"id":null}'), idRange(Buffer.from('{"id":null}')), null), true);
    assert.equal(jsonValueIs(Buffer.from('{"id":"req-7"}'), idRange(Buffer.from('{"id":"req-7"}')), 'req-7'), true);
  } finally {
    JSON.parse = parse;
  }
});
