/**
 * Regression (carried from an earlier review): an answer queued behind another on its
 * connection (HTTP/1.1 pipelining) whose connection died before its turn never ended its
 * exchange. Node (20 and 22) gives a response that is still queued (no socket yet) no 'close'
 * when the connection closes, and 'close' was the exchange's one end: no `exchange` line, no
 * count, and the exchange's entry (its closures, the request, the seller's answer) and any
 * backoff turn it held stayed for the life of the process. A host could leak them at will by
 * pipelining calls and hanging up.
 *
 * Since a hostile new-user trial 15, H1 (test/regressions/pipelined-answers-unbounded-memory.test.ts),
 * a pipelined call is sent only at its turn (src/routing/pipelined-turn.ts): no answer waits
 * queued any more, and a call waiting for its turn on a connection that dies is not processed
 * at all (nothing sent, no exchange, no line), its entry released at the connection's close.
 *
 * Input: seller (node:http) -> gateway -> raw host (net.connect), on 127.0.0.1. The host
 * pipelines two calls to agent `q` on one connection: 31, answered by an SSE stream the seller
 * keeps open (one progress event, then nothing), and 32, which waits for its turn behind the
 * stream. Once the host has the stream's first event, the host hangs up.
 * Expected: 31's exchange writes its line, outcome `host_aborted`, status 200; 32 never
 * reached the seller and has no line; the gateway has no open exchange and no waiting request
 * left.
 * Before the fix: 31's line came, 32's never (and 32's exchange stayed open for good).
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

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    if (id === 31) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      return; // kept open: the gateway's stream for 31 holds the connection
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'small' }] } }));
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

describe('a call pipelined behind another on a connection that dies', () => {
  test("the stream's exchange ends host_aborted; the waiting call is never sent, has no line; nothing stays open or waiting", { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    let wire = '';
    socket.setEncoding('latin1').on('data', (c: string) => (wire += c));
    socket.on('error', () => {});
    socket.write(toolCallRequest(31, 'q') + toolCallRequest(32, 'q'));
    await until(() => wire.includes('notifications/progress'), "the stream's first event reached the host");
    await until(() => gw().app.gateway.pipelinedWaiting === 1, 'the pipelined call waits for its turn');
    // One exchange is open, the stream's; 32 waits for its turn, not sent.
    assert.equal(gw().app.gateway.openExchanges, 1);
    socket.destroy();

    const stream = await gw().exchangeLine('q', 31, 10_000);
    assert.deepEqual({ outcome: stream.outcome, reason: stream.reason, status: stream.status }, { outcome: 'host_aborted', reason: null, status: 200 });
    await until(() => gw().app.gateway.openExchanges === 0 && gw().app.gateway.pipelinedWaiting === 0, 'no open exchange, no waiting request left');
    assert.deepEqual(
      stack.seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { id: number }).id),
      [31],
      'the seller got the stream\'s call only',
    );
    assert.equal(wire.includes('"id":32'), false, "nothing for 32 reached the host");
    assert.equal(
      gw().lines.some((l) => l.rpc_id === 32),
      false,
      'no line for 32',
    );
  });
});

