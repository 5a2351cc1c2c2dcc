/**
 * JsonScanner's `ignoreBom` (src/mcp/json-scan.ts, src/mcp/utf8-bom.ts; RFC 8259 §8.1): a
 * UTF-8 BOM at the very start of the text is dropped, even cut over chunks, and the scan and
 * its offsets start after it; anywhere else, or a partial one, it is a syntax error, as
 * without the option. Every case is fed whole and at every cut into two and three chunks,
 * which must not change the answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonScanner, scanJson, type JsonScanResult } from '../../src/mcp/json-scan.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const LIMITS = { maxDepth: 64, maxNodes: 10_000 };
const MESSAGE = Buffer.from('{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}');

/** The result and `leadingBomBytes` of a scan fed `bytes` cut at `cuts`. */
function scan(bytes: Buffer, cuts: readonly number[], ignoreBom = true): [JsonScanResult, number] {
  const scanner = new JsonScanner({ ...LIMITS, ignoreBom });
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    scanner.feed(bytes.subarray(from, cut));
    from = cut;
  }
  return [scanner.end(), scanner.leadingBomBytes];
}

/** Every split of `bytes` into one, two and three chunks (cuts anywhere in the first 8 bytes for three). */
function splits(bytes: Buffer): number[][] {
  const out: number[][] = [[]];
  for (let a = 0; a <= bytes.length; a++) out.push([a]);
  for (let a = 0; a <= Math.min(8, bytes.length); a++) for (let b = a; b <= Math.min(8, bytes.length); b++) out.push([a, b]);
  return out;
}

/** Scans `bytes` at every split; asserts they all agree and returns the one answer. */
function scanAllSplits(bytes: Buffer, ignoreBom = true): [JsonScanResult, number] {
  const whole = scan(bytes, [], ignoreBom);
  for (const cuts of splits(bytes)) assert.deepEqual(scan(bytes, cuts, ignoreBom), whole, `cuts ${cuts.join(',')}`);
  return whole;
}

test('a leading BOM is dropped: the same summary as the text without it, offsets from after it', () => {
  const [result, bom] = scanAllSplits(Buffer.concat([BOM, MESSAGE]));
  assert.equal(bom, 3);
  assert.deepEqual(result, scanJson(MESSAGE, LIMITS));
  assert.ok(result.ok && result.members?.id !== undefined);
  const [start, end] = result.members.id;
  assert.equal(MESSAGE.subarray(start, end).toString(), '7');
});

test('without ignoreBom a leading BOM is a syntax error at offset 0 (JSON.parse refuses it)', () => {
  assert.deepEqual(scanAllSplits(Buffer.concat([BOM, MESSAGE]), false), [{ ok: false, reason: 'syntax', offset: 0 }, 0]);
});

test('no BOM: unchanged, leadingBomBytes 0', () => {
  assert.deepEqual(scanAllSplits(MESSAGE), [scanJson(MESSAGE, LIMITS), 0]);
});

test('a BOM anywhere but the very start is a syntax error', () => {
  // A second BOM: the first is dropped, the second is the text's first byte.
  assert.deepEqual(scanAllSplits(Buffer.concat([BOM, BOM, MESSAGE])), [{ ok: false, reason: 'syntax', offset: 0 }, 3]);
  assert.deepEqual(scanAllSplits(Buffer.concat([Buffer.from(' '), BOM, MESSAGE])), [{ ok: false, reason: 'syntax', offset: 1 }, 0]);
  const inside = Buffer.concat([MESSAGE.subarray(0, 1), BOM, MESSAGE.subarray(1)]);
  assert.deepEqual(scanAllSplits(inside), [{ ok: false, reason: 'syntax', offset: 1 }, 0]);
});

test('a partial BOM is no BOM: a syntax error at offset 0, whether the text goes on or ends', () => {
  for (const start of [BOM.subarray(0, 1), BOM.subarray(0, 2), Buffer.from([0xef, 0xbf]), Buffer.from([0xef, 0xbb, 0xbe])]) {
    assert.deepEqual(scanAllSplits(Buffer.concat([start, MESSAGE])), [{ ok: false, reason: 'syntax', offset: 0 }, 0], start.toString('hex'));
    assert.deepEqual(scanAllSplits(start), [{ ok: false, reason: 'syntax', offset: 0 }, 0], `${start.toString('hex')} alone`);
  }
});

test('a BOM and nothing after it is no JSON text; an empty body neither', () => {
  assert.deepEqual(scanAllSplits(BOM)[1], 3);
  assert.equal(scanAllSplits(BOM)[0].ok, false);
  assert.equal(scan(Buffer.alloc(0), [])[0].ok, false);
});

test('a U+FEFF inside a string is a character, kept', () => {
  const text = Buffer.concat([Buffer.from('{"a":"'), BOM, Buffer.from('"}')]);
  assert.deepEqual(scanAllSplits(Buffer.concat([BOM, text])), [scanJson(text, LIMITS), 3]);
});

test('bounds after a BOM: the failure offset counts from after it', () => {
  const deep = Buffer.from('['.repeat(70));
  const [result, bom] = scanAllSplits(Buffer.concat([BOM, deep]));
  assert.equal(bom, 3);
  assert.deepEqual(result, { ok: false, reason: 'json_depth', limit: 64, observed: 65, offset: 64 });
});
