/**
 * Regression (hostile trial 52, F1, High): "a few standalone GET streams from one seller use up
 * the heap and crash the gateway; the per-agent max_buffered_response_bytes counts ~1/32 of the
 * real memory". A seller answered the SDK client's standalone GET with one SSE event of 4.1M
 * empty `data:` lines and no blank line (25 MB): eventsource-parser joins each line into the
 * event's data as a V8 ConsString, 32 bytes of heap per empty line, while the gateway counted
 * each line as its value and one byte. 10 streams: RSS 1.47 GB with
 * `adcp_gateway_agent_buffered_response_bytes` at 41,000,000 (under the 64 MiB cap), every
 * exchange `ok`; 8 crashed a 768 MB heap. POST streams the same (20 calls of 690k lines: 608 MB
 * RSS, ~14 MB counted).
 *
 * Now (src/response/sse-open-event.ts, sse-boundaries.ts SseLineFeeder): what the parser holds
 * for the open event counts as heap, each part of the lines handed to it that holds a `data`
 * line by its bytes and 32 bytes per empty `data` line (64 for a one-byte value, 104 per other), so an empty `data:`
 * line counts 6 + 32 = 38; and an open event whose count would pass four times the per-event
 * cap, 4 x (max_sse_event_bytes + 65,536), ends with `sse_event_memory` (a request's stream: the
 * error; the standalone GET stream: the event dropped, the stream going on).
 *
 * Input: a raw seller (node:http, 127.0.0.1) behind the real gateway (every agent at
 * max_response_bytes 4 MiB: its event cap 4,194,304 + 65,536, the memory bound 17,039,360),
 * read by fetch:
 * - `getheld` (standalone GET) and `postheld` (a tools/call): one event of 100,000 empty
 *   `data:` lines, no blank line, held open until the test releases it (then its blank line,
 *   a notification or the call's result, the end);
 * - `getover` (GET) and `postover` (tools/call): 500,000 empty `data:` lines (19,000,000 as
 *   counted), then the blank line, then a notification or the result, the end.
 * Expected:
 * 1. While held, the agent's gauge reads exactly 100,000 x 38 = 3,800,000 (before: 100,000),
 *    never more; 0 once the stream is over.
 * 2. `postover`: the host gets only the error event, `sse_event_memory`, limit_bytes 17,039,360,
 *    observed_bytes whole lines (a multiple of 38) past it by at most one socket read (64 KiB
 *    of lines: where the seller's bytes were cut); before: the event and the result, `ok`.
 * 3. `getover`: the event is dropped (`sse_event_memory`, counted once in the exchange line and
 *    `adcp_gateway_sse_events_dropped_total`), the notification after it reaches the host.
 * No memory or time is measured: the gauge is what the gateway counts; waits are hang guards.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectedErrorFrame } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { AFTER_NOTE as NOTE, doneResult as result, useHeldEventStack } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const MAX_RESPONSE = 4 * 1024 * 1024;
/** SseLineFeeder.maxOpenBytes: four times the per-event cap (max_sse_event_bytes, equal to max_response_bytes here, + 65,536). */
const MEMORY_BOUND = 4 * (MAX_RESPONSE + 65_536);
/** One empty `data:` line as counted: its 6 bytes and the parser's ConsString (EMPTY_DATA_LINE_HEAP_BYTES). */
const LINE = 6 + 32;
const HELD_LINES = 100_000;
const OVER_LINES = 500_000;
/** One socket read of the gateway (the range whose part crossed the bound), in whole lines at most. */
const READ_LINES = Math.ceil(65_536 / 6) + 1;

const lines = (n: number): string => 'data:\n'.repeat(n);

const AGENTS = ['getheld', 'postheld', 'getover', 'postover'] as const;
/** `*held`: 100,000 empty `data:` lines held open; `*over`: 500,000 and the rest at once. */
const stack = useHeldEventStack(AGENTS, { max_response_bytes: MAX_RESPONSE, accept_encoding: '[identity]' }, (agent) =>
  agent.endsWith('over') ? { lines: lines(OVER_LINES), held: false } : { lines: lines(HELD_LINES), held: true },
);

describe('an SSE event of many empty data: lines counts what the parser holds, and ends at its memory bound', () => {
  test('standalone GET: 100,000 empty data: lines held open count 3,800,000 (38 each), 0 once the stream is over', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await stack.getStream('getheld');
    try {
      await stack.gaugeReaches('getheld', HELD_LINES * LINE, true);
    } finally {
      await stack.release('getheld');
    }
    const text = await withTimeout(res.text(), 10_000, 'the getheld stream');
    assert.ok(text.endsWith(NOTE), text.slice(-200));
    assert.equal(await stack.gauge('getheld'), 0);
  });

  test('tools/call: 100,000 empty data: lines held open count 3,800,000, 0 once answered', { timeout: TEST_TIMEOUT_MS }, async () => {
    const call = rawPost(stack.gateway.agentUrl('postheld'), toolCall(7, 'get_products'));
    try {
      await stack.gaugeReaches('postheld', HELD_LINES * LINE, true);
    } finally {
      await stack.release('postheld');
    }
    const res = await withTimeout(call, 10_000, 'the postheld call');
    assert.equal(res.status, 200);
    assert.ok(res.text().endsWith(result(7)), res.text().slice(-200));
    assert.equal(await stack.gauge('postheld'), 0);
  });

  test('tools/call: 500,000 empty data: lines end with sse_event_memory at 17,039,360, nothing of the event forwarded', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('postover'), toolCall(8, 'get_products')), 10_000, 'the postover call');
    assert.equal(res.status, 200);
    const observed = Number(/"observed_bytes":(\d+)/.exec(res.text())?.[1] ?? NaN);
    assert.ok(observed > MEMORY_BOUND && observed <= MEMORY_BOUND + READ_LINES * LINE && observed % LINE === 0, `observed_bytes ${observed}: ${res.text().slice(0, 300)}`);
    const frame = expectedErrorFrame({ id: 8, method: 'tools/call', toolName: 'get_products', reason: 'sse_event_memory', limitBytes: MEMORY_BOUND, observedBytes: observed });
    assert.equal(res.text(), frame);
    const line = await stack.gateway.exchangeLine('postover', 8);
    assert.equal(line.reason, 'sse_event_memory');
    assert.equal(await stack.gauge('postover'), 0);
  });

  test('standalone GET: the event of 500,000 empty data: lines is dropped (sse_event_memory), the notification after it goes out', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await stack.getStream('getover');
    const text = await withTimeout(res.text(), 10_000, 'the getover stream');
    assert.equal(text, NOTE);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'getover');
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'sse_event_memory', { sse_event_memory: 1 }]);
    assert.equal(await stack.metric('adcp_gateway_sse_events_dropped_total', 'getover', 'reason="sse_event_memory"'), 1);
    assert.equal(await stack.gauge('getover'), 0);
  });
});
