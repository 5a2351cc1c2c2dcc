/**
 * Regression (hostile trial 54, F2): a GET to an MCP endpoint (the standalone stream request)
 * sent with `Content-Length: 10` and only 5 body bytes, or with a chunked body left open, was
 * forwarded as usual (a GET's body is never read: Fastify reads none for a bodyless method)
 * and answered with the seller's `200` chunked SSE head; at request_timeout_ms Node's request
 * timeout then fired for the request whose body never came, and the gateway wrote a whole
 * `HTTP/1.1 408 Request Timeout` answer (`{"reason":"request_timeout"}`) inside that open
 * chunked body, no terminating chunk (the host's parser failed, HPE_INVALID_CHUNK_SIZE). The
 * request was counted twice: +1 `adcp_gateway_exchanges_total` (outcome ok) and +1
 * `adcp_gateway_refusals_total{reason="request_timeout"}`, while the README has each request in
 * at most one of the two.
 *
 * MCP's GET (open or resume a stream) carries no body (MCP Streamable HTTP; RFC 9110 §9.3.1: a
 * GET's content has no defined semantics). Now a GET to an MCP endpoint that declares one
 * (`Content-Length` other than 0, or any `Transfer-Encoding`) is refused from its head: 400
 * `invalid_request`, id null, `Connection: close`, its body not read, nothing sent to the
 * seller; and a request timeout never writes an answer inside a response already started
 * (errors/client-error.ts; test/unit/client-error-started-response.test.ts).
 *
 * Input: a raw seller answering a GET with an SSE head and one notification, then open; a
 * gateway with request_timeout_ms 1000; raw TCP hosts on 127.0.0.1 sending the GET with
 * `Content-Length: 10` and 5 bytes, or `Transfer-Encoding: chunked` and one chunk, or
 * `Expect: 100-continue` and no body, each then left open until the gateway closes the
 * connection.
 * Expected: exactly one response on the wire, `400`, `connection: close`, a JSON-RPC error
 * (id null, -32600, reason invalid_request); the seller got no GET; one refused line and one
 * `invalid_request` refusal counted per request, no `request_timeout` refusal, no exchange.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';

const NOTE = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } })}\n\n`;
const HEAD = 'GET /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\nmcp-session-id: s-1\r\n';
const MESSAGE =
  "Invalid Request: a GET to an MCP endpoint carries no body (it opens or resumes a stream: MCP Streamable HTTP), and this one declares one (Content-Length other than 0, or Transfer-Encoding); it was not read, nor sent to the seller: send the GET without a body.";

describe('a GET declaring a body it never sends whole (hostile trial 54, F2)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(NOTE); // then open: only the host ends it
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url }, ['request_timeout_ms: 1000'])),
  );
  const port = (): number => Number(new URL(stack.gateway.baseUrl).port);

  /** The counts the README has a request in at most one of, as the gateway serves them now. */
  async function counts(): Promise<{ exchanges: number; invalid: number; timeout: number }> {
    const text = await stack.gateway.app.gateway.metrics.render();
    let exchanges = 0;
    for (const line of text.split('\n')) if (line.startsWith('adcp_gateway_exchanges_total{') && line.includes('agent="s"')) exchanges += Number(line.split(' ').at(-1));
    return { exchanges, invalid: refusalCountIn(text, 'invalid_request'), timeout: refusalCountIn(text, 'request_timeout') };
  }

  for (const [name, framing, part] of [
    ['Content-Length: 10, 5 bytes sent', 'Content-Length: 10\r\n', 'abcde'],
    ['a chunked body left open', 'Transfer-Encoding: chunked\r\n', '5\r\nabcde\r\n'],
    ['Expect: 100-continue, no 100 Continue, nothing sent', 'Expect: 100-continue\r\nContent-Length: 10\r\n', ''],
  ] as const) {
    test(`${name}: one answer, 400 invalid_request from the head, counted once, nothing forwarded`, async () => {
      const before = await counts();
      const getsBefore = stack.seller.requests.filter((r) => r.method === 'GET').length;
      const refusedBefore = stack.gateway.lines.filter((l) => l.msg === 'refused').length;
      const wire = await writeAndRead(port(), `${HEAD}${framing}\r\n`, part === '' ? [] : [part], 10_000);
      assert.equal(wire.closed, true, 'the gateway closes the connection');
      const heads = wire.text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      assert.deepEqual(heads, ['HTTP/1.1 400'], `exactly one response head: ${JSON.stringify(wire.text.slice(0, 400))}`);
      const [head, body] = wire.text.split('\r\n\r\n', 2) as [string, string];
      assert.match(head, /\r\nconnection: close(\r\n|$)/i);
      assert.doesNotMatch(head, /transfer-encoding/i);
      assert.deepEqual(JSON.parse(body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: MESSAGE, data: { reason: 'invalid_request' } } });
      assert.equal(stack.seller.requests.filter((r) => r.method === 'GET').length, getsBefore, 'the seller got no GET');
      const after = await counts();
      assert.deepEqual(
        { exchanges: after.exchanges - before.exchanges, invalid: after.invalid - before.invalid, timeout: after.timeout - before.timeout },
        { exchanges: 0, invalid: 1, timeout: 0 },
      );
      const refused = stack.gateway.lines.filter((l) => l.msg === 'refused').slice(refusedBefore);
      assert.deepEqual(
        refused.map((l) => ({ reason: l.reason, status: l.status, http_method: l.http_method, agent: l.agent })),
        [{ reason: 'invalid_request', status: 400, http_method: 'GET', agent: 's' }],
      );
    });
  }
});
