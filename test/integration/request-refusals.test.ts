/**
 * Host requests refused before any seller is contacted (ARCHITECTURE §3): a 4xx with a
 * JSON-RPC error body for the request's id (or null), and the seller sees nothing.
 * Also the host -> seller header policy (ARCHITECTURE §5).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import http from 'node:http';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { withTimeout } from '../helpers/timeout.js';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString() || '{}') as { id?: number }).id ?? null;
      res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id as number, { content: [{ type: 'text', text: 'ok' }] }));
    }),
  (seller) =>
    startGateway(
      [
        'log_level: silent',
        'agents:',
        '  s:',
        `    url: ${seller.url}`,
        '    max_request_bytes: 1000',
        '    headers:',
        '      authorization: Bearer ${SELLER_TOKEN}',
        '',
      ].join('\n'),
      { env: { SELLER_TOKEN: 'from-config' } },
    ),
);

function refusal(body: unknown) {
  return body as { jsonrpc: string; id: unknown; error: { code: number; message: string; data: { reason: string } } };
}

describe('refusals', () => {
  test('a body over max_request_bytes is 413 with a JSON-RPC error; the seller is never contacted', async () => {
    const before = stack.seller.requests.length;
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(1, 'x', { pad: 'p'.repeat(2000) }));
    assert.equal(r.status, 413);
    assert.equal(r.headers.get('content-type'), 'application/json');
    const b = refusal(r.json());
    assert.equal(b.jsonrpc, '2.0');
    assert.equal(b.id, null);
    assert.equal(b.error.data.reason, 'request_too_large');
    assert.equal(stack.seller.requests.length, before);
  });

  test('malformed JSON is 400 with -32700 and id null', async () => {
    const before = stack.seller.requests.length;
    const r = await rawPost(stack.gateway.agentUrl('s'), '{"jsonrpc":"2.0","id":1,');
    assert.equal(r.status, 400);
    const b = refusal(r.json());
    assert.equal(b.error.code, -32700);
    assert.equal(b.id, null);
    assert.equal(b.error.data.reason, 'parse_error');
    assert.equal(stack.seller.requests.length, before);
  });

  test('an invalid X-Max-Response-Bytes is 400 invalid_request for the request id', async () => {
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(9, 'x'), { 'x-max-response-bytes': '12abc' });
    assert.equal(r.status, 400);
    const b = refusal(r.json());
    assert.equal(b.id, 9);
    assert.equal(b.error.code, -32600);
    assert.equal(b.error.data.reason, 'invalid_request');
  });

  test('PUT on an MCP endpoint is 405 with Allow', async () => {
    const res = await fetch(stack.gateway.agentUrl('s'), { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST, GET, DELETE');
    assert.equal(refusal(await res.json()).error.data.reason, 'method_not_allowed');
  });

  // Found by a new user: methods Fastify does not route (TRACE, PROPFIND, ...) fell to the 404 handler.
  for (const method of ['TRACE', 'PROPFIND']) {
    test(`${method} on an MCP endpoint is 405 with Allow too (it was 404 not_found)`, async () => {
      const url = new URL(stack.gateway.agentUrl('s'));
      const res = await withTimeout(
        new Promise<{ status: number | undefined; allow: string | undefined; body: string }>((resolve, reject) => {
          const req = http.request({ host: url.hostname, port: url.port, method, path: url.pathname }, (r) => {
            let body = '';
            r.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: r.statusCode, allow: r.headers.allow, body }));
          });
          req.on('error', reject).end();
        }),
      );
      assert.deepEqual({ status: res.status, allow: res.allow }, { status: 405, allow: 'POST, GET, DELETE' });
      assert.equal(refusal(JSON.parse(res.body)).error.data.reason, 'method_not_allowed');
    });
  }

  test('another path is 404 not_found with a JSON-RPC body', async () => {
    const res = await fetch(`${stack.gateway.baseUrl}/mcp`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 404);
    assert.equal(refusal(await res.json()).error.data.reason, 'not_found');
  });
});

describe('header policy, host -> seller', () => {
  test('config headers replace the host’s, gateway headers are not forwarded, hop-by-hop stripped', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(stack.gateway.agentUrl('s'), {
      method: 'POST',
      headers: {
      'content-type': 'application/json',
      authorization: 'Bearer from-host',
      'x-max-response-bytes': '500',
      'mcp-protocol-version': '2025-06-18',
      'mcp-session-id': 'sess-1',
      'accept-encoding': 'gzip, br',
      'keep-alive': 'timeout=5',
      'x-adcp-gateway-exchange': 'spoofed',
      expect: '100-continue',
      },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify(toolCall(2, 'x')));
    });
    assert.equal(status, 200);
    const seen = stack.seller.requests.at(-1)!;
    assert.equal(seen.headers.authorization, 'Bearer from-config');
    assert.equal(seen.headers['x-max-response-bytes'], undefined);
    assert.equal(seen.headers['x-adcp-gateway-exchange'], undefined);
    assert.equal(seen.headers['keep-alive'], undefined);
    assert.equal(seen.headers.expect, undefined);
    assert.equal(seen.headers['accept-encoding'], 'gzip, deflate, br');
    assert.equal(seen.headers['mcp-protocol-version'], '2025-06-18');
    assert.equal(seen.headers['mcp-session-id'], 'sess-1');
    assert.equal(seen.headers.host, new URL(stack.seller.url).host);
    assert.equal(seen.body.toString(), JSON.stringify(toolCall(2, 'x')));
  });
});
