/**
 * Refusals, found by a new user (2026-12-02): a body that fails after its head is refused
 * once; an HTTP/1.1 request without Host gets the documented refusal.
 *
 * Reported failure (a new user's trial, 2026-12-02): a request whose body failed after its
 * head arrived (`Content-Length: 100` and 25 bytes until request_timeout_ms; a malformed
 * chunk size) got the right answer from Node's HTTP server (408 `request_timeout`, 400
 * `malformed_http`), but two `refused` lines were logged and two refusals counted: the second,
 * `invalid_request` 400, for an answer that was never sent (Fastify's error handler refused it
 * again on the closing connection). The README: "A request refused before any seller is
 * contacted writes one `"msg":"refused"` line". Now exactly one line and one count.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { exchangeUntilClose } from '../helpers/http-wire.js';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(500).end()),
  (seller) => startObservedGateway(agentsYaml({ ok: seller.url }, ['request_timeout_ms: 1000'])),
);
const gw = (): ObservedGateway => stack.gateway;

/** Writes `text` on a raw connection and resolves with all the gateway answers once it closes. */
function exchange(text: string): Promise<string> {
  return exchangeUntilClose(gw().baseUrl, text);
}

async function refusals(): Promise<string[]> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('adcp_gateway_refusals_total{'));
}

describe('a request body that fails after its head is refused once', { timeout: TEST_TIMEOUT_MS }, () => {
  const head = 'POST /agents/ok/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n';
  for (const [label, text, status, reason] of [
    ['25 of 100 bytes, then nothing: 408 request_timeout', `${head}content-length: 100\r\n\r\n{"jsonrpc":"2.0","id":1,"`, 408, 'request_timeout'],
    ['a malformed chunk size: 400 malformed_http', `${head}transfer-encoding: chunked\r\n\r\nZZ\r\nabc\r\n`, 400, 'malformed_http'],
  ] as const) {
    test(`${label}, one refused line and one count (there were two)`, async () => {
      const before = gw().lines.length;
      const answer = await withTimeout(exchange(text), TEST_TIMEOUT_MS - 5_000, 'the answer and the close');
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.match(answer, new RegExp(`"reason":"${reason}"`));
      // Both refusals came before the connection closed (the second from its closing); the
      // metrics are read after the close.
      const counts = await refusals();
      const refused = gw().lines.slice(before).filter((l) => l.msg === 'refused');
      assert.deepEqual(
        refused.map((l) => ({ reason: l.reason, status: l.status })),
        [{ reason, status }],
      );
      assert.deepEqual(
        counts.filter((l) => l.includes(`reason="${reason}"`) || l.includes('reason="invalid_request"')),
        [`adcp_gateway_refusals_total{agent="_none",reason="${reason}"} 1`],
      );
    });
  }
});

/**
 * Reported in the same trial: an HTTP/1.1 request without a Host header got Node's bare 400
 * (chunked, empty body), with no log line and no count. RFC 9112 §3.2 makes it a 400: it is
 * now the documented `malformed_http` refusal, in JSON-RPC, logged and counted, the
 * connection closed. An HTTP/1.0 request needs no Host.
 */
describe('an HTTP/1.1 request without Host', { timeout: TEST_TIMEOUT_MS }, () => {
  test('400 malformed_http in JSON-RPC, one refused line, connection closed', async () => {
    const before = gw().lines.length;
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const answer = await withTimeout(exchange(`POST /agents/ok/mcp HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`), undefined, 'the answer');
    const [head, json] = answer.split('\r\n\r\n');
    assert.match(head ?? '', /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(head ?? '', /\r\nconnection: close(\r\n|$)/i);
    assert.equal(
      json,
      JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad request: an HTTP/1.1 request must carry a Host header.', data: { reason: 'malformed_http' } } }),
    );
    const refused = gw().lines.slice(before).filter((l) => l.msg === 'refused');
    assert.deepEqual(
      refused.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent })),
      [{ reason: 'malformed_http', status: 400, agent: 'ok' }],
    );
  });

  test('HTTP/1.0 without Host is served', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const answer = await withTimeout(exchange(`POST /agents/ok/mcp HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`), undefined, 'the answer');
    // The seller answers 500 to everything: the gateway forwarded it.
    assert.doesNotMatch(answer, /malformed_http/);
    assert.match(answer, /^HTTP\/1\.1 \d{3} /);
  });
});
