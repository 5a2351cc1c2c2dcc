/**
 * Regression (hostile trial 55, F2): "a request cancelled while the gateway still holds it is
 * sent to the seller anyway". A `tools/call` waiting for its agent's backoff turn, or pipelined
 * (HTTP/1.1) behind another answer on its connection, was cancelled by its host
 * (`notifications/cancelled` in its session, on another connection): the gateway forwarded the
 * cancellation, which the seller ignored (no such request yet), and then sent the call once its
 * turn came, so the seller ran it (a `create_media_buy`, say) for a host that had dropped it.
 * A host that disconnects during the same wait is never sent (host_aborted).
 *
 * Now a request is registered from when the handler takes it (routing/in-flight-requests.ts:
 * a request waiting for its pipelined turn too, before its exchange exists), and one marked
 * cancelled before it is sent is never sent: its host gets HTTP 200 and an SSE stream that ends
 * at once with nothing in it (what the MCP SDK clients take quietly for a request: no message,
 * no event id, so no resume), outcome `cancelled`, reason null, no seller status, no breach;
 * during a backoff wait at once (its place in the queue given up), a pipelined one at its turn.
 *
 * Input (raw seller on 127.0.0.1): agent `b` (max_response_bytes 1000, backoff after one
 * breach, 1 s): `create_media_buy` call 49 breaks the bound, call 50 (the same tool, so the
 * same backoff) waits for it, the host cancels 50,
 * then sends call 51, which goes as the probe once the backoff ends. Agent `p`: call 60 held by
 * the seller, call 61 pipelined behind it on the same connection, 61 cancelled, then 60 released.
 * The seller's `tools/call` ids tell what was sent.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { openRawConnection, responsesWhenWhole } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { answerToolCallsHolding, toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-held';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };

/** Call 60's answer, held until the test releases it. */
let held: ServerResponse | undefined;

const answer = answerToolCallsHolding((id) => id === 60, (res) => (held = res), (id) => (id === 49 ? 'y'.repeat(5_000) : `done ${id}`));

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        b: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 1000, backoff_max_ms: 1000, response_deadline_ms: 10000 },
        p: { url: seller.url },
      }),
    ),
);

/** The ids of the `tools/call`s that reached the seller, in order. */
const callsSent = (): unknown[] => toolCallIdsSent(stack.seller);

const cancel = async (agent: string, id: number): Promise<number> =>
  (await rawPost(stack.gateway.agentUrl(agent), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id},"reason":"user"}}`, HEADERS)).status;

const lineOf = async (agent: string, id: number): Promise<unknown[]> => {
  const l = await stack.gateway.exchangeLine(agent, id);
  return [l.outcome, l.reason, l.status, l.upstream_status, l.bytes_from_seller];
};

describe('cancelled-while-held-still-sent', { timeout: TEST_TIMEOUT_MS }, () => {
  test('cancelled while waiting for its backoff turn: answered at once with an empty SSE stream, never sent', async () => {
    const breach = await rawPost(stack.gateway.agentUrl('b'), toolCall(49, 'create_media_buy'), HEADERS);
    assert.equal(breach.status, 200);
    assert.match(breach.text(), /"reason\\":\\"raw_bytes\\"/);
    // Its end counted the breach (the line is written after): the kind backs off from here.
    assert.equal((await stack.gateway.exchangeLine('b', 49)).reason, 'raw_bytes');
    const waiting = fetch(stack.gateway.agentUrl('b'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS },
      body: JSON.stringify(toolCall(50, 'create_media_buy')),
    });
    // Taken by the handler, waiting for the backoff (the breach's exchange is over).
    await until('call 50 waits for its turn', () => stack.gateway.app.gateway.openExchanges === 1);
    assert.equal(await cancel('b', 50), 202);
    const res = await withTimeout(waiting, 5_000, 'call 50 answered');
    assert.deepEqual([res.status, res.headers.get('content-type'), await res.text()], [200, 'text/event-stream', '']);
    assert.deepEqual(await lineOf('b', 50), ['cancelled', null, 200, null, 0]);
    // The next call goes as the probe once the backoff ends: 50 was never sent.
    const next = await withTimeout(rawPost(stack.gateway.agentUrl('b'), toolCall(51, 'create_media_buy'), HEADERS), 5_000, 'call 51');
    assert.match(next.text(), /done 51/);
    assert.deepEqual(callsSent(), [49, 51]);
  });

  test('cancelled while pipelined behind another answer on its connection: never sent, an empty SSE stream at its turn', async () => {
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    const request = (id: number): string => {
      const body = JSON.stringify(toolCall(id, 'create_media_buy'));
      return (
        `POST /agents/p/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
        `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      );
    };
    conn.socket.write(request(60) + request(61));
    await until('call 60 at the seller, 61 waiting for its turn', () => held !== undefined && stack.gateway.app.gateway.pipelinedWaiting === 1);
    assert.equal(await cancel('p', 61), 202);
    held!.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(60, { content: [{ type: 'text', text: 'done 60' }] }));
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    conn.socket.destroy();
    assert.match(responses[0]!.body, /done 60/);
    assert.deepEqual([responses[1]!.status, responses[1]!.headers['content-type'], responses[1]!.body], [200, 'text/event-stream', '']);
    assert.deepEqual(await lineOf('p', 61), ['cancelled', null, 200, null, 0]);
    assert.deepEqual(callsSent(), [49, 51, 60]);
  });
});
