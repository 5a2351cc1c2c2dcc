/**
 * Regression (carried from an earlier review): an answer queued behind another on its
 * connection (HTTP/1.1 pipelining) whose connection died before its turn never ended its
 * exchange. Node (20 and 22) gives a response that is still queued (no socket yet) no 'close'
 * when the connection closes, and 'close' was the exchange's one end: no `exchange` line, no
 * count, and the exchange's entry (its closures, the request, the seller's answer) and any
 * backoff turn it held stayed for the life of the process. A host could leak them at will by
 * pipelining calls and hanging up.
 *
 * Input: seller (node:http) -> gateway -> raw host (net.connect), on 127.0.0.1. The host
 * pipelines two calls to agent `q` on one connection: 31, answered by an SSE stream the seller
 * keeps open (one progress event, then nothing), and 32, answered at once with a small JSON
 * result, which the gateway settles and queues behind the stream. Once the host has the
 * stream's first event and the seller has answered 32, the host hangs up.
 * Expected: both exchanges write their line, outcome `host_aborted` (32's answer never left
 * its queue), status 200 for the stream and null for 32 (no head sent); the gateway has no
 * open exchange left (routing/handler.ts, the connection's close).
 * Before the fix: 31's line came, 32's never.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

let answered32 = false;
function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    if (id === 31) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      return; // kept open: the gateway's stream for 31 holds the connection
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'small' }] } }), () => (answered32 = true));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(agentsYaml({ q: { url: seller.url, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000 } })),
);
const gw = (): ObservedGateway => stack.gateway;

/** Waits for `ready`: at most 1000 looks, 10 ms apart (a hang guard, not a timing). */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let k = 0; k < 1000 && !ready(); k++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(ready(), what);
}

describe('an answer queued behind another on a connection that dies', () => {
  test('both exchanges end with their line, host_aborted; none stays open', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    let wire = '';
    socket.setEncoding('latin1').on('data', (c: string) => (wire += c));
    socket.on('error', () => {});
    socket.write(toolCallRequest(31, 'q') + toolCallRequest(32, 'q'));
    await until(() => wire.includes('notifications/progress'), "the stream's first event reached the host");
    await until(() => answered32, 'the seller answered the pipelined call');
    // Both exchanges are open: the stream, and 32 (settled or about to be: either way its
    // answer waits behind the stream, which the seller keeps open).
    assert.equal(gw().app.gateway.openExchanges, 2);
    socket.destroy();

    const stream = await gw().exchangeLine('q', 31, 10_000);
    const queued = await gw().exchangeLine('q', 32, 10_000);
    assert.deepEqual(
      [stream, queued].map((l) => ({ outcome: l.outcome, reason: l.reason, status: l.status })),
      [
        { outcome: 'host_aborted', reason: null, status: 200 },
        { outcome: 'host_aborted', reason: null, status: null },
      ],
    );
    assert.equal(wire.includes('"id":32'), false, "32's answer never reached the host");
    await until(() => gw().app.gateway.openExchanges === 0, 'no open exchange left');
  });
});

