/**
 * Reported failure (a new user's hostile trial 12, L2): "a request announcing an over-limit
 * body with `Expect: 100-continue` is told to go ahead, then refused". Node's HTTP server
 * answered `100 Continue` to every such head, so a host announcing 50,000,000 bytes against a
 * `max_request_bytes` of 1,000 was told to send them, and only then got `413`. RFC 9110
 * §10.1.1: a server that will refuse the request from its head sends the final status instead
 * of 100, and the client never sends the body. Now (src/app.ts, `checkContinue`) such a head
 * gets the gateway's 413 `request_too_large` refusal at once, no 100, and the connection is
 * closed (the announced body never comes); a head within the limit still gets its 100
 * Continue and is served.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { openRawConnection } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER = toolResponse(1, { content: [{ type: 'text', text: 'ok' }] });
const LIMIT = 1000;
const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url }, [`defaults: {max_request_bytes: ${LIMIT}}`])),
);

const BODY = JSON.stringify(toolCall(1, 'get_products'));
const REFUSAL = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: `Request body is over max_request_bytes (${LIMIT}).`, data: { reason: 'request_too_large', limit_bytes: LIMIT } },
});
const head = (length: number): string =>
  `POST /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
  `mcp-protocol-version: 2025-06-18\r\nexpect: 100-continue\r\ncontent-length: ${length}\r\n\r\n`;

describe('Expect: 100-continue with a body over max_request_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the final 413 at once, no 100 Continue, the connection closed, the seller not contacted', async () => {
    const seen = stack.seller.requests.length;
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    conn.socket.write(head(50_000_000));
    // Resolves only once the gateway closes the connection.
    const answer = await withTimeout(conn.closed, undefined, 'the answer and the close');
    assert.doesNotMatch(answer, /100 Continue/);
    assert.match(answer, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.equal(answer.slice(answer.indexOf('\r\n\r\n') + 4), REFUSAL);
    assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
  });

  test('control: a body at the limit gets its 100 Continue and is served', async () => {
    const padded = BODY.slice(0, -1) + ' '.repeat(LIMIT - BODY.length) + '}';
    assert.equal(padded.length, LIMIT);
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    try {
      conn.socket.write(head(LIMIT));
      await withTimeout(conn.received('HTTP/1.1 100 Continue\r\n\r\n'), undefined, 'the 100 Continue');
      conn.socket.write(padded);
      await withTimeout(conn.received(ANSWER), undefined, 'the answer');
      assert.match(conn.text(), /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
      assert.ok(conn.text().endsWith(ANSWER), conn.text());
    } finally {
      conn.socket.destroy();
    }
  });
});
