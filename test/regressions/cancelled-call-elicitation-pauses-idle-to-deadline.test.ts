/**
 * Regression (hostile trial 59, F2, Low-Medium): a `tools/call` whose SSE stream carried the
 * seller's `elicitation/create` (a request to the host, unanswered); the host then cancelled the
 * call (`notifications/cancelled`, the seller answering 202) and the seller ignored the
 * cancellation and went silent. The pending elicitation kept the stream's idle clock paused
 * (routing/host-answer-waits.ts), so the stream stayed open to `sse_deadline_ms` (1 h by
 * default) and was logged `cancelled` / `sse_deadline`; without the elicitation it ended at
 * `sse_idle_timeout_ms`. The host will not answer a request made for a call it cancelled: once
 * the cancellation is accepted, the call's stream no longer waits for it.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway (`sse_idle_timeout_ms`
 * 400, `sse_deadline_ms` 4000); its `tools/call` stream writes an `elicitation/create` (or, the
 * control, a progress notification) and then nothing, held open; a raw host (fetch) in a
 * session reads the first event, POSTs `notifications/cancelled` for the call, reads the rest.
 * Expectation: the call's exchange line `cancelled` with reason `sse_idle` (the error not
 * minted, the stream ended plainly) in both cases; the cancellation answered 202.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ELICIT = JSON.stringify({ jsonrpc: '2.0', id: 'el-1', method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } });
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });

type Msg = { id?: unknown; method?: string; params?: { name?: string } };

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const msg = JSON.parse(req.body.toString('utf8')) as Msg;
  if (msg.id === undefined || msg.method === undefined) return void res.writeHead(202).end();
  // The call's stream: one event, then silence (the cancellation ignored), held at most 10 s.
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`event: message\ndata: ${msg.params?.name === 'elicit' ? ELICIT : PROGRESS}\n\n`);
  const t = setTimeout(() => res.end(), 10_000);
  res.on('close', () => clearTimeout(t));
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 400, sse_deadline_ms: 4000 } })),
);
const gw = (): ObservedGateway => stack.gateway;

async function cancelledCall(tool: string, session: string): Promise<{ cancelStatus: number; outcome: unknown; reason: unknown }> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': session };
  const from = gw().lines.length;
  const res = await fetch(gw().agentUrl('s'), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: tool, arguments: {} } }) });
  const reader = res.body!.getReader();
  const first = await withTimeout(reader.read(), 5_000, 'first event');
  assert.match(Buffer.from(first.value ?? []).toString('utf8'), /^event: message\ndata: /);
  const cancel = await fetch(gw().agentUrl('s'), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'user' } }) });
  await cancel.arrayBuffer();
  // The rest of the stream, to its end (bounded by the gateway's deadline: 4 s).
  for (let i = 0; i < 100; i++) if ((await withTimeout(reader.read(), 8_000, 'stream end')).done) break;
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call' && gw().lines.indexOf(l) >= from, 8_000);
  return { cancelStatus: cancel.status, outcome: line.outcome, reason: line.reason };
}

describe('cancelled-call-elicitation-pauses-idle-to-deadline', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: a cancelled call whose seller goes silent ends at sse_idle', async () => {
    assert.deepEqual(await cancelledCall('progress', 'sess-control'), { cancelStatus: 202, outcome: 'cancelled', reason: 'sse_idle' });
  });

  test('a cancelled call whose stream carries an unanswered elicitation/create ends at sse_idle, not sse_deadline', async () => {
    assert.deepEqual(await cancelledCall('elicit', 'sess-elicit'), { cancelStatus: 202, outcome: 'cancelled', reason: 'sse_idle' });
  });
});
