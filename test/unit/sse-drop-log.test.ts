/**
 * SseDropLog (response/sse-drop-log.ts): the throttled drop warnings of one stream. The
 * interval is driven by node:test's mock timers (no real waiting, no timing assertion): the
 * first drop is logged at once; later drops wait for one summary an interval after the first
 * of them; the stream's end logs the drops not yet logged, and nothing when there are none.
 * The exchange's counts (`eventsDropped`) are exact after every drop.
 * Reported failure: a new user's trial 9, F5 (one line per drop filled the log buffer:
 * test/regressions/get-stream-drop-warnings-flood-log.test.ts).
 */
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../../src/exchange.js';
import { DROP_SUMMARY_INTERVAL_MS, DROP_SUMMARY_MSG, FIRST_DROP_MSG, SseDropLog } from '../../src/response/sse-drop-log.js';

interface Line {
  msg: string;
  fields: Record<string, unknown>;
}

function setup(): { log: SseDropLog; lines: Line[]; exchange: Exchange } {
  const lines: Line[] = [];
  const logger = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ msg, fields: structuredClone(fields) }) } as unknown as FastifyBaseLogger;
  const exchange = { agent: { name: 'a' }, eventsDropped: undefined } as unknown as Exchange;
  return { log: new SseDropLog(exchange, logger), lines, exchange };
}

const summary = (dropped: Record<string, number>, total: Record<string, number>, max: number | null, ended: boolean): Line => ({
  msg: DROP_SUMMARY_MSG,
  fields: { agent: 'a', dropped, dropped_total: total, max_observed_bytes: max, stream_ended: ended },
});

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

test('one drop: its line at once, nothing at the end', () => {
  const { log, lines, exchange } = setup();
  log.drop('get_stream_response', 13);
  assert.deepEqual(lines, [{ msg: FIRST_DROP_MSG, fields: { agent: 'a', reason: 'get_stream_response', observed_bytes: 13 } }]);
  mock.timers.tick(DROP_SUMMARY_INTERVAL_MS * 3);
  log.end();
  assert.equal(lines.length, 1);
  assert.deepEqual(exchange.eventsDropped, { get_stream_response: 1 });
});

test('later drops: one summary an interval after the first of them, then the end\'s', () => {
  const { log, lines, exchange } = setup();
  log.drop('sse_event', 200);
  for (let i = 0; i < 1000; i++) log.drop('get_stream_response', 13);
  log.drop('sse_event', 300);
  assert.equal(lines.length, 1);
  assert.deepEqual(exchange.eventsDropped, { sse_event: 2, get_stream_response: 1000 });
  mock.timers.tick(DROP_SUMMARY_INTERVAL_MS - 1);
  assert.equal(lines.length, 1, 'not before the interval');
  mock.timers.tick(1);
  assert.deepEqual(lines[1], summary({ get_stream_response: 1000, sse_event: 1 }, { sse_event: 2, get_stream_response: 1000 }, 300, false));
  // Nothing pending: no timer, no line.
  mock.timers.tick(DROP_SUMMARY_INTERVAL_MS * 2);
  assert.equal(lines.length, 2);
  log.drop('sse_event', undefined);
  log.drop('sse_event', undefined);
  mock.timers.tick(DROP_SUMMARY_INTERVAL_MS / 2);
  log.end();
  assert.deepEqual(lines[2], summary({ sse_event: 2 }, { sse_event: 4, get_stream_response: 1000 }, null, true));
  // The end cleared the timer: nothing more, and a second end writes nothing.
  mock.timers.tick(DROP_SUMMARY_INTERVAL_MS * 2);
  log.end();
  assert.equal(lines.length, 3);
});

test('a steady flood: at most one summary per interval', () => {
  const { log, lines, exchange } = setup();
  log.drop('get_stream_response', 13);
  // 10 intervals, 100 drops in each tenth of an interval.
  for (let step = 0; step < 100; step++) {
    for (let i = 0; i < 100; i++) log.drop('get_stream_response', 13);
    mock.timers.tick(DROP_SUMMARY_INTERVAL_MS / 10);
  }
  log.end();
  const summaries = lines.filter((l) => l.msg === DROP_SUMMARY_MSG);
  assert.equal(summaries.length, 10, 'one per interval; the last interval\'s tick wrote it, so the end has none left');
  assert.equal(summaries.reduce((n, l) => n + (l.fields.dropped as Record<string, number>).get_stream_response!, 0), 10_000);
  assert.deepEqual(exchange.eventsDropped, { get_stream_response: 10_001 });
  assert.deepEqual(summaries.at(-1)!.fields.dropped_total, { get_stream_response: 10_001 });
});

test('quiet drops (an SDK priming event, `{}`): the same lines at debug, throttled on their own; others still warn', () => {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, msg, fields: structuredClone(fields) });
  const logger = { warn: at('warn'), debug: at('debug') } as unknown as FastifyBaseLogger;
  const exchange = { agent: { name: 'a' }, eventsDropped: undefined } as unknown as Exchange;
  const log = new SseDropLog(exchange, logger);
  log.drop('message_without_kind', 2, true);
  log.drop('message_without_kind', 2, true);
  log.drop('message_without_kind', 20);
  assert.deepEqual(lines, [
    { level: 'debug', msg: FIRST_DROP_MSG, fields: { agent: 'a', reason: 'message_without_kind', observed_bytes: 2 } },
    { level: 'warn', msg: FIRST_DROP_MSG, fields: { agent: 'a', reason: 'message_without_kind', observed_bytes: 20 } },
  ]);
  log.end();
  assert.deepEqual(lines.slice(2), [{ level: 'debug', ...summary({ message_without_kind: 1 }, { message_without_kind: 3 }, 2, true) }]);
  assert.deepEqual(exchange.eventsDropped, { message_without_kind: 3 });
});
