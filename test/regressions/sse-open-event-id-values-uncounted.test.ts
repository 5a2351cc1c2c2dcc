/**
 * Regression (a re-read of hostile trial 52's fix, A, Medium): the `event:` and `id:` values of
 * an SSE event block still open (no blank line yet) were counted nowhere, while its `data:`
 * lines were (src/response/sse-open-event.ts). eventsource-parser keeps the block's last
 * `event` and `id` values (a slice each of the text it was fed: the whole line's text when the
 * gateway held the line over chunk edges), and the gateway's id-only watch keeps the id too
 * (sse-id-only.ts), until the block's blank line. Each such line may reach the line cap
 * (max_sse_event_bytes + 65,536, ~4 MiB by default): 8 standalone GET streams each sending an
 * `event: <4 MiB>` and an `id: <4 MiB>` line held 113 MB with the agent's
 * `adcp_gateway_agent_buffered_response_bytes` at 0, and an event's memory bound
 * (`sse_event_memory`) never saw them.
 *
 * Now the text holding the block's last non-empty `event` value, and the one holding its last
 * non-empty `id` value, count as the open event's memory (SseLineFeeder.openDataBytes): its
 * bytes (twice when not ASCII; an id's twice again when its text holds a CR), a later
 * `event:` line replacing the former (the parser keeps one value), and against the same bound
 * as the data lines, 4 x (max_sse_event_bytes + 65,536): over it, `sse_event_memory`.
 *
 * Input: a raw seller (node:http, 127.0.0.1) behind the real gateway (every agent at
 * max_response_bytes 4 MiB: the line cap 4,259,840, the memory bound 17,039,360), read by fetch:
 * - `getheld` (standalone GET): `event: <1 MiB>`, `event: <1 MiB>`, `id: <1 MiB>`, no blank
 *   line, held until released (then a blank line, a notification, the end);
 * - `postover` (tools/call) and `getover` (GET): 421,000 empty `data:` lines (38 each as
 *   counted: 15,998,000), then one `event: <1 MiB>` line (postover) or `id: <1 MiB>` line
 *   (getover), then the blank line and the result or a notification.
 * Expected:
 * 1. `getheld`: the gauge reads exactly the last `event:` line and the `id:` line with their
 *    line breaks, 1,048,584 + 1,048,581 = 2,097,165 (before: 0); 0 once the stream is over.
 * 2. `postover`: the host gets only the error event, `sse_event_memory`, limit_bytes 17,039,360,
 *    observed_bytes 15,998,000 + 1,048,584 (before: the seller's event and the result, `ok`).
 * 3. `getover`: the event is dropped (`sse_event_memory`, observed_bytes 15,998,000 +
 *    1,048,581, once in the exchange line and the metric), the notification after it goes out.
 * No memory or time is measured: the gauge is what the gateway counts; waits are hang guards.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectedErrorFrame } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { AFTER_NOTE as NOTE, useHeldEventStack } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const MAX_RESPONSE = 4 * 1024 * 1024;
/** SseLineFeeder.maxOpenBytes: four times the line cap (max_sse_event_bytes, equal to max_response_bytes here, + 65,536). */
const MEMORY_BOUND = 4 * (MAX_RESPONSE + 65_536);
const MIB = 1024 * 1024;
/** An `event:` line of a 1 MiB value and its LF, as counted (ASCII: its bytes). */
const EVENT_LINE = `event: ${'e'.repeat(MIB)}\n`;
const EVENT_LINE_2 = `event: ${'f'.repeat(MIB)}\n`;
/** An `id:` line of a 1 MiB value and its LF. */
const ID_LINE = `id: ${'i'.repeat(MIB)}\n`;
/** Empty `data:` lines as counted: 6 bytes and 32 for the parser's ConsString each. */
const DATA_LINES = 421_000;
const DATA_COUNT = DATA_LINES * (6 + 32);

const AGENTS = ['getheld', 'getover', 'postover'] as const;
/** `getheld`: the three 1 MiB lines held open; `postover`, `getover`: the data lines and an `event:` or `id:` line, the rest at once. */
const stack = useHeldEventStack(AGENTS, { max_response_bytes: MAX_RESPONSE, accept_encoding: '[identity]' }, (agent) =>
  agent === 'postover' || agent === 'getover'
    ? { lines: 'data:\n'.repeat(DATA_LINES) + (agent === 'postover' ? EVENT_LINE : ID_LINE), held: false }
    : { lines: EVENT_LINE + EVENT_LINE_2 + ID_LINE, held: true },
);

describe("an open SSE event's event: and id: values count as its memory", () => {
  test('standalone GET: two 1 MiB event: lines and a 1 MiB id: line held open count the last event: line and the id: line, 2,097,165; 0 once over', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await stack.getStream('getheld');
    try {
      await stack.gaugeReaches('getheld', EVENT_LINE_2.length + ID_LINE.length);
    } finally {
      await stack.release('getheld');
    }
    const text = await withTimeout(res.text(), 10_000, 'the getheld stream');
    assert.equal(text, NOTE);
    assert.equal(await stack.gauge('getheld'), 0);
  });

  test('tools/call: 421,000 empty data: lines then a 1 MiB event: line end with sse_event_memory, observed the data lines and that line', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(DATA_COUNT <= MEMORY_BOUND && DATA_COUNT + EVENT_LINE.length > MEMORY_BOUND);
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('postover'), toolCall(8, 'get_products')), 10_000, 'the postover call');
    assert.equal(res.status, 200);
    const frame = expectedErrorFrame({ id: 8, method: 'tools/call', toolName: 'get_products', reason: 'sse_event_memory', limitBytes: MEMORY_BOUND, observedBytes: DATA_COUNT + EVENT_LINE.length });
    assert.equal(res.text(), frame);
    const line = await stack.gateway.exchangeLine('postover', 8);
    assert.equal(line.reason, 'sse_event_memory');
    assert.equal(await stack.gauge('postover'), 0);
  });

  test('standalone GET: 421,000 empty data: lines then a 1 MiB id: line: the event is dropped (sse_event_memory), the notification after it goes out', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(DATA_COUNT + ID_LINE.length > MEMORY_BOUND);
    const res = await stack.getStream('getover');
    const text = await withTimeout(res.text(), 10_000, 'the getover stream');
    assert.equal(text, NOTE);
    const dropped = await stack.gateway.waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.agent === 'getover');
    assert.deepEqual([dropped.reason, dropped.observed_bytes], ['sse_event_memory', DATA_COUNT + ID_LINE.length]);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'getover');
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'sse_event_memory', { sse_event_memory: 1 }]);
    assert.equal(await stack.metric('adcp_gateway_sse_events_dropped_total', 'getover', 'reason="sse_event_memory"'), 1);
    assert.equal(await stack.gauge('getover'), 0);
  });
});
