/**
 * Reported failure (code review of hostile trial 38, F1): lift-text.ts judgeStringText gave
 * `'over_bound'` (the depth or node bound) BEFORE its byte-size check, while extract.ts
 * readTextObject checks the size first. A text over both was `text_bytes` on the parse path
 * (passed over, a later text lifted) but ended the walk on the scan path, so
 * lift-splice.ts declined the answer to the parse path: the same output, more work; and the
 * judge's doc said such a text ends the walk, which it does not.
 *
 * Now json-scan.ts scanObjectText checks the decoded UTF-8 length (known once the text is
 * unescaped, before its scan) against the byte bound first, and the judge says `'skip'`.
 * In the gateway the whole message is held to `max_response_bytes`, the text's byte bound, so
 * the case needs limits a test sets (the body here is longer than its `max_response_bytes`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scanJson } from '../../src/mcp/json-scan.js';
import { judgeStringText } from '../../src/mcp/lift-text.js';
import { readTextObject } from '../../src/mcp/extract.js';
import { spliceLegacyLift } from '../../src/response/lift-splice.js';
import { exchange, parsePath } from '../helpers/tool-result-fuzz.js';

const LIMITS = { max_response_bytes: 300, max_json_depth: 8, max_json_nodes: 1000 };
const BOUNDS = { maxTextBytes: LIMITS.max_response_bytes, maxDepth: LIMITS.max_json_depth, maxNodes: LIMITS.max_json_nodes };
/** 10 levels deep (over 8) and 312 bytes (over 300). */
const OVER_BOTH = '{"a":'.repeat(9) + `{"s":"${'x'.repeat(250)}"}` + '}'.repeat(9);
/** 10 levels deep, 63 bytes: over the depth bound only. */
const OVER_DEPTH = '{"a":'.repeat(9) + '{"s":"x"}' + '}'.repeat(9);
const LIFTED = '{"ok":true}';

const stringBody = (text: string): { body: Buffer; range: readonly [number, number] } => {
  const body = Buffer.from(JSON.stringify(text));
  return { body, range: [0, body.length] };
};
const message = (texts: readonly string[]): Buffer =>
  Buffer.from(`{"jsonrpc":"2.0","id":7,"result":{"content":[${texts.map((t) => `{"type":"text","text":${JSON.stringify(t)}}`).join(',')}]}}`, 'utf8');

test('a text over the byte bound and a structure bound: the byte bound decides, on both paths', () => {
  assert.equal(Buffer.byteLength(OVER_BOTH), 312);
  assert.equal(readTextObject(OVER_BOTH, BOUNDS), 'text_bytes');
  const both = stringBody(OVER_BOTH);
  assert.equal(judgeStringText(both.body, both.range, BOUNDS), 'skip');
  // Over the depth bound only: still the end of the walk.
  assert.equal(readTextObject(OVER_DEPTH, BOUNDS), 'json_depth');
  const depth = stringBody(OVER_DEPTH);
  assert.equal(judgeStringText(depth.body, depth.range, BOUNDS), 'over_bound');
  // Exactly at the byte bound and over the depth bound: the depth bound decides.
  const at = '{"a":'.repeat(9) + `{"s":"${'x'.repeat(238)}"}` + '}'.repeat(9);
  assert.equal(Buffer.byteLength(at), 300);
  const atBody = stringBody(at);
  assert.equal(judgeStringText(atBody.body, atBody.range, BOUNDS), 'over_bound');
  assert.equal(readTextObject(at, BOUNDS), 'json_depth');
});

test('the scan path lifts the later text past a text over both bounds: the parse path bytes exactly', () => {
  const ex = exchange(LIMITS);
  const body = message([OVER_BOTH, LIFTED]);
  const scan = scanJson(body, { maxDepth: LIMITS.max_json_depth, maxNodes: LIMITS.max_json_nodes });
  assert.ok(scan.ok);
  const fast = spliceLegacyLift(ex, body, scan);
  const parsed = parsePath(exchange(LIMITS), body);
  assert.ok(parsed, 'the parse path lifts the second text');
  assert.ok(fast, 'the scan path answers (before: declined to the parse path)');
  assert.equal(fast.toString('utf8'), parsed.toString('utf8'));
  assert.equal(
    fast.toString('utf8'),
    `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":${JSON.stringify(OVER_BOTH)}},{"type":"text","text":"Result in structuredContent (11 bytes): ok."}],"structuredContent":${LIFTED}}}`,
  );
  // Control: over the depth bound only, the scan path declines and the parse path lifts nothing.
  const depthBody = message([OVER_DEPTH, LIFTED]);
  const depthScan = scanJson(depthBody, { maxDepth: LIMITS.max_json_depth, maxNodes: LIMITS.max_json_nodes });
  assert.ok(depthScan.ok);
  assert.equal(spliceLegacyLift(exchange(LIMITS), depthBody, depthScan), undefined);
  assert.equal(parsePath(exchange(LIMITS), depthBody), undefined);
});
