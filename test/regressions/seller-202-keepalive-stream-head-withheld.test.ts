/**
 * Regression (review of hostile trial 59 F1's fix, Medium): that fix deferred the host's 200
 * head for a seller's 202 SSE answer to the stream's first event (comments held with it), so
 * that an empty 202 could still be answered `upstream_not_mcp` as JSON. A seller that answers
 * a long tool 202 with keep-alive comments until its response then gave the host no head at
 * all until the response (or `sse_idle_timeout_ms`, or `sse_deadline_ms`: 1 h by default), and
 * Node's fetch (undici, the MCP SDK client's) gives up after 300 s without a head: a call that
 * worked before the fix failed.
 *
 * Now the head waits only for the body's first byte or its end, at most 1,000 ms
 * (sse-host-writer.ts ACCEPTED_HEAD_WAIT_MS): the first comment sends it, with the comment; a
 * seller silent for longer gets it sent alone after those 1,000 ms.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway, answering `tools/call`
 * `<status>_pings` with `text/event-stream`: a comment every 100 ms, 15 of them, then the
 * response; `<status>_silent` with no byte until the test has seen the host's head (5 s at
 * most), then the response; a raw host (fetch).
 * Expectation: for the 202, the host's head (200) arrives before the seller sent its response
 * (no timing: the seller records when it sends it); the host gets the same bytes as for the
 * same stream sent 200 (the 15 comments, as the gateway writes them, then the response), exchange line `ok`, one warning
 * and one count of `adcp_gateway_seller_202_answers_total`; the same for the silent one. Before
 * the fix: the head came with the response (after the seller sent it: the silent one's after
 * its 5 s).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall } from '../helpers/raw.js';
import { agentMetric } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { SELLER_202_ANSWER_MSG } from '../../src/response/accepted-answer.js';

const RESULT = { content: [{ type: 'text', text: 'done' }] };
const SSE = 'text/event-stream';
const PINGS = 15;
const PING = ': ping\n\n';

/** Ids whose response the seller has started to write. */
const responseSent = new Set<number>();
/** `_silent` answers waiting for the test: id -> send the response now. */
const releases = new Map<number, () => void>();

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
  if (msg.id === undefined) return void res.writeHead(202).end();
  const id = msg.id;
  const name = msg.params?.name ?? '';
  res.writeHead(Number(name.slice(0, 3)), { 'content-type': SSE });
  res.flushHeaders();
  if (name.endsWith('_silent')) {
    // No byte until the test releases it (once the host has its head), or 5 s at most.
    const release = (): void => {
      clearTimeout(fallback);
      releases.delete(id);
      if (res.destroyed || responseSent.has(id)) return;
      responseSent.add(id);
      res.end(`data: ${toolResponse(id, RESULT)}\n\n`);
    };
    const fallback = setTimeout(release, 5_000);
    releases.set(id, release);
    return;
  }
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return void clearInterval(timer);
    if (++sent <= PINGS) return void res.write(PING);
    clearInterval(timer);
    responseSent.add(id);
    res.end(`data: ${toolResponse(id, RESULT)}\n\n`);
  }, 100);
  res.on('close', () => clearInterval(timer));
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);
const gw = (): ObservedGateway => stack.gateway;

async function call(id: number, name: string): Promise<{ status: number; sentAtHead: boolean; text: string; outcome: unknown; warnings: number; counted: number }> {
  const from = gw().lines.length;
  const before = await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's');
  const res = await withTimeout(
    fetch(gw().agentUrl('s'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: `application/json, ${SSE}`, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(toolCall(id, name)),
    }),
    10_000,
    'answer head',
  );
  const sentAtHead = responseSent.has(id);
  releases.get(id)?.();
  const text = await withTimeout(res.text(), 10_000, 'answer body');
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && gw().lines.indexOf(l) >= from);
  const warnings = gw().lines.slice(from).filter((l) => l.msg === SELLER_202_ANSWER_MSG).length;
  const counted = (await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's')) - before;
  return { status: res.status, sentAtHead, text, outcome: line.outcome, warnings, counted };
}

describe('seller-202-keepalive-stream-head-withheld', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a 202 SSE answer of keep-alive comments then the response: the host gets its 200 head before the response, and the comments, as for the same stream sent 200', async () => {
    const ok = await call(1, '200_pings');
    const accepted = await call(2, '202_pings');
    // The comments reach the host (as the gateway writes them), then the response.
    assert.equal(ok.text.match(/^: ping$/gm)?.length, PINGS);
    assert.ok(ok.text.endsWith(`data: ${toolResponse(1, RESULT)}\n\n`));
    assert.deepEqual(accepted, { status: 200, sentAtHead: false, text: ok.text.replace('"id":1', '"id":2'), outcome: 'ok', warnings: 1, counted: 1 });
  });

  test('a 202 SSE answer silent before its response: the host gets its 200 head (1,000 ms after the stage starts) before the response, then the same bytes as sent 200', async () => {
    const ok = await call(3, '200_silent');
    const accepted = await call(4, '202_silent');
    assert.equal(ok.text, `data: ${toolResponse(3, RESULT)}\n\n`);
    assert.deepEqual(accepted, { status: 200, sentAtHead: false, text: `data: ${toolResponse(4, RESULT)}\n\n`, outcome: 'ok', warnings: 1, counted: 1 });
  });
});
