/**
 * rewrite-room.ts: which limit a rewritten SSE response event would go over
 * (eventRewriteOverBound), and what a skipped rewrite records on the exchange
 * (recordLiftSkippedForRoom: the exchange line's `text_not_lifted`). Reported failures:
 * test/regressions/lift-grows-past-limit.test.ts (the lift took answers over the limit),
 * test/regressions/sse-lift-newlines-exceed-max-response-bytes.test.ts (its `data:` lines were not counted),
 * test/regressions/lift-skipped-for-room-silent.test.ts (the skipped lift was not reported);
 * liftOverJsonBound and the counts it reads: test/regressions/lift-exceeds-json-depth-and-nodes.test.ts
 * (the lifted message went over max_json_depth and max_json_nodes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { ByteBudget } from '../../src/response/byte-budget.js';
import { LIFT_LEVELS, eventRewriteAddedBytes, eventRewriteOverBound, liftOverJsonBound, recordLiftSkippedForRoom } from '../../src/response/rewrite-room.js';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { judgeStringText } from '../../src/mcp/lift-text.js';
import { scanJson } from '../../src/mcp/json-scan.js';

const budget = (limit: number, used: number): ByteBudget => new ByteBudget(limit, 'sse_cumulative', used);
/** Data of `bytes` in one `data:` line. */
const one = (bytes: number) => ({ bytes, lines: 1 });

test('eventRewriteOverBound: undefined when the rewrite is no longer or fits; else the limit it breaks, the stream\'s first', () => {
  // No longer than the seller's data: fits whatever the bounds.
  assert.equal(eventRewriteOverBound(one(100), one(100), 50, budget(10, 500), 0), undefined);
  assert.equal(eventRewriteOverBound(one(90), one(100), 50, budget(10, 500), 0), undefined);
  // Grows within both: the count reaching the limit exactly fits.
  assert.equal(eventRewriteOverBound(one(120), one(100), 120, budget(1000, 980), 0), undefined);
  // The stream's count over its limit (the LF still to come counted).
  assert.equal(eventRewriteOverBound(one(120), one(100), 120, budget(1000, 981), 0), 'max_response_bytes');
  assert.equal(eventRewriteOverBound(one(120), one(100), 120, budget(1000, 980), 1), 'max_response_bytes');
  // The data over the per-event bound, the stream with room.
  assert.equal(eventRewriteOverBound(one(121), one(100), 120, budget(1000, 500), 0), 'max_sse_event_bytes');
  // Both: the stream's bound is named (an unset event bound is the response limit).
  assert.equal(eventRewriteOverBound(one(121), one(100), 120, budget(1000, 1000), 0), 'max_response_bytes');
  // No cumulative bound (the standalone GET stream): the event bound alone.
  assert.equal(eventRewriteOverBound(one(121), one(100), 120, undefined, 0), 'max_sse_event_bytes');
  assert.equal(eventRewriteOverBound(one(120), one(100), 120, undefined, 0), undefined);
});

test('eventRewriteOverBound charges the framing: each data line more is 6 bytes (`data: `) on the host\'s stream (a read-only review, M1)', () => {
  const data = (bytes: number, lines: number) => ({ bytes, lines });
  // The review's lift: data 100,027 bytes shorter but 100,000 lines more (600,000 bytes of `data: `).
  assert.equal(eventRewriteOverBound(data(100_083, 100_001), data(200_110, 1), 400_000, budget(300_000, 200_130), 0), 'max_response_bytes');
  assert.equal(eventRewriteAddedBytes(data(100_083, 100_001), data(200_110, 1)), 499_973);
  // Fewer lines make room for longer data; more lines take it.
  assert.equal(eventRewriteAddedBytes(data(120, 1), data(100, 4)), 2);
  assert.equal(eventRewriteOverBound(data(120, 1), data(100, 4), 120, budget(1000, 998), 0), undefined);
  assert.equal(eventRewriteOverBound(data(120, 1), data(100, 4), 120, budget(1000, 999), 0), 'max_response_bytes');
  assert.equal(eventRewriteOverBound(data(118, 1), data(100, 4), 120, budget(1000, 1000), 0), undefined);
  assert.equal(eventRewriteOverBound(data(100, 2), data(100, 1), 100, budget(1000, 995), 0), 'max_response_bytes');
  assert.equal(eventRewriteOverBound(data(100, 2), data(100, 1), 100, budget(1000, 994), 0), undefined);
  // The per-event bound is on the data alone.
  assert.equal(eventRewriteOverBound(data(121, 1), data(100, 9), 120, budget(1000, 0), 0), 'max_sse_event_bytes');
  assert.equal(eventRewriteOverBound(data(90, 9), data(100, 1), 80, undefined, 0), undefined);
});

