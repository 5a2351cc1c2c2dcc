/**
 * request/headers.ts isResumableEventId: the seller ids a Last-Event-ID header carries back
 * exactly (the SSE stage makes only those resume tokens): printable ASCII, with spaces and
 * tabs only inside. Refused: what undici refuses to send (control characters, above U+00FF),
 * what it would send as other bytes than the seller's UTF-8 (U+0080-U+00FF), and what an HTTP
 * parser trims (leading and trailing whitespace).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isResumableEventId } from '../../src/request/headers.js';

test('printable ASCII ids, with inner spaces and tabs, are resumable; others are not', () => {
  for (const id of ['1', 'a b', 'a\tb', 'stream-7_42', '~!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}', 'x'.repeat(3000)]) {
    assert.equal(isResumableEventId(id), true, JSON.stringify(id));
  }
  for (const id of ['', ' ', ' a', 'a ', '\ta', 'a\t', 'é', 'ÿ', '\u2028', '😀', 'a\u0001b', 'a\u007fb', 'a\u0080b', 'a\rb', 'a\nb', 'a\0b']) {
    assert.equal(isResumableEventId(id), false, JSON.stringify(id));
  }
});

test('every printable-ASCII-only id of one or two characters agrees with the rule written out', () => {
  const printable = (c: number): boolean => c >= 0x21 && c <= 0x7e;
  const inner = (c: number): boolean => printable(c) || c === 0x20 || c === 0x09;
  for (let a = 0; a < 0x100; a++) {
    assert.equal(isResumableEventId(String.fromCharCode(a)), printable(a), `U+${a.toString(16)}`);
    for (let b = 0; b < 0x100; b += 7) {
      const id = String.fromCharCode(a, b);
      assert.equal(isResumableEventId(id), printable(a) && printable(b), JSON.stringify(id));
      const three = String.fromCharCode(0x61, a, 0x62);
      assert.equal(isResumableEventId(three), inner(a), JSON.stringify(three));
    }
  }
});
