/**
 * Regression (a new user's trial, 2026-12-03): the standalone GET stream (MCP Streamable
 * HTTP: the stream a client opens with GET to hear the server between requests) has no end
 * of its own: the client closes it when it is done. Every such close, by every SDK client,
 * was logged and counted as outcome `host_aborted`, the outcome that says a host went away
 * before its answer was all written, so the metric could not tell aborts from normal use.
 *
 * Input: a raw seller answering the GET with an SSE stream, one notification, then open; a
 * raw host reads the notification, then closes its connection.
 * Expected: the exchange line says outcome `ok`, reason null, status 200. Control: a host
 * that leaves a POSTed request's stream before its response is still `host_aborted`.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCallRequest } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const NOTE = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } })}\n\n`;

/** Opens a raw connection, sends `request`, resolves once the notification arrived, then closes it. */
async function readNoteThenLeave(port: number, request: string): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let wire = '';
  await new Promise<void>((resolve) => {
    socket.setEncoding('utf8').on('data', (c: string) => {
      wire += c;
      if (wire.includes('notifications/message')) resolve();
    });
    socket.write(request);
  });
  socket.destroy();
}

describe('the standalone GET stream, closed by its host', () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(NOTE); // then open: only the host ends it
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
  const port = (): number => Number(new URL(stack.gateway.baseUrl).port);

  test('outcome ok, not host_aborted', { timeout: TEST_TIMEOUT_MS }, async () => {
    await readNoteThenLeave(port(), 'GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\r\n');
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && l.method === null, 10_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'ok', reason: null, status: 200 });
  });

  test("control: a request's stream left before its response is host_aborted", { timeout: TEST_TIMEOUT_MS }, async () => {
    await readNoteThenLeave(port(), toolCallRequest(5, 's'));
    const line = await stack.gateway.exchangeLine('s', 5, 10_000);
    assert.deepEqual({ outcome: line.outcome, status: line.status }, { outcome: 'host_aborted', status: 200 });
  });
});
