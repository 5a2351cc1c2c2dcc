/**
 * src/mcp/lone-surrogate.ts and where it decides (a hostile trial 29, M1): a text whose JSON
 * object holds a lone surrogate in a string or key, at any depth, written as an escape or
 * (the message's own escape) as a code unit of the text, is not lifted
 * (`textNotLifted: 'lone_surrogate'`), on the parse path (normalize.ts) and, the same texts,
 * on the scan path (response/lift-splice.ts declines, the parse path reports); a pair, or a
 * backslash escaped before `u`, is no lone surrogate. A summary never holds one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapesLoneSurrogate, escapesLoneSurrogateText, holdsLoneSurrogate } from '../../src/mcp/lone-surrogate.js';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { summarizeStructuredContent } from '../../src/mcp/summary.js';
import { scanJson } from '../../src/mcp/json-scan.js';
import { spliceLegacyLift } from '../../src/response/lift-splice.js';
import { exchange, generator, parsePath } from '../helpers/tool-result-fuzz.js';

/** Texts (as JavaScript strings: `\\u` is the escape written in the text) holding a lone surrogate. */
const LONE = [
  '{"s": "\\ud800x"}',
  '{"s":"\\udc00"}',
  '{"\\udfff":1}',
  '{"s":"\\uD800"}',
  '{"s":"\\ud83d"}',
  '{"s":"\\ude00\\ud83d"}',
  '{"s":"\\ud800\\ud800\\udc00"}',
  '{"s":"\\ud800\\u0041"}',
  '{"s":"\\ud800\\n\\udc00"}',
  '{"a":[{"b":{"c":["x","\\udbff"]}}]}',
  '{"s":"\\\\\\ud800"}', // an escaped backslash, then the escape
  '{"s":"\\ud83d\\ude00\\udc00"}',
  '{"k":"\\ud800","k":"ok"}', // in a member JSON.parse drops: a spliced lift writes it all the same
];
/** Texts holding none. */
const NOT_LONE = [
  '{"s":"\\ud83d\\ude00"}',
  '{"s":"\\uD83D\\uDE00","k\\udbff\\udfff":1}',
  '{"s":"\\\\ud800"}', // a backslash, then `ud800`: no escape
  '{"s":"\\\\\\\\ud800"}',
  '{"s":"\\u00e9\\u0041\\n\\"\\\\"}',
  '{"s":"\ud83d\ude00"}',
  '{"s":"ud800","\\\\":"\\\\udc00"}',
  '{}',
];

/** Whether every string and key of `v` is well-formed: what a strict parser (jiter, serde_json) requires. */
function wellFormed(v: unknown): boolean {
  if (typeof v === 'string') return v.isWellFormed();
  if (Array.isArray(v)) return v.every(wellFormed);
  if (typeof v !== 'object' || v === null) return true;
  return Object.entries(v).every(([k, e]) => k.isWellFormed() && wellFormed(e));
}

/** Whether a string token of the JSON `text` (each read by JSON.parse alone) is not well-formed. */
function stringTokensLone(text: string): boolean {
  return (text.match(/"(?:[^"\\]|\\.)*"/g) ?? []).some((token) => !(JSON.parse(token) as string).isWellFormed());
}

test('escapes of a lone surrogate are told from pairs and from escaped backslashes, in bytes and in a string', () => {
  for (const [texts, lone] of [
    [LONE, true],
    [NOT_LONE, false],
  ] as const) {
    for (const text of texts) {
      assert.equal(stringTokensLone(text), lone, `premise: ${text}`);
      assert.equal(escapesLoneSurrogate(Buffer.from(text)), lone, text);
      // A plain Uint8Array view into a larger buffer, as the scan's bytes are.
      const big = Buffer.from(`xx${text}\\ud800`);
      assert.equal(escapesLoneSurrogate(new Uint8Array(big.buffer, big.byteOffset + 2, Buffer.byteLength(text))), lone, `view: ${text}`);
      assert.equal(escapesLoneSurrogateText(text), lone, text);
      assert.equal(holdsLoneSurrogate(text, JSON.parse(text)), lone, text);
    }
  }
});

test('a text that is itself not well-formed: decided from what JSON.parse read', () => {
  for (const [text, lone] of [
    ['{"s":"\ud800"}', true],
    ['{"\udc00":1}', true],
    ['{"s":"\ud800\\udc00"}', false], // a code unit and an escape make a pair once parsed
    ['{"s":"\\ud800\udc00"}', false],
  ] as const) {
    assert.equal(text.isWellFormed(), false);
    assert.equal(holdsLoneSurrogate(text, JSON.parse(text)), lone, text);
  }
});

test('normalize: such a text is not lifted (lone_surrogate), another one or a pair is', () => {
  const opts = { maxTextBytes: 1 << 20, maxDepth: 64, maxNodes: 1000 };
  for (const text of [...LONE, '{"s":"\ud800"}']) {
    const result = { content: [{ type: 'text', text }, { type: 'text', text: '{"b":2}' }] };
    const out = normalizeToolResult(result, opts);
    assert.deepEqual([out.changed, out.result, out.textNotLifted], [false, result, 'lone_surrogate'], text);
  }
  for (const text of NOT_LONE) {
    const out = normalizeToolResult({ content: [{ type: 'text', text }] }, opts);
    assert.deepEqual([out.action, out.textNotLifted], ['lifted', undefined], text);
  }
});

test('both paths: spliced, re-serialized (an escaped key) and the scan path agree: the seller bytes, lone_surrogate', () => {
  for (const text of [...LONE, '{"s":"\ud800"}']) {
    for (const extra of ['', ',"_m\\u0065ta":{"n":1}']) {
      const body = Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]${extra}}}`);
      const ex = exchange();
      assert.equal(parsePath(ex, body), undefined, text);
      assert.equal(ex.textNotLifted, 'lone_surrogate', text);
      const scan = scanJson(body, { maxDepth: 64, maxNodes: 100_000 });
      assert.ok(scan.ok);
      const fast = exchange();
      assert.deepEqual([spliceLegacyLift(fast, body, scan), fast.textNotLifted], [undefined, undefined], text);
    }
  }
});

test('randomized: the checks agree with JSON.parse on generated texts', () => {
  let lone = 0;
  let checked = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const g = generator(seed);
    for (let k = 0; k < 4; k++) {
      const text = g.text();
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        continue;
      }
      checked++;
      // A well-formed text: what its string tokens say (a repeated key's first value is in
      // the bytes a spliced lift writes, though JSON.parse drops it); else what JSON.parse read.
      const want = text.isWellFormed() ? stringTokensLone(text) : !wellFormed(value);
      if (want) lone++;
      assert.equal(holdsLoneSurrogate(text, value), want, text);
      // The bytes' check: on a well-formed text (the scan leaves any other to the parse path).
      if (text.isWellFormed()) {
        assert.equal(escapesLoneSurrogate(Buffer.from(text)), want, text);
        assert.equal(escapesLoneSurrogateText(text), want, text);
      }
    }
  }
  assert.ok(checked > 1000 && lone > 100, `${lone} of ${checked}`);
});

test('a summary never holds a lone surrogate: a status or key holding one is not shown', () => {
  const summary = summarizeStructuredContent({ status: '\ud800', '\udfff': 1, 'k\ud800': [1], ok: [1, 2] }, 100);
  assert.equal(summary, 'Result in structuredContent (100 bytes): status, ok[2], +2 more.');
  assert.equal(summary.isWellFormed(), true);
});
