/**
 * scanStringText (src/mcp/json-scan.ts): a JSON string of a scanned body read as a JSON text
 * of its own, in WebAssembly. Its bytes must be exactly `Buffer.from(JSON.parse(string))`, its
 * verdict the one of `JSON.parse` + the bounds, and its member table what JSON.parse reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonScanner, scanJson, scanStringText, SCAN_TEXT_MEMBERS, type ByteRange } from '../../src/mcp/json-scan.js';
import { rng } from '../helpers/json-fuzz.js';

const LIMITS = { maxDepth: 64, maxNodes: 100_000 };

/** The whole body is the JSON string literal `literal`. */
function textOf(literal: string, limits = LIMITS): ReturnType<typeof scanStringText> {
  const body = Buffer.from(literal, 'utf8');
  return scanStringText(body, [0, body.length], limits);
}

/** A JSON string literal of `s`, every character that may be escaped escaped as `\uXXXX` with probability `p`. */
function literalOf(s: string, random: () => number, p: number): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const u = (code: number): string => `\\u${code.toString(16).padStart(4, '0')}`;
    if (c >= 0xd800 && c <= 0xdbff) out += random() < p ? u(c) + u(s.charCodeAt(++i)) : s.slice(i, ++i + 1);
    else if (c === 0x22 || c === 0x5c || c < 0x20 || random() < p) out += random() < 0.5 ? u(c) : JSON.stringify(s[i]).slice(1, -1);
    else out += s[i];
  }
  return `${out}"`;
}

test('the bytes are the UTF-8 of the string value: every escape, surrogate pairs, raw multi-byte characters', () => {
  const random = rng(11);
  const alphabet = ['{', '}', '"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\u0000', '\u001f', 'a', ' ', '\u00e9', '\u2028', '\uffff', '\ud83d\ude00', '\u{10ffff}', ':', ','];
  for (let n = 0; n < 400; n++) {
    let chars = '';
    const length = Math.floor(random() * 80);
    for (let k = 0; k < length; k++) chars += alphabet[Math.floor(random() * alphabet.length)];
    // Half valid object texts holding those characters, half the characters as they come.
    const s = n % 2 === 0 ? JSON.stringify({ [chars]: [chars, { s: chars }] }, null, n % 4 === 0 ? 1 : undefined) : `{${chars}`;
    const out = textOf(literalOf(`${s}`, random, 0.3), { maxDepth: Infinity, maxNodes: Infinity });
    // Mostly invalid JSON texts (null); the valid ones must carry the exact bytes.
    let parses = true;
    try {
      JSON.parse(s);
    } catch {
      parses = false;
    }
    if (!parses) assert.equal(out, null, s);
    else {
      assert.ok(out, s);
      assert.deepEqual(Buffer.from(out.bytes), Buffer.from(s, 'utf8'));
    }
  }
  const value = '{"k\u00e9":"\ud83d\ude00 \u2028 \\"q\\" \\n","n":[1,-0,2.5e3]}';
  for (let n = 0; n < 50; n++) {
    const out = textOf(literalOf(value, random, 0.4));
    assert.ok(out);
    assert.deepEqual(Buffer.from(out.bytes), Buffer.from(value, 'utf8'));
    assert.equal(out.numberMayBeLossy, true, 'an exponent');
  }
});

test('a lone surrogate is undefined (no UTF-8 for it); a pair written as two escapes is one character', () => {
  for (const lone of ['"{\\"a\\":\\"\\ud800\\"}"', '"{\\"a\\":\\"\\udc00\\"}"', '"{\\"a\\":\\"\\ud800\\u0041\\"}"', '"{\\"a\\":\\"\\ud800\\ud800\\udc00\\"}"', '"{\\"a\\":1}\\ud83d"']) {
    assert.equal(textOf(lone), undefined, lone);
  }
  const pair = textOf('"{\\"a\\":\\"\\uD83D\\uDE00\\"}"');
  assert.ok(pair);
  assert.equal(Buffer.from(pair.bytes).toString('utf8'), '{"a":"\ud83d\ude00"}');
});

