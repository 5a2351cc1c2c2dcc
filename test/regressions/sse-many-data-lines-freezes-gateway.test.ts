/**
 * Reported failure (a new user's hostile trial 13, H1): "an SSE event made of many short
 * `data:` lines freezes the whole gateway". One event of 1,000,000 `data: x` lines (8 MB, under
 * every default bound) stopped the gateway's event loop for 8-19 s, every agent with it, and
 * took its RSS to 1.4 GB; two such events killed a gateway with a 1 GB heap. The SSE stage
 * wrote each line of the event's data as two parts of its own (the line, and its `data: ` and
 * LF around it), each a write of the host's response and so an HTTP chunk of it: 2,000,000
 * corked writes for one event. Now (src/response/sse-encode.ts, VIEW_EVENT_MAX_LINES) data of
 * more than 8 lines is framed in one Buffer: the event leaves in one write, its cost one copy
 * of its data (1,000,000 lines: 11.8 s -> ~1.1 s to the host, loop lag 8 s -> ~0.2 s, RSS
 * 1.4 GB -> ~185 MB; measured by hand, not here).
 *
 * Measured here: the HTTP chunks of the host's response (the writes the gateway made), and
 * its exact bytes. Before, the 2,000 lines below came in 4,000 chunks. Since hostile trial 52,
 * F1, the 1,000,000-line event of the report ends `sse_event_memory` instead: the parser's
 * strings for it (~64 MB) count against the open event's memory bound (src/response/sse-open-event.ts);
 * the 100,000 lines below, 7.2 MB as counted, pass under it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { openRawConnection, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LINES = 100_000;
/** Not JSON: the stage forwards it as data (each line a `data:` line), not as a message. */
const SELLER_EVENT = 'data: x\n'.repeat(LINES) + '\n';
/** The same event as the host gets it. */
const MANY_LINES_EVENT = 'data: x\n'.repeat(LINES) + '\n';
const ANSWER = `data: ${toolResponse(7, { content: [{ type: 'text', text: 'ok' }] })}\n\n`;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // CR LF line breaks: the stage reads such an event through the parser (the path that
      // wrote parts per line) and writes it with LF ones.
      res.write(SELLER_EVENT);
      setTimeout(() => res.end(ANSWER), 30);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

/** The chunk payloads of the chunked body that follows the head in `wire` (latin1), up to the terminator. */
function chunksOf(wire: string): string[] {
  let at = wire.indexOf('\r\n\r\n') + 4;
  const chunks: string[] = [];
  for (;;) {
    const eol = wire.indexOf('\r\n', at);
    const size = Number.parseInt(wire.slice(at, eol), 16);
    at = eol + 2;
    if (size === 0) return chunks;
    chunks.push(wire.slice(at, at + size));
    at += size + 2;
  }
}

describe('one SSE event of many data lines', { timeout: TEST_TIMEOUT_MS }, () => {
  test('goes to the host in one write, not one per line, its bytes unchanged', async () => {
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    conn.socket.write(toolCallRequest(7));
    await withTimeout(conn.received('\r\n0\r\n\r\n'), 10_000, 'the whole response');
    const wire = conn.text();
    conn.socket.destroy();
    assert.match(wire, /^HTTP\/1\.1 200 /);
    assert.match(wire, /\r\ntransfer-encoding: chunked\r\n/i);
    const chunks = chunksOf(wire);
    const body = chunks.join('');
    assert.equal(body.slice(0, MANY_LINES_EVENT.length), MANY_LINES_EVENT);
    // The event whole in one chunk (it was ~2 per line: 4,000).
    assert.equal(chunks.findIndex((c) => c.includes('data: x\n')), chunks.findLastIndex((c) => c.includes('data: x\n')), `${chunks.length} chunks`);
    assert.equal(chunks.filter((c) => c.includes('data: x\n'))[0], MANY_LINES_EVENT);
  });
});