test('recordLiftSkippedForRoom: a lift records the limit; any other action nothing', () => {
  const exchange = { textNotLifted: undefined } as unknown as Exchange;
  recordLiftSkippedForRoom(exchange, 'deduped', 'max_response_bytes');
  recordLiftSkippedForRoom(exchange, 'none', 'max_response_bytes');
  assert.equal(exchange.textNotLifted, undefined);
  recordLiftSkippedForRoom(exchange, 'lifted', 'max_sse_event_bytes');
  assert.equal(exchange.textNotLifted, 'max_sse_event_bytes');
});

test('liftOverJsonBound: the lifted object below its place within max_json_depth, the values together within max_json_nodes; depth named first', () => {
  const limits = { max_json_depth: 10, max_json_nodes: 100 };
  assert.equal(liftOverJsonBound(LIFT_LEVELS.result, { depth: 8, nodes: 50 }, 50, limits), undefined, 'exactly at both');
  assert.equal(liftOverJsonBound(LIFT_LEVELS.result, { depth: 9, nodes: 50 }, 50, limits), 'max_json_depth');
  assert.equal(liftOverJsonBound(LIFT_LEVELS['result.result'], { depth: 8, nodes: 50 }, 50, limits), 'max_json_depth', 'a task result sits a level deeper');
  assert.equal(liftOverJsonBound(LIFT_LEVELS['result.result'], { depth: 7, nodes: 50 }, 50, limits), undefined);
  assert.equal(liftOverJsonBound(LIFT_LEVELS.result, { depth: 8, nodes: 51 }, 50, limits), 'max_json_nodes');
  assert.equal(liftOverJsonBound(LIFT_LEVELS.result, { depth: 9, nodes: 51 }, 50, limits), 'max_json_depth', 'both: depth');
  assert.equal(liftOverJsonBound(LIFT_LEVELS.result, { depth: 8, nodes: 100 }, undefined, limits), undefined, 'the message not counted: the depth alone');
});

test('the text counts the check reads are the validating scan\'s, on the scan path and on both parse-path branches (short and long texts)', () => {
  const bounds = { maxTextBytes: 1 << 22, maxDepth: 64, maxNodes: 100_000 };
  const texts = [
    '{"a":{"b":[1,2,{"c":null}]},"d":"x"}',
    ' {"a":[],"a":[[]]}',
    JSON.stringify({ status: 'completed', items: Array.from({ length: 3000 }, (_, k) => ({ k, v: [k, 'x'] })) }),
  ];
  assert.ok(texts[2]!.length >= 16 * 1024, 'a long text: the parse path scans it (extract.ts SCAN_TEXT_CHARS)');
  for (const text of texts) {
    const scan = scanJson(Buffer.from(text), { maxDepth: 64, maxNodes: 100_000 });
    assert.ok(scan.ok);
    const want = { depth: scan.depth, nodes: scan.nodes };
    const lifted = normalizeToolResult({ content: [{ type: 'text', text }] }, bounds);
    assert.equal(lifted.action, 'lifted');
    assert.deepEqual(lifted.liftedJson, want, `parse path: ${text.slice(0, 40)}`);
    const body = Buffer.from(JSON.stringify({ text }));
    const range = [body.indexOf('"', 8), body.length - 1] as const;
    const judged = judgeStringText(body, range, bounds);
    assert.ok(typeof judged === 'object');
    assert.deepEqual({ depth: judged.depth, nodes: judged.nodes }, want, `scan path: ${text.slice(0, 40)}`);
  }
});
