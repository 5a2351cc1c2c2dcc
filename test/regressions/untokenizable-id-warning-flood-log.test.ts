/**
 * Regression (a hostile new user's trial 10, F2, Medium): one warning line per SSE event whose
 * id cannot become a resume token, unthrottled. A seller answering the standalone GET stream
 * with 11-byte events (`id:\x01`, `data`, a blank line; the same with `id:é1` or an id over
 * 4096 characters) made the gateway write a 176-byte line each
 * (`SSE event id could not be turned into a resume token: forwarded without an id`): 300,000
 * of them filled the 16 MiB log buffer, that stream's own exchange line and 8 of another
 * agent's 10 were lost, and no metric counted them.
 * Now (src/response/sse-id-token-log.ts, on the drop warnings' throttle,
 * src/response/stream-warning-throttle.ts) a stream's first such id is logged at once as
 * before, the later ones are counted and logged as one summary per 10 s
 * (`SSE event ids could not be turned into resume tokens`) and one when the stream ends;
 * `adcp_gateway_sse_event_ids_not_tokenized_total{agent}` counts every one, and the exchange
 * line carries the stream's count (`event_ids_not_tokenized`).
 *
 * Input (raw seller on 127.0.0.1, a real gateway with its log captured), each in one write and
 * a clean end: (a) a GET stream of a notification, 5,000 events with id `\x01`, one with id
 * `é1`, one with a 5,000-character id, a notification; (b) a `tools/call` answered by 3,000
 * progress notifications with id `\x01`, then the response; (c) a GET stream whose last
 * block is an id-only block with id `é`; (d) control: events with ids a token can carry. Every
 * stream ends within one summary interval (10 s; each is read in well under a second), so no
 * interval summary is due: the line counts are exact and nothing depends on timing.
 * Expectation: the host gets every event, without an id; per stream exactly one first line
 * and, when more came, one end summary (`not_tokenized`: the others; `not_tokenized_total`:
 * all; `stream_ended` true); the metric grows by exactly their number; the exchange line is
 * there with `event_ids_not_tokenized` (absent when none).
 * Before: (a) 5,002 warning lines; (b) 3,000; no summary, no count on the exchange line, no metric.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const FIRST = 'SSE event id could not be turned into a resume token: ';
/** Why, on the first line (src/response/sse-id-token-log.ts tokenRefusalCause; hostile trial 55, F4). */
const UNSENDABLE = " (the seller's event id cannot be sent back in a Last-Event-ID header (printable ASCII only))";
const SUMMARY = 'SSE event ids could not be turned into resume tokens';
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'n' } });
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
const frame = (data: string, id?: string): string => `${id === undefined ? '' : `id:${id}\n`}data: ${data}\n\n`;
const FLOOD = 5_000;
const ON_CALL = 3_000;
const response = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.method === 'POST') {
        const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
        return void res.end(frame(PROGRESS, '\x01').repeat(ON_CALL) + frame(response(id)));
      }
      if (req.url.includes('idonly')) return void res.end(frame(NOTE) + 'id:é\n\n');
      if (req.url.includes('fine')) return void res.end(frame(NOTE, 'e1') + frame(NOTE, 'e2'));
      res.end(frame(NOTE) + frame(NOTE, '\x01').repeat(FLOOD) + frame(NOTE, 'é1') + frame(NOTE, 'x'.repeat(5000)) + frame(NOTE));
    }),
  (seller: RawSeller) =>
    startObservedGateway(
      agentsYaml(
        {
          flood: `${seller.url}?s=flood`,
          call: `${seller.url}?s=call`,
          idonly: `${seller.url}?s=idonly`,
          fine: `${seller.url}?s=fine`,
        },
        RESUME_YAML,
      ),
    ),
);
const gw = (): ObservedGateway => stack.gateway;
const GET_HEADERS = { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' };

async function notTokenizedMetric(agent: string): Promise<number> {
  const prefix = `adcp_gateway_sse_event_ids_not_tokenized_total{agent="${agent}"}`;
  const line = (await gw().app.gateway.metrics.render()).split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The agent's exchange line, then its untokenized-id lines (all written before it), as shapes. */
async function idLines(agent: string): Promise<{ exchange: LogLine; lines: Record<string, unknown>[] }> {
  const exchange = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === agent);
  const lines = gw()
    .lines.filter((l) => l.agent === agent && typeof l.msg === 'string' && (l.msg.startsWith(FIRST) || l.msg === SUMMARY))
    .map(({ level, msg, agent: a, not_tokenized, not_tokenized_total, stream_ended }) =>
      msg === SUMMARY ? { level, msg, agent: a, not_tokenized, not_tokenized_total, stream_ended } : { level, msg, agent: a },
    );
  return { exchange, lines };
}

describe('SSE event ids that cannot become resume tokens: warnings throttled per stream, counts exact', { timeout: TEST_TIMEOUT_MS }, () => {
  test(`the standalone GET stream, ${FLOOD + 2} such ids: two lines, the metric, the exchange line's count`, async () => {
    const res = await fetch(gw().agentUrl('flood'), { headers: GET_HEADERS });
    assert.equal(res.status, 200);
    const text = await withTimeout(res.text(), 10_000, 'GET stream');
    assert.equal(text, frame(NOTE).repeat(FLOOD + 4));
    const { exchange, lines } = await idLines('flood');
    assert.deepEqual(lines, [
      { level: 40, msg: FIRST + 'forwarded without an id' + UNSENDABLE, agent: 'flood' },
      { level: 40, msg: SUMMARY, agent: 'flood', not_tokenized: FLOOD + 1, not_tokenized_total: FLOOD + 2, stream_ended: true },
    ]);
    assert.equal(await notTokenizedMetric('flood'), FLOOD + 2);
    assert.deepEqual(
      { outcome: exchange.outcome, reason: exchange.reason, bytes_to_host: exchange.bytes_to_host, event_ids_not_tokenized: exchange.event_ids_not_tokenized },
      { outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(text), event_ids_not_tokenized: FLOOD + 2 },
    );
  });

  test(`a call's stream, ${ON_CALL} progress events with such an id, then the response: two lines, the answer, ok`, async () => {
    const r = await withTimeout(rawPost(gw().agentUrl('call'), toolCall(7, 'get_products'), { 'mcp-protocol-version': '2025-06-18' }), 10_000, 'the call');
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(PROGRESS).repeat(ON_CALL) + frame(response(7)));
    const { exchange, lines } = await idLines('call');
    assert.deepEqual(lines, [
      { level: 40, msg: FIRST + 'forwarded without an id' + UNSENDABLE, agent: 'call' },
      { level: 40, msg: SUMMARY, agent: 'call', not_tokenized: ON_CALL - 1, not_tokenized_total: ON_CALL, stream_ended: true },
    ]);
    assert.equal(await notTokenizedMetric('call'), ON_CALL);
    assert.deepEqual({ outcome: exchange.outcome, event_ids_not_tokenized: exchange.event_ids_not_tokenized }, { outcome: 'ok', event_ids_not_tokenized: ON_CALL });
  });

  test('an id-only block with such an id at the stream\'s end: one line, no summary, a count of 1', async () => {
    const res = await fetch(gw().agentUrl('idonly'), { headers: GET_HEADERS });
    assert.equal(await withTimeout(res.text(), 10_000, 'GET stream'), frame(NOTE));
    const { exchange, lines } = await idLines('idonly');
    assert.deepEqual(lines, [{ level: 40, msg: FIRST + 'id-only block dropped' + UNSENDABLE, agent: 'idonly' }]);
    assert.equal(await notTokenizedMetric('idonly'), 1);
    assert.equal(exchange.event_ids_not_tokenized, 1);
  });

  test('control: ids a token can carry: tokens, no line, no count', async () => {
    const res = await fetch(gw().agentUrl('fine'), { headers: GET_HEADERS });
    const text = await withTimeout(res.text(), 10_000, 'GET stream');
    const tokens = sseIds(text);
    assert.equal(tokens.length, 2);
    for (const t of tokens) assert.match(t, RESUME_TOKEN);
    const { exchange, lines } = await idLines('fine');
    assert.deepEqual(lines, []);
    assert.equal(await notTokenizedMetric('fine'), 0);
    assert.equal(Object.hasOwn(exchange, 'event_ids_not_tokenized'), false);
  });
});
