/**
 * Regression (a re-read of hostile trial 52's fix, 2026-12-06): the memory bound of an open
 * SSE event (SseLineFeeder.maxOpenBytes, src/response/sse-boundaries.ts) was twice the line
 * cap, 2 x (max_sse_event_bytes + 65,536), and ended honest events whose data was under
 * max_sse_event_bytes but came in many lines, each line counted as its bytes (twice when not
 * ASCII) + 104 for the parser's strings: at the default 4 MiB an event of 41,000 lines of 100
 * ASCII bytes (4.1 MB of data; 8,651,000 as counted) or of 1,500 lines of CJK text (4.19 MB;
 * each byte counted twice) got `sse_event_memory`. Now the bound is four times the line cap
 * (OPEN_EVENT_MEMORY_FACTOR): both pass whole, and the count is 0 at the event's blank line.
 * Input: the events fed to the real line feeder in 64 KiB chunks, as the stage reads them.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { OPEN_EVENT_MEMORY_FACTOR, SseLineFeeder } from '../../src/response/sse-boundaries.js';

/** The line cap the stage gives the feeder at the default 4 MiB: max_sse_event_bytes + 65,536. */
const LINE_CAP = 4 * 1024 * 1024 + 65_536;
const CHUNK = 64 * 1024;

/** Feeds `event` in 64 KiB chunks; what the sink got, the breach, and the count after the event. */
function feed(event: Buffer): { handed: number; breach: string | undefined; pushedAll: boolean; countAfter: number } {
  let handed = 0;
  const f = new SseLineFeeder((t) => (handed += Buffer.byteLength(t, 'utf8')), LINE_CAP);
  let pushedAll = true;
  for (let at = 0; at < event.length; at += CHUNK) pushedAll &&= f.push(event, at, Math.min(event.length, at + CHUNK));
  return { handed, breach: f.breach, pushedAll, countAfter: f.openDataBytes };
}

test('the bound is four times the line cap', () => {
  assert.equal(OPEN_EVENT_MEMORY_FACTOR, 4);
  assert.equal(new SseLineFeeder(() => {}, LINE_CAP).maxOpenBytes, 4 * LINE_CAP);
});

test('41,000 data lines of 100 ASCII bytes (4.1 MB, under max_sse_event_bytes): handed whole, no breach (was sse_event_memory)', () => {
  const event = Buffer.from(`${`data: ${'x'.repeat(100)}\n`.repeat(41_000)}\n`, 'latin1');
  assert.ok(41_000 * 100 < 4 * 1024 * 1024);
  assert.deepEqual(feed(event), { handed: event.length, breach: undefined, pushedAll: true, countAfter: 0 });
});

test('1,500 data lines of CJK text (4.19 MB, under max_sse_event_bytes): handed whole, no breach (was sse_event_memory)', () => {
  const line = `data: ${'漢'.repeat(930)}\n`;
  const event = Buffer.from(`${line.repeat(1_500)}\n`, 'utf8');
  assert.ok(1_500 * 930 * 3 < 4 * 1024 * 1024);
  assert.deepEqual(feed(event), { handed: event.length, breach: undefined, pushedAll: true, countAfter: 0 });
});
