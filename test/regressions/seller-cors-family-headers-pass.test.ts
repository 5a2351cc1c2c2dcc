/**
 * Regression (a new user's trial 9, F8): some seller response headers of the CORS family, and
 * the gateway's own header names, reached the host. The README says the gateway "passes on no
 * seller's CORS headers", but only the six `Access-Control-*` names of the Fetch CORS
 * protocol were stripped: `Access-Control-Allow-Private-Network: true`,
 * `Cross-Origin-Resource-Policy: cross-origin` (the seller choosing which sites may embed the
 * gateway origin's answers), `Timing-Allow-Origin: *` passed, and so did a forged
 * `X-Max-Response-Bytes: 1` and `X-Adcp-Gateway-Exchange: forged` (the gateway's header
 * names: configuration.md calls the first the gateway's and the second reserved).
 * Now every `Access-Control-*` and `Cross-Origin-*` name, `Timing-Allow-Origin` and the two
 * gateway names are stripped (src/response/headers.ts isStrippedResponseHeader).
 *
 * Input (raw seller on 127.0.0.1): every answer carries those headers (the six CORS names,
 * `Access-Control-Allow-Private-Network`, an invented `Access-Control-Future-Thing`,
 * `Cross-Origin-Resource-Policy`, `-Opener-Policy`, `-Embedder-Policy` and its
 * `-Report-Only` form, `Timing-Allow-Origin`, `X-Max-Response-Bytes`,
 * `X-Adcp-Gateway-Exchange`, some written in mixed case) beside `Mcp-Session-Id` and
 * `X-Seller-Trace` (controls): a tools/call answered with 200 JSON and with 200 SSE, the
 * seller's own 404, a notification's 202, and the standalone GET stream; the host sends an
 * `Origin` of the MCP Inspector (`http://localhost:6274`, listed in `allowed_origins`).
 * Expectation: the host gets exactly the headers below for each answer: the gateway's
 * framing and its SSE headers, the seller's `Content-Type` and the two controls, nothing of
 * the CORS family nor the gateway's names.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const FAMILY = {
  'Access-Control-Allow-Origin': '*',
  'access-control-allow-credentials': 'true',
  'access-control-allow-methods': 'POST, GET',
  'access-control-allow-headers': '*',
  'access-control-expose-headers': '*',
  'access-control-max-age': '86400',
  'Access-Control-Allow-Private-Network': 'true',
  'access-control-future-thing': 'x',
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'cross-origin-opener-policy': 'unsafe-none',
  'cross-origin-embedder-policy': 'unsafe-none',
  'cross-origin-embedder-policy-report-only': 'require-corp',
  'Timing-Allow-Origin': '*',
  'X-Max-Response-Bytes': '1',
  'x-adcp-gateway-exchange': 'forged',
};
const CONTROL = { 'mcp-session-id': 's-1', 'x-seller-trace': 't-1' };
const NOT_FOUND = '{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Session not found"}}';
const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'n' } });
const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'hi' }] });
const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const headers = { ...FAMILY, ...CONTROL };
      if (req.method === 'GET') return void res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).end(frame(NOTE));
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; params?: { name?: string } };
      if (msg.id === undefined) return void res.writeHead(202, headers).end();
      switch (msg.params?.name) {
        case 'json':
          return void res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(result(msg.id));
        case 'sse':
          return void res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).end(frame(result(msg.id)));
        default:
          return void res.writeHead(404, { ...headers, 'content-type': 'application/json' }).end(NOT_FOUND);
      }
    }),
  // Listed: a GET with an unlisted Origin is refused (a page's WebSocket or EventSource:
  // hostile trial 35, F1), and this test's GET stream must reach the seller.
  (seller) => startObservedGateway(agentsYaml({ s: seller.url }, ['allowed_origins: ["http://localhost:6274"]'])),
);

const HOST = { 'mcp-protocol-version': '2025-06-18', origin: 'http://localhost:6274' };
const post = (message: unknown) => withTimeout(rawPost(stack.gateway.agentUrl('s'), message, HOST), undefined, 'the POST');

/** The answer's header fields, `date` with its value replaced (the clock's). */
function headerSet(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = name === 'date' ? '<date>' : value;
  return out;
}

const KEEP_ALIVE = { connection: 'keep-alive', 'keep-alive': 'timeout=72', date: '<date>' };
const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', 'transfer-encoding': 'chunked' };

describe("the seller's CORS-family headers and the gateway's own header names never reach the host", { timeout: TEST_TIMEOUT_MS }, () => {
  test('200 JSON: exactly the framing, the seller\'s Content-Type and the controls', async () => {
    const r = await post(toolCall(1, 'json'));
    assert.equal(r.status, 200);
    assert.equal(r.text(), result(1));
    assert.deepEqual(headerSet(r.headers), { ...CONTROL, ...KEEP_ALIVE, 'content-type': 'application/json', 'content-length': String(r.bytes) });
  });

  test('200 SSE: exactly the SSE headers and the controls', async () => {
    const r = await post(toolCall(2, 'sse'));
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(result(2)));
    assert.deepEqual(headerSet(r.headers), { ...CONTROL, ...KEEP_ALIVE, ...SSE });
  });

  test("the seller's own 404: passed through, the same headers stripped", async () => {
    const r = await post(toolCall(3, 'missing'));
    assert.equal(r.status, 404);
    assert.equal(r.text(), NOT_FOUND);
    assert.deepEqual(headerSet(r.headers), { ...CONTROL, ...KEEP_ALIVE, 'content-type': 'application/json', 'content-length': String(r.bytes) });
  });

  test("a notification's 202 without a body", async () => {
    const r = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(r.status, 202);
    assert.equal(r.bytes, 0);
    assert.deepEqual(headerSet(r.headers), { ...CONTROL, ...KEEP_ALIVE, 'content-length': '0' });
  });

  test('the standalone GET stream', async () => {
    const res = await fetch(stack.gateway.agentUrl('s'), { headers: { ...HOST, accept: 'text/event-stream' } });
    assert.equal(res.status, 200);
    assert.equal(await withTimeout(res.text(), 5_000, 'GET stream'), frame(NOTE));
    assert.deepEqual(headerSet(res.headers), { ...CONTROL, ...KEEP_ALIVE, ...SSE });
  });
});
