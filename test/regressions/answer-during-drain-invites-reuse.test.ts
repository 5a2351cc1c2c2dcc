/**
 * Regression (a hostile operator's trial 51, finding 2): an answer written while the gateway
 * drains carried `Connection: keep-alive` (and `Keep-Alive: timeout=72`), then the gateway
 * closed the connection; curl --next reused it for its next request and got "Connection reset
 * by peer".
 *
 * Now a response whose head is written while draining says `Connection: close` (Node closes the
 * connection after it), so no client reuses a connection the gateway is about to close
 * (src/routing/drain-close-answers.ts).
 *
 * Input: a gateway before a raw seller that holds `tools/call` id 10. A host sends id 10 on a
 * keep-alive connection; the shutdown begins as src/cli.ts starts it on SIGTERM; ~1 s later the
 * seller answers. Expectation: the answer's head says `Connection: close` and no `Keep-Alive`,
 * its body is the seller's result, and the gateway then closes the connection (the host sees
 * its end, not a reset); the host's next request, on a new connection, is refused
 * (`ECONNREFUSED`: the listener is closed).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import type { RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { openRawConnection, parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { beginShutdown, startHoldingSeller } from '../helpers/draining.js';

const RESULT = { content: [{ type: 'text', text: 'answered while draining' }] };

/** The error code of a new connection to `port` (null when it connects). */
function connectError(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

describe('answer-during-drain-invites-reuse', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller | undefined;
  let gw: ObservedGateway | undefined;
  after(async () => {
    await gw?.close().catch(() => {});
    await seller?.close();
  });

  test('an answer written ~1 s after the signal says Connection: close; the next request meets a closed listener, not a reset', async () => {
    const holding = await startHoldingSeller(10, RESULT);
    seller = holding.seller;
    gw = await startObservedGateway(agentsYaml({ s: seller.url }));
    const port = Number(new URL(gw.baseUrl).port);
    const conn = await openRawConnection(port);
    let reset: string | null = null;
    conn.socket.on('error', (err: NodeJS.ErrnoException) => (reset = err.code ?? 'error'));
    conn.socket.write(toolCallRequest(10));
    await withTimeout(holding.held, 5_000, 'id 10 at the seller');

    const { closed } = await beginShutdown(gw);
    await new Promise((r) => setTimeout(r, 1_000));
    holding.release();
    const wire = await withTimeout(conn.closed, 5_000, 'the gateway closing the connection after its answer');
    const { responses, rest } = parseResponses(Buffer.from(wire, 'latin1'), 1);
    const answer = responses[0]!;
    assert.equal(answer.status, 200);
    assert.deepEqual([answer.headers.connection, answer.headers['keep-alive']], ['close', undefined]);
    assert.deepEqual(JSON.parse(answer.body), { jsonrpc: '2.0', id: 10, result: RESULT });
    assert.equal(rest, '');
    assert.equal(reset, null, 'no reset');
    assert.equal(await connectError(port), 'ECONNREFUSED');
    await withTimeout(closed, 5_000, 'the close');
  });
});
