/**
 * Regression (hostile trial 59, I3, Low): a POSTed `tools/call` pipelined (HTTP/1.1) behind
 * another answer on its connection, its body read and peeked under its agent's
 * `max_request_bytes`, was refused at its turn after a reload lowered that bound under its size
 * with 413 `request_too_large` and `id: null`, though its id had been read: the other refusals
 * of a read request (`invalid_request` over a lowered `max_json_nodes`, say) answer for its id.
 * Now it is refused for its id, 413 as before.
 *
 * Input (raw seller on 127.0.0.1): agent `p`; call 90 held by the seller, call 91 (a
 * `tools/call` of ~700 bytes) pipelined behind it on the same connection, in a session (peeked
 * as it begins to wait: routing/pipelined-wait.ts) and, the control for a body not peeked,
 * call 93 without a session; the agent's max_request_bytes lowered to 300 while each waits.
 * Expectation: 413, `{"jsonrpc":"2.0","id":91,"error":{...,"data":{"reason":"request_too_large",
 * "limit_bytes":300,"observed_bytes":<its size>}}}` (id 93 for the other); never sent.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { parseConfig } from '../../src/config/load.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { answerToolCallsHolding, toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

let held: ServerResponse | undefined;
const answer = answerToolCallsHolding((id) => id === 90 || id === 92, (res) => (held = res));
const yaml = (sellerUrl: string, maxRequestBytes: number): string => agentsYaml({ p: { url: sellerUrl, max_request_bytes: maxRequestBytes } });

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(yaml(seller.url, 100_000)),
);

function call(id: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_products', arguments: { pad: 'p'.repeat(600) } } });
}

function wire(body: string, session: boolean): string {
  return (
    `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `${session ? 'mcp-session-id: session-held-413\r\n' : ''}mcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

async function pipelined(first: number, second: number, session: boolean): Promise<{ status: number; body: string }[]> {
  held = undefined;
  const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
  try {
    conn.socket.write(wire(call(first), session) + wire(call(second), session));
    await until(`call ${first} at the seller, ${second} waiting for its turn`, () => held !== undefined && stack.gateway.app.gateway.pipelinedWaiting === 1);
    stack.gateway.app.gateway.setConfig(parseConfig(yaml(stack.seller.url, 300), { env: {} }));
    held!.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(first, { content: [{ type: 'text', text: `done ${first}` }] }));
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    return responses.map((r) => ({ status: r.status, body: r.body }));
  } finally {
    conn.socket.destroy();
    stack.gateway.app.gateway.setConfig(parseConfig(yaml(stack.seller.url, 100_000), { env: {} }));
  }
}

describe('held-request-over-lowered-limit-refused-id-null', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [first, second, session] of [[90, 91, true], [92, 93, false]] as const) {
    test(`a pipelined request ${session ? 'peeked as it waits' : 'without a session (not peeked)'} over a max_request_bytes lowered by a reload: 413 for its id`, async () => {
      const [a, b] = await pipelined(first, second, session);
      assert.match(a!.body, new RegExp(`done ${first}`));
      const error = JSON.parse(b!.body) as { id: unknown; error: { data: Record<string, unknown> } };
      assert.deepEqual(
        { status: b!.status, id: error.id, data: error.error.data },
        { status: 413, id: second, data: { reason: 'request_too_large', limit_bytes: 300, observed_bytes: Buffer.byteLength(call(second)) } },
      );
      assert.equal(toolCallIdsSent(stack.seller).includes(second), false);
    });
  }
});
