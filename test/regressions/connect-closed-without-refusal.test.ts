/**
 * Regression (a hostile new user's trial 15, L3a, Low): a `CONNECT` request on the main port
 * (`CONNECT 127.0.0.1:4100 HTTP/1.1`, any target) got its connection closed with no response,
 * no `refused` line and no count, while the README says every method, one Fastify does not
 * route included, gets a `refused` line. Node's HTTP server hands a CONNECT to the server's
 * `connect` listener, out of HTTP, and destroys the connection when there is none.
 * Now the gateway listens for it (errors/connect-refusal.ts) and refuses it as any other
 * method no route takes: 405 `method_not_allowed` with `Allow` on an MCP endpoint's path, 404
 * `not_found` naming the target elsewhere; id null, `Connection: close`, one `refused` line
 * (`http_method` `CONNECT`), one count; then the connection closes. A request pipelined before
 * it is answered first.
 *
 * Input: a gateway before a raw seller; raw TCP: `CONNECT 127.0.0.1:4100`, `CONNECT
 * /agents/s/mcp` (with bytes after the head), and `GET /healthz` then `CONNECT x:1` in one write.
 * Expected: exactly the answers below, the connection closed after each refusal, the lines and
 * counts as said, the seller never contacted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { exchangeUntilClose } from '../helpers/http-wire.js';
import { refusedOnce } from '../helpers/refusal-count.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [] }))),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

/** The raw answer the gateway writes for a refusal of `reason` with `message` (no Date: written on the socket, as the parser's refusals are). */
function refusal(status: string, reason: string, message: string, allow = false): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason } } });
  return (
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\n${allow ? 'allow: POST, GET, DELETE\r\n' : ''}` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

describe('CONNECT is refused as other methods the gateway does not take (was: the connection closed, nothing said)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('CONNECT 127.0.0.1:4100: 404 not_found naming the target, a refused line, a count', async () => {
    const { answer, refused } = await refusedOnce(stack, 'not_found', () =>
      exchangeUntilClose(stack.gateway.baseUrl, 'CONNECT 127.0.0.1:4100 HTTP/1.1\r\nHost: 127.0.0.1:4100\r\n\r\n'),
    );
    assert.equal(answer, refusal('404 Not Found', 'not_found', 'No route for CONNECT 127.0.0.1:4100: MCP endpoints are /agents/<agent>/mcp.'));
    assert.deepEqual(refused, [{ reason: 'not_found', status: 404, agent: null, http_method: 'CONNECT' }]);
  });

  test('CONNECT /agents/s/mcp (bytes after its head): 405 method_not_allowed with Allow, the agent named', async () => {
    const { answer, refused } = await refusedOnce(stack, 'method_not_allowed', () =>
      exchangeUntilClose(stack.gateway.baseUrl, 'CONNECT /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    );
    assert.equal(answer, refusal('405 Method Not Allowed', 'method_not_allowed', 'Method not allowed: MCP endpoints accept POST, GET, DELETE.', true));
    assert.deepEqual(refused, [{ reason: 'method_not_allowed', status: 405, agent: 's', http_method: 'CONNECT' }]);
  });

  test('GET /healthz then CONNECT x:1 in one write: the health answer first, then the refusal', async () => {
    const { answer, refused } = await refusedOnce(stack, 'not_found', () =>
      exchangeUntilClose(stack.gateway.baseUrl, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nCONNECT x:1 HTTP/1.1\r\nHost: x\r\n\r\n'),
    );
    const expected = refusal('404 Not Found', 'not_found', 'No route for CONNECT x:1: MCP endpoints are /agents/<agent>/mcp.');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"status":"ok"\}HTTP\/1\.1 404 /);
    assert.equal(answer.slice(answer.indexOf('{"status":"ok"}') + '{"status":"ok"}'.length), expected);
    assert.deepEqual(refused, [{ reason: 'not_found', status: 404, agent: null, http_method: 'CONNECT' }]);
  });
});
