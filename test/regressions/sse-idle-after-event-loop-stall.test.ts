/**
 * Reported failure (a hostile new-user trial 16, H1, its knock-on): "timers that expired during
 * the stall fire before the queued socket data is read". While another answer's rewrite held
 * the gateway's event loop for seconds, a healthy SSE call on another agent
 * (`sse_idle_timeout_ms: 3000`, its seller sending an event every 500 ms) ended
 * `SERVICE_UNAVAILABLE` `sse_idle`: the idle timer, due during the stall, ran in the timers
 * phase that followed it, before the poll phase read the events waiting in the socket.
 * Now an idle timer that finds the time up looks again after one turn of the event loop
 * (response/sse-stream-timers.ts onIdleTimer `idleRecheck`).
 *
 * The stall is made here as it happened there, in an I/O callback of the gateway's process
 * (the gateway, the seller and a "staller" server all run in this process, on 127.0.0.1): the
 * seller writes its first progress event; 50 ms later a byte reaches the staller, whose
 * `data` callback writes the seller's second event and then keeps the event loop busy for
 * 800 ms, past the agent's 500 ms idle timeout counted from the first event; 50 ms after the
 * stall the seller writes the result. Before the fix the host got the first event, then the
 * `sse_idle` error for its id; now all three messages, in order. A seller that really goes
 * silent still gets `sse_idle` (the control).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const IDLE_MS = 500;
const STALL_MS = 800;
const progress = (n: number): string => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
const resultEvent = (id: number): string => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"done"}]}}\n\n`;

/** The seller's response waiting for the staller's byte (the `stalled` tool). */
let waiting: { res: ServerResponse; id: number } | undefined;
let staller: net.Server;
let trigger: net.Socket;

function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the gateway's event loop is held here
  }
}

before(async () => {
  staller = net.createServer((socket) => {
    socket.on('data', () => {
      const w = waiting;
      waiting = undefined;
      if (w === undefined) return;
      w.res.write(progress(2));
      busyFor(STALL_MS);
      setTimeout(() => w.res.end(resultEvent(w.id)), 50);
    });
  });
  await new Promise<void>((resolve) => staller.listen(0, '127.0.0.1', resolve));
  trigger = net.connect((staller.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise<void>((resolve) => trigger.once('connect', resolve));
});
after(() => {
  trigger.destroy();
  staller.close();
});

describe('an SSE stream whose events arrived during an event-loop stall', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const call = JSON.parse(req.body.toString()) as { id: number; params: { name: string } };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(progress(1));
        // `silent`: nothing more (the control); `stalled`: the staller writes the rest.
        if (call.params.name === 'stalled') {
          waiting = { res, id: call.id };
          setTimeout(() => trigger.write('x'), 50);
        }
      }),
    (seller) => startGateway(agentsYaml({ acme: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } }, ['log_level: silent'])),
  );

  test('the events read after the stall count: the stream goes on to its result, not sse_idle', async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(5, 'stalled'), { 'mcp-protocol-version': '2025-06-18' }));
    assert.equal(res.status, 200);
    assert.deepEqual(sseMessages(res.text()), [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } },
      { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'done' }] } },
    ]);
  });

  test('control: a seller silent after its first event gets sse_idle', async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(6, 'silent'), { 'mcp-protocol-version': '2025-06-18' }));
    const messages = sseMessages(res.text()) as { id?: number; result?: { isError?: boolean; structuredContent?: { adcp_error?: { code: string; details: Record<string, unknown> } } } }[];
    assert.equal(messages.length, 2);
    assert.equal(messages[1]!.id, 6);
    assert.equal(messages[1]!.result?.isError, true);
    const error = messages[1]!.result?.structuredContent?.adcp_error;
    assert.deepEqual({ code: error?.code, reason: error?.details.reason, limit_ms: error?.details.limit_ms }, { code: 'SERVICE_UNAVAILABLE', reason: 'sse_idle', limit_ms: IDLE_MS });
  });
});
