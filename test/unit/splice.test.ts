/**
 * spliceRewrite (src/response/splice.ts): a rewritten tool result written as the seller's
 * bytes with only the replaced text strings and the appended structuredContent changed. The
 * spliced bytes must parse to what re-serializing the rewritten message gives (up to a
 * seller's `-0`, kept as written: splice.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scanJson } from '../../src/mcp/json-scan.js';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { spliceRewrite, spliceTarget } from '../../src/response/splice.js';

const LIMITS = { maxDepth: 64, maxNodes: 100_000 };
const OPTS = { maxTextBytes: 4 * 1024 * 1024, maxDepth: 64, maxNodes: 100_000 };

/** Normalizes the message's result; returns the rewritten message and the spliced bytes (or undefined). */
function rewriteAndSplice(raw: string): { after: unknown; spliced: Buffer | undefined } {
  const body = Buffer.from(raw, 'utf8');
  const scan = scanJson(body, LIMITS);
  assert.ok(scan.ok && scan.members);
  const before = JSON.parse(raw) as Record<string, unknown>;
  const out = normalizeToolResult(before.result, OPTS);
  assert.ok(out.changed, 'the case must be one normalization changes');
  const after = { ...before, result: out.result };
  const target = spliceTarget(body, scan.members, 'result');
  return { after, spliced: target && spliceRewrite(body, target, 'result', before, after) };
}

test('dedupe: only the copy text changes; whitespace, key order and number spellings stay the seller bytes', () => {
  // Long enough that its summary is shorter than the copy (a shorter copy is kept as written: normalize.ts summaryShortens).
  const sc = { products: [{ id: 'p1', price: 12.50, name: 'Premium sports CTV, prime time' }], total: 1 };
  const raw = `{
  "jsonrpc": "2.0", "id": 7,
  "result": {
    "content": [ {"type": "text", "text": ${JSON.stringify(JSON.stringify(sc))}}, {"type":"text","text":"Found 1 product."} ],
    "structuredContent": {"products": [{"id": "p1", "price": 12.50, "name": "Premium sports CTV, prime time"}], "total": 1.0}
  }
}`;
  const { after, spliced } = rewriteAndSplice(raw);
  assert.ok(spliced);
  assert.deepEqual(JSON.parse(spliced.toString('utf8')), JSON.parse(JSON.stringify(after)));
  const summary = ((after as { result: { content: { text: string }[] } }).result.content[0]!).text;
  const start = raw.indexOf('"text": "') + '"text": '.length;
  const end = raw.indexOf('}"}', start) + 2;
  assert.equal(spliced.toString('utf8'), raw.slice(0, start) + JSON.stringify(summary) + raw.slice(end), 'exact bytes: the seller message with one string replaced');
  assert.match(spliced.toString('utf8'), /"price": 12\.50, "name": "Premium sports CTV, prime time"\}\], "total": 1\.0\}/, 'number spellings kept');
});

test('lift: structuredContent appended before the closing brace of result, as the seller own text, its line breaks as spaces', () => {
  const text = '{ "products": [ {"id": "p1"} ],\n "note":\r"caf\u00e9" }';
  const raw = `{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"isError":false} }`;
  const { after, spliced } = rewriteAndSplice(raw);
  assert.ok(spliced);
  const summary = ((after as { result: { content: { text: string }[] } }).result.content[0]!).text;
  assert.equal(
    spliced.toString('utf8'),
    `{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":${JSON.stringify(summary)}}],"isError":false,"structuredContent":{ "products": [ {"id": "p1"} ],  "note": "caf\u00e9" }} }`,
  );
  assert.deepEqual(JSON.parse(spliced.toString('utf8')), JSON.parse(JSON.stringify(after)));
});

test('lift of a text that is not well-formed: structuredContent is re-serialized (UTF-8 cannot carry the text)', () => {
  // The outer string's `\ud800` escape decodes to a lone code unit in the text, then the text's
  // own escape `\udc00`: JSON.parse of the text pairs them, one character, which is lifted.
  const paired = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{ \\"s\\":\\"\\ud800\\\\udc00\\"}"}]}}';
  const r = rewriteAndSplice(paired);
  assert.ok(r.spliced);
  assert.ok(r.spliced.toString('utf8').endsWith(',"structuredContent":{"s":"\u{10000}"}}}'), 'JSON.stringify form, not the text (no space)');
  assert.deepEqual(JSON.parse(r.spliced.toString('utf8')), JSON.parse(JSON.stringify(r.after)));
});

test('a text holding a lone surrogate is not lifted (lone_surrogate): neither spliced as written nor re-serialized (a hostile trial 29, M1)', () => {
  // The outer string's `\ud800` escape decodes to a lone surrogate inside the text (re-serialized, `JSON.stringify` writes `\ud800`).
  const lone = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{ \\"s\\":\\"\\ud800\\"}"}]}}';
  // Escaped once more, the text holds the six characters `\ud800` (spliced as written, the same escape).
  const escaped = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{ \\"s\\":\\"\\\\ud800\\"}"}]}}';
  for (const raw of [lone, escaped]) {
    const out = normalizeToolResult((JSON.parse(raw) as { result: unknown }).result, OPTS);
    assert.deepEqual([out.changed, out.textNotLifted], [false, 'lone_surrogate'], raw);
  }
});

test('not spliced (the caller re-serializes a lift, sends a dedupe unchanged): escaped keys; an item past the 16 the scan keeps is spliced (review 38)', () => {
  // Longer than its summary (a shorter copy is kept as written).
  const sc = JSON.stringify({ a: 1, message: 'A message long enough that its summary is shorter.' });
  const copy = JSON.stringify(sc);
  const escapedItemKey = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","t\\u0065xt":${copy}}],"structuredContent":${sc}}}`;
  assert.equal(rewriteAndSplice(escapedItemKey).spliced, undefined);
  const escapedResultKey = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":${copy}}],"structured\\u0043ontent":${sc}}}`;
  assert.equal(rewriteAndSplice(escapedResultKey).spliced, undefined);
  const items = Array.from({ length: 17 }, () => '{"type":"image","data":"eA=="}');
  items.push(`{"type":"text","text":${copy}}`);
  const late = `{"jsonrpc":"2.0","id":1,"result":{"content":[${items.join(',')}],"structuredContent":${sc}}}`;
  // Placed by a walk of the bytes (splice.ts spliceTarget): only the copy's string changes.
  const lateOut = rewriteAndSplice(late);
  assert.ok(lateOut.spliced, 'a change past the first 16 items is spliced');
  const summary = (lateOut.after as { result: { content: { text: string }[] } }).result.content[17]!.text;
  assert.equal(lateOut.spliced.toString('utf8'), late.replace(`"text":${copy}`, `"text":${JSON.stringify(summary)}`));
  const early = `{"jsonrpc":"2.0","id":1,"result":{"content":[${[...items].reverse().join(',')}],"structuredContent":${sc}}}`;
  assert.ok(rewriteAndSplice(early).spliced, 'a change within the first 16 items is spliced');
});
