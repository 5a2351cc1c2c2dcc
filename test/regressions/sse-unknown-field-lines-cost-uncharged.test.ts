/**
 * Regression (hostile trial 52, F2, Medium): "junk SSE lines cost ~0.6 µs each and one seller
 * stalls every agent". For every line with an unknown field name (`x\n`, 2 bytes) or a
 * `retry:` that is not a number, eventsource-parser builds a `ParseError` (an `Error`), even
 * with stack capture off: ~215-300 ns per byte, where ordinary events cost ~0.5-2 ns per byte. (a) A
 * standalone GET stream of 60 KB of `x` lines and a 1.1 KB comment per round (the comment's
 * 64x undelivered credit ahead) held `/healthz` at p50 145-913 ms for 20 s, logged `ok`;
 * (b) 8 calls answered with gzip SSE of 3.9 MiB of `x` lines (~18 KB on the wire) then a
 * valid result took 12-19 s of CPU in 20 s, within every limit, so no backoff. Also: each
 * dropped event was one prom-client increment (400k dropped `data: {}` events: 1.2 s).
 *
 * Now (src/response/sse-ignored-lines.ts): each such line counts 1,024 bytes more than its own,
 * against `max_response_bytes` on a request's stream (`sse_cumulative`) and the undelivered
 * limit on a stream without a total (`sse_undelivered`), so a flood ends after ~4,000 lines
 * at 4 MiB; and a stream's drops reach `adcp_gateway_sse_events_dropped_total` one run per chunk
 * (src/response/sse-drop-metric.ts).
 *
 * Input: a raw seller (node:http, 127.0.0.1) behind the real gateway (every agent at
 * max_response_bytes 4 MiB), read by fetch:
 * - `junkget` (GET): 5 rounds of 8,000 `x` lines and a 1,102-byte comment, then the end;
 * - `junkpost` (tools/call, gzip-coded SSE): 3.9 MiB of `x` lines, then the result;
 * - `retrypost` (tools/call): 400,000 `retry: x` lines (3.6 MB), then the result;
 * - `fewjunk` (tools/call, control): 100 `x-vendor: 1` lines, then the result;
 * - `dropget` (GET): 5,000 events `data: {}` (dropped, `get_stream_response`: no method), then the end
 *   (each but the first charged 1,024 bytes more since trial 52's leftover: 5,000 stay under the undelivered limit; sse-ignored-lines.ts
 *   SSE_DROPPED_EVENT_CHARGE_BYTES).
 * Expected (counts, no timings):
 * - `junkget`: round 1 counts 8,000 x 1,026 + 1,102 = 8,209,102 bytes, under the undelivered
 *   limit 8,454,144 (4 MiB + 4 MiB + 65,536): its comment goes out; round 2 passes the limit
 *   before its comment, wherever the seller's bytes were cut: the host gets exactly one
 *   comment, then a plain end, `resumable_end`, `sse_undelivered` (before: all 5, `ok`);
 * - `junkpost`, `retrypost`: only the error event, `sse_cumulative`, limit_bytes 4,194,304,
 *   observed_bytes past it by at most one charge (1,024; where the seller's bytes were cut);
 *   before: the result, `ok`;
 * - `fewjunk`: the result exactly, `ok`;
 * - `dropget`: the exchange line's `events_dropped` and the metric 5,000; the stage (fed 5
 *   chunks of 1,000 such events, test/unit/sse-stage-kit.ts) adds them to the metric in 5
 *   calls of 1,000 (before: 5,000 calls of one).
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { expectedErrorFrame } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { agentMetric, doneResult as result, useAgentPathStack } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { encodeSseComment } from '../../src/response/sse-encode.js';
import { runSseStage } from '../unit/sse-stage-kit.js';
import type { RpcPeek } from '../../src/exchange.js';

const MAX_RESPONSE = 4 * 1024 * 1024;
/** sse-undelivered.ts: max_response_bytes + max_sse_event_bytes (equal here) + 65,536. */
const UNDELIVERED_LIMIT = 2 * MAX_RESPONSE + 65_536;
/** sse-ignored-lines.ts SSE_IGNORED_LINE_CHARGE_BYTES. */
const CHARGE = 1024;
const ROUND_LINES = 8_000;
const ROUNDS = 5;
const COMMENT_TEXT = 'c'.repeat(1100);
const COMMENT = `:${COMMENT_TEXT}\n`;
const DROPS = 5_000;
const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };

