/**
 * Regression (read-only review 37, F4): scanning a text over the byte bound grew the scan
 * core's WebAssembly memory for good. `scanObjectText` (src/mcp/json-scan.ts) copied the whole
 * JSON string and its unescaped bytes into the core's memory (twice the string's length), and
 * only then compared the unescaped length with `maxTextBytes` and answered `null`; a
 * WebAssembly memory never shrinks, so a 100 MB text scanned under a 4 MiB bound left RSS
 * +209 MB after GC. Now the decoded length is counted first, in JavaScript (one native search
 * per backslash), when the string is longer than the bound (only then can its decoded bytes be):
 * a text over the bound answers `null` and the memory does not grow.
 *
 * Input: a message whose `text` holds a JSON object string of 16 MiB (`{"a":"xxx…"}`), scanned
 * under a 1 MiB bound; strings longer than their bound in escaped form whose decoded bytes fit
 * it exactly or by one byte over (`\u0041` escapes: 1 byte; `\u00e9`: 2; `\u20ac`: 3; a
 * surrogate pair: 4; `\n`: 1); a lone surrogate within and over the bound.
 * Expectation: the 16 MiB text is `null` and the core's memory (json-scan.ts coreMemoryBytes)
 * is the same before and after (it grew by 32 MiB); the exact fits are scanned (their decoded
 * bytes as `JSON.parse` gives them), one byte over is `null`; a lone surrogate within the bound
 * is `undefined` as before (the parse path decides), over it `null` (its size decides first, as
 * extract.ts readTextObject's, which counts it as U+FFFD's 3 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { coreMemoryBytes, scanObjectText, type ByteRange } from '../../src/mcp/json-scan.js';

const LIMITS = { maxDepth: 64, maxNodes: 100_000 };

/** A message `{"text":"<text as a JSON string>"}` and the range of that string (quotes included). */
function messageWithText(escapedText: string): { body: Buffer; range: ByteRange } {
  const body = Buffer.from(`{"text":"${escapedText}"}`);
  return { body, range: [8, body.length - 1] };
}

/**
 * `{<ws>"a":"<value>"}` written as the content of a JSON string: `ws` and `value` as they are
 * written there (escapes of the message's string, decoded once into the text).
 */
const objectText = (value: string, ws = ''): string => `{${ws}\\"a\\":\\"${value}\\"}`;
/** Bytes of `{"a":""}`, the text around the value. */
const WRAPPER = 8;
/** The text as `JSON.parse` of the message reads it, as UTF-8 (a lone surrogate as U+FFFD). */
const textBytes = (body: Buffer): Buffer => Buffer.from((JSON.parse(body.toString()) as { text: string }).text, 'utf8');

describe('scanObjectText checks the byte bound before the core grows its memory', () => {
  test('a 16 MiB text under a 1 MiB bound: null, the core memory unchanged (it grew by 32 MiB)', () => {
    const { body, range } = messageWithText(objectText('x'.repeat(16 * 1024 * 1024)));
    const before = coreMemoryBytes();
    assert.equal(scanObjectText(body, range, LIMITS, 1024 * 1024), null);
    assert.equal(coreMemoryBytes() - before, 0);
  });

  // [name, the value, the whitespace before `"a"`, decoded bytes of each of the 1000 escapes]
  const escapes: Array<[string, string, string, number]> = [
    ['\\u0041 (1 byte)', '\\u0041', '', 1],
    ['\\u00e9 (2 bytes)', '\\u00e9', '', 2],
    ['\\u20ac (3 bytes)', '\\u20ac', '', 3],
    ['a surrogate pair \\ud83d\\ude00 (4 bytes)', '\\ud83d\\ude00', '', 4],
    ['\\n as whitespace (1 byte)', '', '\\n', 1],
    ['an escaped backslash of the text (2 bytes)', '\\\\\\\\', '', 2],
  ];
  for (const [name, value, ws, bytes] of escapes) {
    test(`a string longer than its bound whose decoded bytes fit it: ${name} x 1000`, () => {
      const { body, range } = messageWithText(objectText(value.repeat(1000), ws.repeat(1000)));
      const decoded = WRAPPER + 1000 * bytes;
      assert.equal(textBytes(body).length, decoded);
      assert.ok(range[1] - range[0] - 2 > decoded, 'the string is longer than its decoded bytes');
      const facts = scanObjectText(body, range, LIMITS, decoded);
      assert.ok(facts !== null && typeof facts === 'object', `scanned (got ${String(facts)})`);
      assert.deepEqual(Buffer.from(facts.bytes), textBytes(body));
      assert.equal(scanObjectText(body, range, LIMITS, decoded - 1), null);
    });
  }

  test('a lone surrogate: undefined within the bound (as before), null over it', () => {
    const { body, range } = messageWithText(objectText('\\ud800' + 'x'.repeat(100)));
    // Its escape counts 3 bytes (U+FFFD), as Buffer.byteLength counts the JavaScript text's (extract.ts utf8LengthExceeds).
    assert.equal(textBytes(body).length, WRAPPER + 3 + 100);
    assert.equal(scanObjectText(body, range, LIMITS, WRAPPER + 3 + 100), undefined);
    assert.equal(scanObjectText(body, range, LIMITS, 1000), undefined);
    assert.equal(scanObjectText(body, range, LIMITS, WRAPPER + 3 + 99), null);
  });
});
