/**
 * Regression (perf round 57): "a pipelined request is peeked twice". A POSTed request in a
 * session pipelined (HTTP/1.1) behind another answer on its connection was peeked (its body
 * decoded, its structure bounds proved, `JSON.parse`d, its member names checked) when it began
 * to wait, to register it for a host's cancellation (routing/pipelined-wait.ts `waitingEntry`), and
 * then again at its turn. The peek is now handed on (QueuedAt.peeked) and used at its turn
 * when its agent's config object is still the one in force.
 *
 * What must not change with it, asserted here: at its turn the request is judged under the
 * config in force then. A reload while it waits that lowers its agent's `max_json_nodes`
 * under what its body holds refuses it at its turn (`invalid_request`, over max_json_nodes,
 * for its id), never sending it: the peek made under the old agent is not used then. Without
 * a reload, the waiting request is forwarded at its turn as before, its id and tool as peeked.
 *
 * Input (raw seller on 127.0.0.1): agent `p`; call 70 held by the seller, call 71 (a
 * `tools/call` with ~40 JSON values) pipelined behind it on the same connection, in a session.
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

const SESSION = 'session-pipelined-peek';

/** The held answer (the call the pipelined one waits behind), released by the test. */
let held: ServerResponse | undefined;

const answer = answerToolCallsHolding((id) => id === 70 || id === 80, (res) => (held = res));

const yaml = (sellerUrl: string, maxJsonNodes: number): string => agentsYaml({ p: { url: sellerUrl, max_json_nodes: maxJsonNodes } });

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(yaml(seller.url, 1000)),
);

/** The ids of the `tools/call`s that reached the seller, in order. */
const callsSent = (): unknown[] => toolCallIdsSent(stack.seller);

/** A `tools/call` with 30 arguments: 40 JSON values in all (over 20, under 1000). */
function call(id: number): string {
  const args = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`a${i}`, i]));
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_products', arguments: args } });
}

function wire(body: string): string {
  return (
    `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Sends `first` and `second` pipelined on one connection; `meanwhile` runs while `second` waits; both answers. */
async function pipelined(first: number, second: number, meanwhile: () => void): Promise<{ status: number; body: string }[]> {
  held = undefined;
  const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
  try {
    conn.socket.write(wire(call(first)) + wire(call(second)));
    await until(`call ${first} at the seller, ${second} waiting for its turn`, () => held !== undefined && stack.gateway.app.gateway.pipelinedWaiting === 1);
    meanwhile();
    held!.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(first, { content: [{ type: 'text', text: `done ${first}` }] }));
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    return responses.map((r) => ({ status: r.status, body: r.body }));
  } finally {
    conn.socket.destroy();
  }
}

describe('pipelined-request-peeked-twice', { timeout: TEST_TIMEOUT_MS }, () => {
  test('no reload while it waits: forwarded at its turn, its id and tool as peeked', async () => {
    const [a, b] = await pipelined(70, 71, () => {});
    assert.match(a!.body, /done 70/);
    assert.equal(b!.status, 200);
    assert.match(b!.body, /done 71/);
    assert.deepEqual(callsSent(), [70, 71]);
    const line = await stack.gateway.exchangeLine('p', 71);
    assert.deepEqual([line.outcome, line.tool], ['ok', 'get_products']);
  });

  test('a reload while it waits lowers max_json_nodes under its body: refused at its turn under the new bound, never sent', async () => {
    const [a, b] = await pipelined(80, 81, () => stack.gateway.app.gateway.setConfig(parseConfig(yaml(stack.seller.url, 20), { env: {} })));
    assert.match(a!.body, /done 80/);
    assert.equal(b!.status, 400);
    const error = (JSON.parse(b!.body) as { id: unknown; error: { message: string; data: { reason: string } } });
    assert.deepEqual([error.id, error.error.data.reason, error.error.message], [81, 'invalid_request', 'Invalid Request: the request body is over max_json_nodes (20).']);
    assert.deepEqual(callsSent(), [70, 71, 80]);
  });
});
