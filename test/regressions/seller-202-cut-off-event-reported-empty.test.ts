/**
 * Regression (review of hostile trial 59 F1's fix, Low): that fix counted a seller's 202 SSE
 * answer as an "empty 202" (the gateway's JSON `upstream_not_mcp` for its id, no warning, not
 * counted) whenever no frame had reached the host when the seller ended it. So a 202 whose
 * response event was cut off (`data: {...}\n` and then a clean end: never dispatched, WHATWG
 * HTML §9.2.6) got `upstream_not_mcp` where the same bytes sent 200 got `upstream_reset`; the
 * same for a priming `data: {}` event, a kindless event (dropped, `message_without_kind`) and a
 * `retry:` line alone.
 *
 * Now an empty 202 is a body with no byte at all (after decoding); any other 202 SSE body is
 * handled as the same body sent 200, on a 200 (sse-host-writer.ts, Deferred head).
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway, answering `tools/call`
 * `<status>_<case>` with `text/event-stream` and the case's bytes, then a clean end; a raw host
 * (fetch).
 * Expectation: for each case the 202 answer reaches the host as the same answer sent 200 does:
 * status 200, the same Content-Type and bytes (the error event for the request's id), the same
 * exchange outcome and reason (`upstream_reset` for the cut-off response), `upstream_status`
 * 202; the 202 warned and counted once (`adcp_gateway_seller_202_answers_total`). Before the
 * fix: 4 of the 4 cases were JSON `upstream_not_mcp`, not warned, not counted.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall } from '../helpers/raw.js';
import { agentMetric } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { SELLER_202_ANSWER_MSG } from '../../src/response/accepted-answer.js';

const SSE = 'text/event-stream';
const RESULT = { content: [{ type: 'text', text: 'ok' }] };

/** Case -> the body for the request `id` (then a clean end). */
const CASES: Readonly<Record<string, (id: number) => string>> = {
  cut_off_response: (id) => `data: ${toolResponse(id, RESULT)}\n`,
  priming_event: () => 'data: {}\n\n',
  kindless_event: () => 'data: {"jsonrpc":"2.0"}\n\n',
  retry_only: () => 'retry: 5000\n\n',
};

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
  if (msg.id === undefined) return void res.writeHead(202).end();
  const name = msg.params?.name ?? '';
  res.writeHead(Number(name.slice(0, 3)), { 'content-type': SSE }).end(CASES[name.slice(4)]!(msg.id));
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);
const gw = (): ObservedGateway => stack.gateway;

interface Seen {
  status: number;
  type: string | null;
  text: string;
  line: LogLine;
  warnings: number;
  counted: number;
}

async function post(id: number, name: string): Promise<Seen> {
  const from = gw().lines.length;
  const before = await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's');
  const res = await fetch(gw().agentUrl('s'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: `application/json, ${SSE}`, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify(toolCall(id, name)),
  });
  const text = await withTimeout(res.text(), 5_000, 'answer body');
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && gw().lines.indexOf(l) >= from);
  const warnings = gw().lines.slice(from).filter((l) => l.msg === SELLER_202_ANSWER_MSG).length;
  const counted = (await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's')) - before;
  return { status: res.status, type: res.headers.get('content-type'), text, line, warnings, counted };
}

describe('seller-202-cut-off-event-reported-empty', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 10;
  for (const name of Object.keys(CASES)) {
    test(`a 202 SSE body with bytes and no response (${name}) is answered as the same body sent 200, warned and counted once`, async () => {
      // The same id both times: the host's bytes are comparable as they are.
      const ok = await post(++id, `200_${name}`);
      const accepted = await post(id, `202_${name}`);
      const shape = (s: Seen, toolName: string): unknown => ({
        status: s.status,
        type: s.type,
        text: s.text.replaceAll(toolName, '<tool>'),
        outcome: s.line.outcome,
        reason: s.line.reason,
      });
      assert.deepEqual(shape(accepted, `202_${name}`), shape(ok, `200_${name}`));
      assert.deepEqual(
        { upstream: accepted.line.upstream_status, warnings: accepted.warnings, counted: accepted.counted, type: accepted.type },
        { upstream: 202, warnings: 1, counted: 1, type: 'text/event-stream' },
      );
      if (name === 'cut_off_response') assert.equal(ok.line.reason, 'upstream_reset');
    });
  }
});
