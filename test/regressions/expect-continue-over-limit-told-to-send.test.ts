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
import net from 'node:net';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
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

/**
 * Writes `text` on a new connection, then `body` once the gateway answers `100 Continue`;
 * resolves with all the gateway wrote once it closed the connection or wrote nothing for 1 s.
 */
function exchange(text: string, body?: string): Promise<{ text: string; closed: boolean }> {
  const url = new URL(stack.gateway.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let got = '';
    let sent = false;
    let idle = setTimeout(() => done(false), 1000);
    const done = (closed: boolean): void => {
      clearTimeout(idle);
      socket.destroy();
      resolve({ text: got, closed });
    };
    socket.setEncoding('utf8');
    socket.on('data', (s: string) => {
      got += s;
      if (!sent && body !== undefined && got.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sent = true;
        socket.write(body);
      }
      clearTimeout(idle);
      idle = setTimeout(() => done(false), 1000);
    });
    socket.on('error', reject);
    socket.on('close', () => done(true));
    socket.write(text);
  });
}

describe('Expect: 100-continue with a body over max_request_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the final 413 at once, no 100 Continue, the connection closed, the seller not contacted', async () => {
    const seen = stack.seller.requests.length;
    const answer = await withTimeout(exchange(head(50_000_000)), undefined, 'the answer');
    assert.doesNotMatch(answer.text, /100 Continue/);
    assert.match(answer.text, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
    assert.match(answer.text, /\r\nconnection: close\r\n/i);
    assert.equal(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4), REFUSAL);
    assert.equal(answer.closed, true, 'the connection closed');
    assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
  });

  test('control: a body at the limit gets its 100 Continue and is served', async () => {
    const padded = BODY.slice(0, -1) + ' '.repeat(LIMIT - BODY.length) + '}';
    assert.equal(padded.length, LIMIT);
    const answer = await withTimeout(exchange(head(LIMIT), padded), undefined, 'the answer');
    assert.match(answer.text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.text.endsWith(ANSWER), answer.text);
  });
});
