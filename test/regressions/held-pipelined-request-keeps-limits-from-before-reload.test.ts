/**
 * Regression (a re-read of the cancel-hold change, M1, guarded before the cache of a held
 * request's limits was removed): "a held pipelined request keeps the limits from before a
 * reload". A POSTed request in a session, pipelined (HTTP/1.1) behind another answer on its
 * connection, whose turn comes while a host's cancellation naming it awaits the seller's answer,
 * is held at its turn (routing/in-flight-requests.ts holdAtTurn) with its agent's
 * response_deadline_ms. Its limits must be those in force when it is sent (routing/handler.ts
 * limitsOf, precomputed per agent config object in config/resolve.ts), never limits resolved for
 * its hold under the agent it came to: a reload meanwhile that lowers its agent's
 * max_response_bytes applies to it, and its X-Max-Response-Bytes still applies without a reload.
 *
 * Input (raw seller on 127.0.0.1): agent `p` (max_response_bytes 100000); call 60 (or 62) held
 * by the seller, call 61 (or 63) pipelined behind it in a session, carrying
 * `X-Max-Response-Bytes: 3000`; a cancellation of it held by the seller until after its turn,
 * then answered 404 (refused: the request is sent). The seller answers 61 and 63 with a
 * 5,000-byte JSON message.
 * Expected: 61 (no reload) refused at its header's 3000 bytes; 63 (a reload to
 * max_response_bytes 1000 while it is held) refused at 1000 bytes, the reload's limit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { parseConfig } from '../../src/config/load.js';
import { startRawSeller, toolResponse, toolResponseOfSize, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-held-reload-limits';
const ANSWER_BYTES = 5_000;

/** The answer the seller holds (60's or 62's), and the cancellation's answer it holds. */
let heldCall: ServerResponse | undefined;
let heldCancel: ServerResponse | undefined;

function answer(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
  if (msg.method === 'notifications/cancelled') {
    heldCancel = res;
    return;
  }
  if (msg.method !== 'tools/call') {
    res.writeHead(202).end();
    return;
  }
  if (msg.id === 60 || msg.id === 62) {
    heldCall = res;
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponseOfSize(msg.id!, ANSWER_BYTES));
}

const yaml = (sellerUrl: string, maxResponseBytes: number): string => agentsYaml({ p: { url: sellerUrl, max_response_bytes: maxResponseBytes } });

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(yaml(seller.url, 100_000)),
);

/** A POSTed `get_products` call `id` to agent `p` in the session, with `X-Max-Response-Bytes: 3000`, as written on a raw connection. */
function wire(id: number): string {
  const body = JSON.stringify(toolCall(id, 'get_products'));
  return (
    `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\nx-max-response-bytes: 3000\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/**
 * Sends `ahead` and `behind` pipelined on one connection, cancels `behind` (the seller holds that
 * answer), ends `ahead`'s answer so `behind` is held at its turn, runs `meanwhile`, then has the
 * seller refuse the cancellation (404): `behind`'s answer as the host gets it.
 */
async function heldAtTurn(ahead: number, behind: number, meanwhile: () => void): Promise<{ status: number; body: string }> {
  heldCall = undefined;
  heldCancel = undefined;
  const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
  try {
    conn.socket.write(wire(ahead) + wire(behind));
    await until(`call ${ahead} at the seller, ${behind} waiting for its turn`, () => heldCall !== undefined && stack.gateway.app.gateway.pipelinedWaiting === 1);
    const cancelled = rawPost(stack.gateway.agentUrl('p'), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${behind},"reason":"user"}}`, {
      'mcp-session-id': SESSION,
      'mcp-protocol-version': '2025-06-18',
    });
    await until('the seller holds the cancellation', () => heldCancel !== undefined);
    heldCall!.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(ahead, { content: [{ type: 'text', text: `done ${ahead}` }] }));
    // The answer ahead is whole: the turn of the one behind has come, and it is held there.
    await until(`${behind}'s turn`, () => conn.text().includes(`done ${ahead}`) && stack.gateway.app.gateway.pipelinedWaiting === 0);
    assert.equal(toolCallIdsSent(stack.seller).includes(behind), false, 'not sent while the cancellation awaits its answer');
    meanwhile();
    heldCancel!.writeHead(404).end();
    assert.equal((await cancelled).status, 404);
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    assert.match(responses[0]!.body, new RegExp(`done ${ahead}`));
    return { status: responses[1]!.status, body: responses[1]!.body };
  } finally {
    conn.socket.destroy();
  }
}

/** The gateway's answer to call `id` whose 5,000-byte JSON answer is over `limitBytes`, with its exchange line's reason. */
async function assertRefusedAt(got: { status: number; body: string }, id: number, limitBytes: number): Promise<void> {
  const line = await stack.gateway.exchangeLine('p', id);
  assert.deepEqual([line.outcome, line.reason], ['local_error', 'raw_bytes']);
  assert.equal(got.status, 200);
  assert.equal(got.body, expectedErrorJson({ id, method: 'tools/call', toolName: 'get_products', reason: 'raw_bytes', limitBytes, observedBytes: ANSWER_BYTES }));
}

describe('held-pipelined-request-keeps-limits-from-before-reload', { timeout: TEST_TIMEOUT_MS }, () => {
  test('held at its turn, no reload: its X-Max-Response-Bytes (3000) applies', async () => {
    await assertRefusedAt(await heldAtTurn(60, 61, () => {}), 61, 3_000);
    assert.deepEqual(toolCallIdsSent(stack.seller), [60, 61]);
  });

  test('held at its turn, a reload meanwhile lowers max_response_bytes to 1000: the reloaded limit applies', async () => {
    await assertRefusedAt(
      await heldAtTurn(62, 63, () => stack.gateway.app.gateway.setConfig(parseConfig(yaml(stack.seller.url, 1_000), { env: {} }))),
      63,
      1_000,
    );
    assert.deepEqual(toolCallIdsSent(stack.seller), [60, 61, 62, 63]);
  });
});
