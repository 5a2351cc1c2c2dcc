/**
 * Regression: a request with an `Expect` header other than `100-continue` got Node's bare
 * `417 Expectation Failed`.
 *
 * Reported failure (a new user's trial, 2026-12-03): `Expect: something-else` was answered by
 * Node's HTTP server itself, `417` with an empty body: no JSON-RPC error to read, no `refused`
 * log line, no count in `adcp_gateway_refusals_total`, and no row in docs/errors.md. Node
 * emits `checkExpectation` for such a request when the server has a listener
 * (https://nodejs.org/api/http.html#event-checkexpectation); the gateway now answers it as it
 * answers the other requests refused before routing (errors/client-error.ts): HTTP 417
 * (RFC 9110 §10.1.1, §15.5.18) with a JSON-RPC error for id null, reason
 * `expectation_failed`, one `refused` line, one count, the connection closed, the seller not
 * contacted. `Expect: 100-continue` (curl sends it for bodies over 1 MiB) still gets its
 * `100 Continue` and the request is served.
 *
 * Input: a gateway before a raw seller; raw TCP requests: a POST tools/call with `Expect:
 * something-else`, a GET with `Expect: 200-ok`, and a POST with `Expect: 100-continue` that
 * sends its body only after the interim answer.
 * Expectation: the first two get exactly the 417 answer below and the connection closes; the
 * third gets `HTTP/1.1 100 Continue` and then the seller's 200 answer.
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
import { refusalCount as refusalCountAt } from '../helpers/refusal-count.js';

const ANSWER = toolResponse(1, { content: [{ type: 'text', text: 'ok' }] });
const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const BODY = JSON.stringify(toolCall(1, 'get_products'));
const MESSAGE = 'Expectation failed: the gateway meets no Expect header but 100-continue.';
const REFUSAL = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: MESSAGE, data: { reason: 'expectation_failed' } } });
const EXPECTED =
  `HTTP/1.1 417 Expectation Failed\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(REFUSAL)}\r\n` +
  `connection: close\r\n\r\n${REFUSAL}`;

/**
 * Writes `text` on a new connection; resolves with all the gateway wrote once it closed the
 * connection (`closed`), or once it wrote nothing more for 1 s (a connection left open).
 */
function exchange(text: string): Promise<{ text: string; closed: boolean }> {
  const url = new URL(stack.gateway.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let got = '';
    let idle = setTimeout(() => done(false), 1000);
    const done = (closed: boolean): void => {
      clearTimeout(idle);
      socket.destroy();
      resolve({ text: got, closed });
    };
    socket.setEncoding('utf8');
    socket.on('data', (s: string) => {
      got += s;
      clearTimeout(idle);
      idle = setTimeout(() => done(false), 1000);
    });
    socket.on('error', reject);
    socket.on('close', () => done(true));
    socket.write(text);
  });
}

const refusalCount = (reason: string): Promise<number> => refusalCountAt(stack.gateway.baseUrl, reason);

/** The head lines of `answer` without the `date` line (it changes), the body after them. */
function withoutDate(answer: string): string {
  return answer.replace(/\r\ndate: [^\r]*/i, '');
}

describe('an Expect header other than 100-continue', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, request, method] of [
    [
      'a POST with Expect: something-else',
      `POST /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nexpect: something-else\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
      'POST',
    ],
    ['a GET with Expect: 200-ok', 'GET /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nexpect: 200-ok\r\n\r\n', 'GET'],
  ] as const) {
    test(`${label}: 417 with a JSON-RPC refusal (id null), connection closed, one refused line, counted (was a bare 417)`, async () => {
      const seen = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const countBefore = await refusalCount('expectation_failed');
      const answer = await withTimeout(exchange(request), undefined, 'the answer and the close');
      assert.equal(withoutDate(answer.text), EXPECTED);
      assert.equal(answer.closed, true, 'the connection closed');
      assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
      assert.deepEqual(
        stack.gateway.lines
          .slice(linesBefore)
          .filter((l) => l.msg === 'refused')
          .map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
        [{ reason: 'expectation_failed', status: 417, agent: 's', http_method: method }],
      );
      assert.equal(await refusalCount('expectation_failed'), countBefore + 1);
    });
  }

  test('Expect: 100-continue still works: 100 Continue, then the body, then the answer', async () => {
    const url = new URL(stack.gateway.baseUrl);
    const got = await withTimeout(
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname);
        let text = '';
        let sent = false;
        socket.setEncoding('utf8');
        socket.on('error', reject);
        socket.on('data', (s: string) => {
          text += s;
          if (!sent && text.includes('\r\n\r\n')) {
            assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
            sent = true;
            socket.write(BODY);
          }
          if (text.endsWith(ANSWER)) {
            socket.end();
            resolve(text);
          }
        });
        socket.write(
          `POST /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
            `mcp-protocol-version: 2025-06-18\r\nexpect: 100-continue\r\ncontent-length: ${BODY.length}\r\n\r\n`,
        );
      }),
      undefined,
      'the 100 Continue and the answer',
    );
    assert.match(got, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.equal(got.slice(got.indexOf('\r\n\r\n', 30) + 4), ANSWER);
  });
});
