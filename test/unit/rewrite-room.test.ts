/**
 * rewrite-room.ts: which limit a rewritten SSE response event would go over
 * (eventRewriteOverBound), and what a skipped rewrite records on the exchange
 * (recordLiftSkippedForRoom: the exchange line's `text_not_lifted`). Reported failures:
 * test/regressions/lift-grows-past-limit.test.ts (the lift took answers over the limit),
 * test/regressions/lift-skipped-for-room-silent.test.ts (the skipped lift was not reported).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { ByteBudget } from '../../src/response/byte-budget.js';
import { eventRewriteOverBound, recordLiftSkippedForRoom } from '../../src/response/rewrite-room.js';

const budget = (limit: number, used: number): ByteBudget => new ByteBudget(limit, 'sse_cumulative', used);

test('eventRewriteOverBound: undefined when the rewrite is no longer or fits; else the limit it breaks, the stream\'s first', () => {
  // No longer than the seller's data: fits whatever the bounds.
  assert.equal(eventRewriteOverBound(100, 100, 50, budget(10, 500), 0), undefined);
  assert.equal(eventRewriteOverBound(90, 100, 50, budget(10, 500), 0), undefined);
  // Grows within both: the count reaching the limit exactly fits.
  assert.equal(eventRewriteOverBound(120, 100, 120, budget(1000, 980), 0), undefined);
  // The stream's count over its limit (the LF still to come counted).
  assert.equal(eventRewriteOverBound(120, 100, 120, budget(1000, 981), 0), 'max_response_bytes');
  assert.equal(eventRewriteOverBound(120, 100, 120, budget(1000, 980), 1), 'max_response_bytes');
  // The data over the per-event bound, the stream with room.
  assert.equal(eventRewriteOverBound(121, 100, 120, budget(1000, 500), 0), 'max_sse_event_bytes');
  // Both: the stream's bound is named (an unset event bound is the response limit).
  assert.equal(eventRewriteOverBound(121, 100, 120, budget(1000, 1000), 0), 'max_response_bytes');
  // No cumulative bound (the standalone GET stream): the event bound alone.
  assert.equal(eventRewriteOverBound(121, 100, 120, undefined, 0), 'max_sse_event_bytes');
  assert.equal(eventRewriteOverBound(120, 100, 120, undefined, 0), undefined);
});

test('recordLiftSkippedForRoom: a lift records the limit; any other action nothing', () => {
  const exchange = { textNotLifted: undefined } as unknown as Exchange;
  recordLiftSkippedForRoom(exchange, 'deduped', 'max_response_bytes');
  recordLiftSkippedForRoom(exchange, 'none', 'max_response_bytes');
  assert.equal(exchange.textNotLifted, undefined);
  recordLiftSkippedForRoom(exchange, 'lifted', 'max_sse_event_bytes');
  assert.equal(exchange.textNotLifted, 'max_sse_event_bytes');
});
