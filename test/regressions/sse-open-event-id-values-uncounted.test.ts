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
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { toolResponse } from '../support/raw-seller.js';
import { expectedErrorFrame } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { agentMetric, bufferedGauge, gaugeReaches as reachesGauge, openGetStream, releaseHeld, useAgentPathStack } from '../helpers/agent-metrics.js';
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

const NOTE = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}\n\n';
const result = (id: number): string => `data: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`;

/** Releases for the held streams, by agent. */
const held = new Map<string, () => void>();

async function serve(agent: string, isGet: boolean, body: Buffer, res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const tail = isGet ? NOTE : result((JSON.parse(body.toString('utf8')) as { id: number }).id);
  if (agent === 'postover' || agent === 'getover') {
    res.end('data:\n'.repeat(DATA_LINES) + (agent === 'postover' ? EVENT_LINE : ID_LINE) + '\n' + tail);
    return;
  }
  res.write(EVENT_LINE + EVENT_LINE_2 + ID_LINE);
  await new Promise<void>((release) => held.set(agent, release));
  res.end('\n' + tail);
}

const AGENTS = ['getheld', 'getover', 'postover'] as const;
const stack = useAgentPathStack(AGENTS, { max_response_bytes: MAX_RESPONSE, accept_encoding: '[identity]' }, serve);

const metric = (name: string, agent: string, label = ''): Promise<number> => agentMetric(stack.gateway.baseUrl, name, agent, label);

const gaugeReaches = (agent: string, want: number): Promise<void> => reachesGauge(stack.gateway.baseUrl, agent, want);

const release = (agent: string): Promise<void> => releaseHeld(held, agent);

const getStream = (agent: string): Promise<Response> => openGetStream(stack.gateway.agentUrl(agent));

describe("an open SSE event's event: and id: values count as its memory", () => {
  test('standalone GET: two 1 MiB event: lines and a 1 MiB id: line held open count the last event: line and the id: line, 2,097,165; 0 once over', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await getStream('getheld');
    try {
      await gaugeReaches('getheld', EVENT_LINE_2.length + ID_LINE.length);
    } finally {
      await release('getheld');
    }
    const text = await withTimeout(res.text(), 10_000, 'the getheld stream');
    assert.equal(text, NOTE);
    assert.equal(await bufferedGauge(stack.gateway.baseUrl, 'getheld'), 0);
  });

  test('tools/call: 421,000 empty data: lines then a 1 MiB event: line end with sse_event_memory, observed the data lines and that line', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(DATA_COUNT <= MEMORY_BOUND && DATA_COUNT + EVENT_LINE.length > MEMORY_BOUND);
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('postover'), toolCall(8, 'get_products')), 10_000, 'the postover call');
    assert.equal(res.status, 200);
    const frame = expectedErrorFrame({ id: 8, method: 'tools/call', toolName: 'get_products', reason: 'sse_event_memory', limitBytes: MEMORY_BOUND, observedBytes: DATA_COUNT + EVENT_LINE.length });
    assert.equal(res.text(), frame);
    const line = await stack.gateway.exchangeLine('postover', 8);
    assert.equal(line.reason, 'sse_event_memory');
    assert.equal(await bufferedGauge(stack.gateway.baseUrl, 'postover'), 0);
  });

  test('standalone GET: 421,000 empty data: lines then a 1 MiB id: line: the event is dropped (sse_event_memory), the notification after it goes out', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(DATA_COUNT + ID_LINE.length > MEMORY_BOUND);
    const res = await getStream('getover');
    const text = await withTimeout(res.text(), 10_000, 'the getover stream');
    assert.equal(text, NOTE);
    const dropped = await stack.gateway.waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.agent === 'getover');
    assert.deepEqual([dropped.reason, dropped.observed_bytes], ['sse_event_memory', DATA_COUNT + ID_LINE.length]);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'getover');
    assert.deepEqual([line.outcome, line.reason, line.events_dropped], ['ok', 'sse_event_memory', { sse_event_memory: 1 }]);
    assert.equal(await metric('adcp_gateway_sse_events_dropped_total', 'getover', 'reason="sse_event_memory"'), 1);
    assert.equal(await bufferedGauge(stack.gateway.baseUrl, 'getover'), 0);
  });
});
