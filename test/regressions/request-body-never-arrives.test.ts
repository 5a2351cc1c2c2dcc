/**
 * Reported failure (a new user's trial, 2026-12-02, "request_timeout does not say its
 * duration"): looking into it, there was none. Fastify turns Node's request timeout off, so a
 * host that sent a request head with `Content-Length: 100` and then 10 bytes, or nothing, held
 * its connection open forever; only a head slower than Node's 60 s head timeout got the 408.
 * Now `request_timeout_ms` (default 30 s) bounds the whole request: past it the host gets
 * 408 `request_timeout` in JSON-RPC, and the connection is closed. Measured here with a
 * 1-second timeout (no timing is asserted: the test waits for the answer, bounded).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { exchangeUntilClose } from '../helpers/http-wire.js';

describe('a host request whose body never arrives', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        if (req.url !== '/slow-sse') return void res.writeHead(500).end();
        // A result streamed over 2.5 s, well past the 1 s request timeout: the timeout covers the request only.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const progress = (n: number): string => `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n}}}\n\n`;
        res.write(progress(1));
        setTimeout(() => res.write(progress(2)), 1_200);
        setTimeout(() => res.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}\n\n'), 2_500);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url, slow: new URL('/slow-sse', seller.url).href }, ['log_level: silent', 'request_timeout_ms: 1000'])),
  );
  /** Sends `head` then `partial` on a raw socket and resolves with everything the gateway writes until it closes. */
  function sendPartial(partial: string): Promise<string> {
    const url = new URL(stack.gateway.agentUrl('acme'));
    return exchangeUntilClose(
      url.href,
      `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n${partial}`,
    );
  }

  const expectedBody = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Request timeout: the whole request did not arrive within request_timeout_ms.', data: { reason: 'request_timeout' } },
  });

  for (const [label, partial] of [
    ['10 of its 100 bytes', '{"jsonrpc"'],
    ['none of its 100 bytes', ''],
  ] as const) {
    test(`${label}: 408 request_timeout, then the connection is closed (it stayed open forever)`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const before = stack.seller.requests.length;
      const answer = await withTimeout(sendPartial(partial), TEST_TIMEOUT_MS - 2_000, 'the answer and the close');
      const [head, body] = answer.split('\r\n\r\n');
      assert.match(head ?? '', /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.match(head ?? '', /\r\nconnection: close(\r\n|$)/);
      assert.equal(body, expectedBody);
      assert.equal(stack.seller.requests.length, before);
    });
  }

  test('a request sent whole and answered with an SSE stream that lasts longer than request_timeout_ms is not cut', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(rawPost(stack.gateway.agentUrl('slow'), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-11-25' }));
    assert.equal(res.status, 200);
    assert.deepEqual(sseMessages(res.text()).slice(-1), [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } }]);
  });
});