test('null when JSON.parse + the bounds would give no object', () => {
  for (const literal of ['""', '" "', '"[1]"', '" \\n\\t[{}]"', '"{\\"a\\":}"', '"{} x"', '"1"', '"\\u007b"']) assert.equal(textOf(literal), null, literal);
  assert.equal(textOf('"{\\"a\\":[[1]]}"', { maxDepth: 2, maxNodes: 100 }), null, 'depth');
  assert.equal(textOf('"{\\"a\\":[1,2]}"', { maxDepth: 64, maxNodes: 3 }), null, 'nodes');
  assert.ok(textOf('"{\\"a\\":[1,2]}"', { maxDepth: 2, maxNodes: 4 }), 'at the bounds');
  assert.ok(textOf('"\\n \\t{}\\r"'), 'escaped whitespace around the object');
});

test('the member table: every top-level member in the order written, value ranges, first bytes, array lengths', () => {
  const text = '{ "status" : "completed", "a\\u0062": [1, [2, 3], {"x": [4]}], "n": -1.5, "o": {"k": [1, 2]}, "status": null, "e": [] }';
  const out = textOf(JSON.stringify(text));
  assert.ok(out);
  const bytes = Buffer.from(out.bytes);
  const read = ([start, end]: ByteRange): string => bytes.toString('utf8', start, end);
  assert.deepEqual(
    out.members.map((m) => [read(m.key), read(m.value), String.fromCharCode(m.first), m.elements]),
    [
      ['"status"', '"completed"', '"', 0],
      ['"a\\u0062"', '[1, [2, 3], {"x": [4]}]', '[', 3],
      ['"n"', '-1.5', '-', 0],
      ['"o"', '{"k": [1, 2]}', '{', 0],
      ['"status"', 'null', 'n', 0],
      ['"e"', '[]', '[', 0],
    ],
  );
});

test(`up to ${SCAN_TEXT_MEMBERS} members are recorded; more is undefined (undecided)`, () => {
  const object = (n: number): string => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, k) => [`k${k}`, k])));
  const full = textOf(JSON.stringify(object(SCAN_TEXT_MEMBERS)));
  assert.ok(full);
  assert.equal(full.members.length, SCAN_TEXT_MEMBERS);
  assert.equal(textOf(JSON.stringify(object(SCAN_TEXT_MEMBERS + 1))), undefined);
});

test('a scanner fed around it is not disturbed (its state travels with it)', () => {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify({ deep: [[[{ a: 1 }]]] }) }] } }));
  const scanner = new JsonScanner(LIMITS);
  scanner.feed(body.subarray(0, 40));
  const whole = scanJson(body, LIMITS);
  assert.ok(whole.ok);
  assert.ok(textOf(JSON.stringify(JSON.stringify({ other: [[[[1]]]] }))));
  scanner.feed(body.subarray(40));
  assert.deepEqual(scanner.end(), whole);
  const range = whole.members!.content!.texts[0]!;
  const out = scanStringText(body, range, LIMITS);
  assert.ok(out);
  assert.deepEqual(Buffer.from(out.bytes), Buffer.from(JSON.stringify({ deep: [[[{ a: 1 }]]] })));
});

test('a text scanned while another scanner is deep in its body leaves that scanner intact (its stack lives in the core)', () => {
  // A body 900 levels deep of mixed kinds, fed in two halves; between them, texts are read
  // (scanStringText lays its region out just past its own small stack, over the deeper
  // scanner's) and another scanner is fed and abandoned mid-body.
  const open = Array.from({ length: 900 }, (_, i) => (i % 3 === 0 ? '{"k":' : '[')).join('');
  const close = Array.from({ length: 900 }, (_, i) => (i % 3 === 0 ? '}' : ']')).reverse().join('');
  const body = Buffer.from(`${open}"x"${close}`);
  const limits = { maxDepth: 1000, maxNodes: 100_000 };
  const deep = new JsonScanner(limits);
  assert.equal(deep.feed(body.subarray(0, open.length + 2)), undefined);
  // The deep scanner still holds the core here: the text's region (past its ~3-byte stack)
  // lies over the deep one's 113 bytes of stack.
  const text = Buffer.from(JSON.stringify({ t: JSON.stringify({ a: [1, 2, { b: 'cc' }] }) }));
  const lifted = scanStringText(text, [5, text.length - 1], limits);
  assert.ok(lifted);
  assert.equal(Buffer.from(lifted.bytes).toString(), JSON.stringify({ a: [1, 2, { b: 'cc' }] }));
  const abandoned = new JsonScanner(limits);
  abandoned.feed(Buffer.from('{"a":[[[{"b":'));
  assert.equal(deep.feed(body.subarray(open.length + 2)), undefined);
  assert.deepEqual(deep.end(), scanJson(body, limits));
  assert.equal((deep.end() as { depth: number }).depth, 900);
});
