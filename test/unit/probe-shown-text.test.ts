/**
 * src/probe/shown-text.ts: a seller's strings as the probe's reports show them (escaped and cut
 * in the table, exact and inert in the JSON).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { shownText } from '../../src/probe/shown-text.js';
import { inertJson } from '../../src/observability/inert-json.js';

describe('shownText', () => {
  test('plain text, non-ASCII letters and emoji pass as they are', () => {
    assert.equal(shownText('adcp-demo-seller 1.0.0'), 'adcp-demo-seller 1.0.0');
    assert.equal(shownText('caf\u00e9 \u65e5\u672c \u{1f600}'), 'caf\u00e9 \u65e5\u672c \u{1f600}');
  });

  test('each class of unsafe character has its escape', () => {
    const cases: Array<[string, string]> = [
      ['\\', '\\\\'],
      ['\n', '\\n'],
      ['\r', '\\r'],
      ['\t', '\\t'],
      ['\u0000', '\\x00'],
      ['\u001b', '\\x1b'],
      ['\u007f', '\\x7f'],
      ['\u0085', '\\x85'],
      ['\u009b', '\\x9b'],
      ['\u00ad', '\\xad'],
      ['\u200b', '\\u200b'],
      ['\u200f', '\\u200f'],
      ['\u202e', '\\u202e'],
      ['\u2028', '\\u2028'],
      ['\u2029', '\\u2029'],
      ['\u2066', '\\u2066'],
      ['\ufeff', '\\ufeff'],
      ['\ud800', '\\ud800'],
      ['\udfff', '\\udfff'],
      ['\u{e0041}', '\\u{e0041}'],
    ];
    for (const [input, shown] of cases) assert.equal(shownText(`a${input}b`), `a${shown}b`, JSON.stringify(input));
  });

  test('at most `max` code units: exactly `max` stays whole, one more is cut to max - 1 and `…`', () => {
    assert.equal(shownText('x'.repeat(10), 10), 'x'.repeat(10));
    assert.equal(shownText('x'.repeat(11), 10), `${'x'.repeat(9)}\u2026`);
    assert.equal(shownText('x'.repeat(1_000_000), 10), `${'x'.repeat(9)}\u2026`);
  });

  test('never cuts inside an escape or a surrogate pair', () => {
    // 'ab' + '\x1b' = 6 units fits 9; with the next escape 10 > 9.
    assert.equal(shownText('ab\u001b\u001b\u001b', 10), 'ab\\x1b\u2026');
    assert.equal(shownText('ab\u001b\u001b', 10), 'ab\\x1b\\x1b');
    assert.equal(shownText(`${'x'.repeat(8)}\u{1f600}x`, 10), `${'x'.repeat(8)}\u2026`);
  });
});

describe('inertJson', () => {
  test('DEL, C1, format characters and U+2028/9 as \\u escapes; the same JSON value', () => {
    const value = { s: 'a\u007f\u009b\u202e\u2028\u{e0041}\u00e9\u0000\ud800"\\' };
    const json = inertJson(JSON.stringify(value));
    assert.equal(json, '{"s":"a\\u007f\\u009b\\u202e\\u2028\\udb40\\udc41\u00e9\\u0000\\ud800\\"\\\\"}');
    assert.deepEqual(JSON.parse(json), value);
  });
});
