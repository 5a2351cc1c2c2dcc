/**
 * Regression (hostile trial 54, F5a): `request_header_too_large` said the head may be 16 KiB,
 * but a 32 KB head of 4,000 `X-a: 1` lines was accepted and forwarded. What Node's HTTP server
 * does (measured on Node 20.20): its maximum header size (16,384) counts only the request target and the
 * bytes of each field name and value (not the method, the version, the colons, the line
 * ends), and apart from it Node keeps only the first 1,000 header fields of a request in
 * `req.headers` (its parser's default `maxHeaderPairs`, 2,000 array entries) and silently
 * drops the rest. So a head with more fields was forwarded truncated: an `Origin` (or a second
 * `Host`, a `Sec-Fetch-Site`, an `Mcp-Session-Id`) after 1,000 padding fields was never seen
 * by the checks, and never reached the seller.
 *
 * Now a request with more than 1,000 header fields is refused from its head, on every path:
 * 431 `request_header_too_large`, id null, with a message naming the count,
 * `Connection: close`, nothing forwarded (src/request/header-field-count.ts).
 *
 * Input: a raw seller recording what reaches it; a gateway in front of it; raw hosts on
 * 127.0.0.1 POSTing a tools/call with 1,100 `X-Pad: 1` fields then `Origin:
 * http://evil.example`, and GET /healthz with 1,100 fields.
 * Expected: exactly the 431 answer each, the seller gets nothing, one refusal counted each.
 * Control: 900 padding fields and a last `X-Last: 1` are forwarded whole (the seller sees
 * `x-last`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_products', arguments: {} } });
const MESSAGE =
  'Request header fields too large: the request has more than 1000 header fields (Node keeps no more, and the rest would be dropped unseen): send fewer.';
const BODY_431 = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: MESSAGE, data: { reason: 'request_header_too_large' } } });

const pad = (n: number): string => 'X-Pad: 1\r\n'.repeat(n);
const post = (fields: string): string =>
  `POST /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n${fields}content-length: ${CALL.length}\r\n\r\n${CALL}`;

describe('a request head with more header fields than Node keeps (hostile trial 54, F5a)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(toolResponse(1, { content: [{ type: 'text', text: 'ok' }] }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );
  const port = (): number => Number(new URL(stack.gateway.baseUrl).port);
  const count = async (): Promise<number> => refusalCountIn(await stack.gateway.app.gateway.metrics.render(), 'request_header_too_large');

  async function assertRefused(request: string): Promise<void> {
    const seen = stack.seller.requests.length;
    const before = await count();
    const wire = await writeAndRead(port(), request, [], 5_000);
    assert.equal(wire.closed, true);
    const [head, body] = wire.text.split('\r\n\r\n', 2) as [string, string];
    assert.equal(head.split('\r\n')[0], 'HTTP/1.1 431 Request Header Fields Too Large', wire.text.slice(0, 300));
    assert.match(head, /\r\nconnection: close(\r\n|$)/i);
    assert.equal(body, BODY_431);
    assert.equal(stack.seller.requests.length, seen, 'nothing reached the seller');
    assert.equal((await count()) - before, 1);
  }

  test('1,100 padding fields, then Origin: http://evil.example: 431, not forwarded without it', async () => {
    await assertRefused(post(`${pad(1100)}Origin: http://evil.example\r\n`));
  });

  test('GET /healthz with 1,100 fields: 431 too', async () => {
    await assertRefused(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${pad(1100)}\r\n`);
  });

  test('control: 900 padding fields and a last one are forwarded whole', async () => {
    const seen = stack.seller.requests.length;
    const wire = await writeAndRead(port(), post(`${pad(900)}X-Last: 1\r\nConnection: close\r\n`), [], 5_000);
    assert.equal(wire.text.split('\r\n')[0], 'HTTP/1.1 200 OK');
    const got = stack.seller.requests.slice(seen);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers['x-last'], '1');
  });
});