function serve(agent: string, body: Buffer, res: ServerResponse): void {
  const id = agent.endsWith('get') ? 0 : (JSON.parse(body.toString('utf8')) as { id: number }).id;
  if (agent === 'junkpost') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    res.end(gzipSync('x\n'.repeat(Math.floor((3.9 * 1024 * 1024) / 2)) + result(id)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (agent === 'junkget') res.end(('x\n'.repeat(ROUND_LINES) + COMMENT).repeat(ROUNDS));
  else if (agent === 'retrypost') res.end('retry: x\n'.repeat(400_000) + result(id));
  else if (agent === 'fewjunk') res.end('x-vendor: 1\n'.repeat(100) + result(id));
  else res.end('data: {}\n\n'.repeat(DROPS));
}

const AGENTS = ['junkget', 'junkpost', 'retrypost', 'fewjunk', 'dropget'] as const;
const stack = useAgentPathStack(AGENTS, { max_response_bytes: MAX_RESPONSE }, (agent, _isGet, body, res) => serve(agent, body, res));

const metric = (name: string, agent: string, label = ''): Promise<number> => agentMetric(stack.gateway.baseUrl, name, agent, label);

const readGet = async (agent: string): Promise<string> => {
  const res = await fetch(stack.gateway.agentUrl(agent), { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  return withTimeout(res.text(), 10_000, `the ${agent} stream`);
};
const exchangeLineOf = (agent: string): Promise<Record<string, unknown>> => stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent);

/** A request's stream flooded with ignored lines: only the sse_cumulative error, past the bound by one charge at most. */
async function assertCumulativeError(agent: string, id: number): Promise<void> {
  const res = await withTimeout(rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products')), 10_000, `the ${agent} call`);
  assert.equal(res.status, 200);
  const observed = Number(/"observed_bytes":(\d+)/.exec(res.text())?.[1] ?? NaN);
  assert.ok(observed > MAX_RESPONSE && observed <= MAX_RESPONSE + CHARGE, `${agent}: observed_bytes ${observed}: ${res.text().slice(0, 300)}`);
  assert.equal(res.text(), expectedErrorFrame({ id, method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: MAX_RESPONSE, observedBytes: observed }));
  assert.equal((await stack.gateway.exchangeLine(agent, id)).reason, 'sse_cumulative');
}

describe('lines the SSE parser ignores are charged; drops reach the metric per chunk', () => {
  test('standalone GET: x lines with a comment per round end sse_undelivered in round 2, one comment delivered', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.ok(ROUND_LINES * (2 + CHARGE) + COMMENT.length <= UNDELIVERED_LIMIT, 'round 1 fits');
    const text = await readGet('junkget');
    assert.equal(text, encodeSseComment(COMMENT_TEXT));
    const line = await exchangeLineOf('junkget');
    assert.deepEqual([line.outcome, line.reason], ['resumable_end', 'sse_undelivered']);
  });

  test('tools/call: gzip-coded x lines end sse_cumulative, the result never reached', { timeout: TEST_TIMEOUT_MS }, async () => {
    await assertCumulativeError('junkpost', 11);
  });

  test('tools/call: invalid retry: lines end sse_cumulative too', { timeout: TEST_TIMEOUT_MS }, async () => {
    await assertCumulativeError('retrypost', 12);
  });

  test('control: a few unknown-field lines cost nothing visible: the result, ok', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('fewjunk'), toolCall(13, 'get_products')), 10_000, 'the fewjunk call');
    assert.equal(res.text(), result(13));
    assert.equal((await stack.gateway.exchangeLine('fewjunk', 13)).outcome, 'ok');
  });

  test('standalone GET: 5,000 dropped events reach the metric exactly', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.equal(await readGet('dropget'), '');
    const line = await exchangeLineOf('dropget');
    assert.deepEqual(line.events_dropped, { get_stream_response: DROPS });
    assert.equal(await metric('adcp_gateway_sse_events_dropped_total', 'dropget', 'reason="get_stream_response"'), DROPS);
  });

  test('the stage adds its drops to the metric once per chunk: 5 chunks of 1,000 dropped events, 5 additions of 1,000', async () => {
    const chunk = 'data: {}\n\n'.repeat(1000);
    const run = await runSseStage(Array.from({ length: 5 }, () => chunk), { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${MAX_RESPONSE}`] });
    assert.equal(run.body, '');
    assert.deepEqual(run.dropRuns, Array.from({ length: 5 }, () => ['get_stream_response', 1000]));
    assert.equal(run.drops.length, DROPS);
  });
});
