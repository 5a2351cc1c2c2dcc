/**
 * Regression (a new user's trial 9, F5): every event dropped from the standalone GET stream
 * wrote its own warning line, unthrottled. A seller sending 200,000 tiny responses
 * (`data: {"result":{}}`, 21 bytes each) on the GET stream made the gateway write ~186 bytes
 * of log per event (~17 MB), faster than stdout drained: the 16 MiB log buffer filled and
 * lines were lost, the stream's own `exchange` line among them; each drop cost ~45 µs.
 * Now (src/response/sse-drop-log.ts) a stream's first drop is logged at once
 * (`SSE stream: event dropped`), the later ones are counted by reason and logged
 * as one summary per 10 s (`SSE stream: events dropped`) and one when the stream
 * ends; `adcp_gateway_sse_events_dropped_total` still counts every drop, and the exchange
 * line carries the stream's counts (`events_dropped`).
 *
 * Input (raw seller on 127.0.0.1, a real gateway with its log captured): (a) a GET stream of a
 * notification, 5,000 responses (each dropped, `get_stream_response`), a notification, then
 * the seller ends it, all in one write; (b) the same with 3 events over
 * `max_sse_event_bytes` 100 (`sse_event`: 200, 300 and 250 data bytes, the first one first)
 * among 2,000 responses; (c) the SSE answer to a POSTed notification holding 3,000 responses
 * (`notification_stream_response`). Every stream ends within one summary interval (10 s;
 * the gateway reads each in a few ms), so no interval summary is due: the line counts are
 * exact and nothing depends on timing.
 * Expectation: the host gets exactly the notifications; for each stream exactly two drop
 * lines: the first drop's (its reason and observed_bytes) and the end's summary (`dropped`:
 * all the others, by reason; `dropped_total`: all of them; the largest observed_bytes among
 * those it counts; `stream_ended` true); the metric grows by exactly the number of drops; the
 * exchange line is there, outcome ok, reason the last drop's, `events_dropped` the counts.
 * Before: (a) 5,000 warning lines; (b) 2,003; (c) 3,000; no summary, no `events_dropped`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { droppedInMetrics } from '../helpers/drop-lines.js';

const FIRST = 'SSE stream: event dropped';
const SUMMARY = 'SSE stream: events dropped';
const frame = (data: string): string => `data: ${data}\n\n`;
const RESPONSE = '{"result":{}}';
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'n' } });
const big = (bytes: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(bytes - 71) } });
const FLOOD = 5_000;
const MIXED = 2_000;
const ON_NOTIFICATION = 3_000;

/** The mixed stream: an event over the bound first, then responses and two more such events. */
function mixedStream(): string {
  const parts = [frame(NOTE), frame(big(200))];
  for (let i = 0; i < MIXED; i++) {
    parts.push(frame(RESPONSE));
    if (i === 500) parts.push(frame(big(300)));
    if (i === 1500) parts.push(frame(big(250)));
  }
  parts.push(frame(NOTE));
  return parts.join('');
}

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.method === 'POST') return void res.end(frame(NOTE) + frame(RESPONSE).repeat(ON_NOTIFICATION) + frame(NOTE));
      if (req.url.includes('mixed')) return void res.end(mixedStream());
      res.end(frame(NOTE) + frame(RESPONSE).repeat(FLOOD) + frame(NOTE));
    }),
  (seller: RawSeller) =>
    startObservedGateway(
      agentsYaml({
        flood: `${seller.url}?s=flood`,
        mixed: { url: `${seller.url}?s=mixed`, max_sse_event_bytes: 100 },
        notified: `${seller.url}?s=notified`,
      }),
    ),
);
const gw = (): ObservedGateway => stack.gateway;
const GET_HEADERS = { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' };

async function droppedMetric(agent: string, reason: string): Promise<number> {
  return droppedInMetrics(await gw().app.gateway.metrics.render(), agent, reason);
}

/** The agent's drop lines, once its stream's end summary is there: [first, ...summaries]. */
async function dropLines(agent: string): Promise<LogLine[]> {
  await gw().waitForLine((l) => l.msg === SUMMARY && l.agent === agent && l.stream_ended === true);
  return gw().lines.filter((l) => (l.msg === FIRST || l.msg === SUMMARY) && l.agent === agent);
}

function shape(l: LogLine): Record<string, unknown> {
  const { level, msg, agent, reason, observed_bytes, dropped, dropped_total, max_observed_bytes, stream_ended } = l;
  return l.msg === FIRST ? { level, msg, agent, reason, observed_bytes } : { level, msg, agent, dropped, dropped_total, max_observed_bytes, stream_ended };
}

describe('events dropped from a stream that answers no request: warnings throttled per stream, counts exact', { timeout: TEST_TIMEOUT_MS }, () => {
  test(`the standalone GET stream, ${FLOOD} responses dropped: two drop lines, the metric ${FLOOD}, the exchange line with the counts`, async () => {
    const before = await droppedMetric('flood', 'get_stream_response');
    const res = await fetch(gw().agentUrl('flood'), { headers: GET_HEADERS });
    assert.equal(res.status, 200);
    const text = await withTimeout(res.text(), 10_000, 'GET stream');
    assert.equal(text, frame(NOTE) + frame(NOTE));

    assert.deepEqual((await dropLines('flood')).map(shape), [
      { level: 40, msg: FIRST, agent: 'flood', reason: 'get_stream_response', observed_bytes: RESPONSE.length },
      {
        level: 40,
        msg: SUMMARY,
        agent: 'flood',
        dropped: { get_stream_response: FLOOD - 1 },
        dropped_total: { get_stream_response: FLOOD },
        max_observed_bytes: RESPONSE.length,
        stream_ended: true,
      },
    ]);
    assert.equal(await droppedMetric('flood', 'get_stream_response'), before + FLOOD);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'flood');
    assert.deepEqual(
      { http_method: line.http_method, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, events_dropped: line.events_dropped },
      { http_method: 'GET', outcome: 'ok', reason: 'get_stream_response', bytes_to_host: Buffer.byteLength(text), events_dropped: { get_stream_response: FLOOD } },
    );
  });

  test('two reasons on one GET stream: the summary counts each', async () => {
    const res = await fetch(gw().agentUrl('mixed'), { headers: GET_HEADERS });
    assert.equal(res.status, 200);
    assert.equal(await withTimeout(res.text(), 10_000, 'GET stream'), frame(NOTE) + frame(NOTE));
    assert.deepEqual((await dropLines('mixed')).map(shape), [
      { level: 40, msg: FIRST, agent: 'mixed', reason: 'sse_event', observed_bytes: 200 },
      {
        level: 40,
        msg: SUMMARY,
        agent: 'mixed',
        dropped: { get_stream_response: MIXED, sse_event: 2 },
        dropped_total: { sse_event: 3, get_stream_response: MIXED },
        max_observed_bytes: 300,
        stream_ended: true,
      },
    ]);
    assert.equal(await droppedMetric('mixed', 'get_stream_response'), MIXED);
    assert.equal(await droppedMetric('mixed', 'sse_event'), 3);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'mixed');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, {
      outcome: 'ok',
      reason: 'get_stream_response',
      events_dropped: { sse_event: 3, get_stream_response: MIXED },
    });
  });

  test(`the SSE answer to a POSTed notification, ${ON_NOTIFICATION} responses dropped: the same two lines`, async () => {
    const r = await rawPost(gw().agentUrl('notified'), { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(NOTE) + frame(NOTE));
    assert.deepEqual((await dropLines('notified')).map(shape), [
      { level: 40, msg: FIRST, agent: 'notified', reason: 'notification_stream_response', observed_bytes: RESPONSE.length },
      {
        level: 40,
        msg: SUMMARY,
        agent: 'notified',
        dropped: { notification_stream_response: ON_NOTIFICATION - 1 },
        dropped_total: { notification_stream_response: ON_NOTIFICATION },
        max_observed_bytes: RESPONSE.length,
        stream_ended: true,
      },
    ]);
    assert.equal(await droppedMetric('notified', 'notification_stream_response'), ON_NOTIFICATION);
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'notified');
    assert.deepEqual({ outcome: line.outcome, events_dropped: line.events_dropped }, { outcome: 'ok', events_dropped: { notification_stream_response: ON_NOTIFICATION } });
  });
});
