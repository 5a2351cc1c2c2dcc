/**
 * Reported failures (a new user's trial, 2026-12-02):
 * 1. "A DELETE body with `Content-Type: application/json` is corrupted on its way to the
 *    seller": `{"a":1}` (7 bytes) reached the seller as `{"type":"Buffer","data":[123,...]}`
 *    (49 bytes). Only a POST's body was handed to @fastify/reply-from as bytes; for any other
 *    method reply-from took the request's body itself and, the type being JSON, re-encoded
 *    that Buffer with `JSON.stringify`. A DELETE's body then went out as the host's bytes with
 *    its Content-Type, as a POST's does; since a hostile new-user trial 16, L2 it is not
 *    forwarded at all (a DELETE carries no JSON-RPC message; forwarded, a `tools/call` in it was
 *    answered outside the tool's limits: delete-body-forwarded-escapes-limits.test.ts), so the
 *    seller gets no body, neither corrupted nor as sent, and no Content-Length or Content-Type.
 * 2. "Response headers named in the seller's `Connection` header are passed to the host":
 *    with `connection: close, x-secret` the host got `x-secret: s`. Hop-by-hop headers
 *    (RFC 9110 §7.6.1), those the Connection header names included, never pass; the request
 *    direction already strips them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}';

describe('a DELETE body, and headers the seller names in Connection', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-hop, X-Other', 'x-hop': 'secret-hop', 'x-other': 'o', 'x-kept': 'k' }).end(ANSWER);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  for (const [type, body] of [
    ['application/json', '{"a":1}'],
    ['application/json; charset=utf-8', '{"jsonrpc":"2.0","id":5,"method":"x"}'],
    ['text/plain', 'plain text'],
  ] as const) {
    test(`DELETE with a ${type} body: the seller gets the DELETE without it, nor its length or type`, async () => {
      const before = stack.seller.requests.length;
      const res = await withTimeout(fetch(stack.gateway.agentUrl('acme'), { method: 'DELETE', headers: { 'content-type': type, 'mcp-session-id': 's-1' }, body }));
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.equal(stack.seller.requests.length, before + 1);
      const seen = stack.seller.requests.at(-1)!;
      assert.equal(seen.method, 'DELETE');
      assert.equal(seen.body.length, 0);
      assert.equal(seen.headers['content-length'], undefined);
      assert.equal(seen.headers['content-type'], undefined);
      assert.equal(seen.headers['mcp-session-id'], 's-1');
    });
  }

  test('DELETE without a body: none is sent', async () => {
    const res = await withTimeout(fetch(stack.gateway.agentUrl('acme'), { method: 'DELETE', headers: { 'mcp-session-id': 's-1' } }));
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const seen = stack.seller.requests.at(-1)!;
    assert.equal(seen.method, 'DELETE');
    assert.equal(seen.body.length, 0);
  });

  test('the response headers the seller names in Connection do not reach the host; the others do', async () => {
    const res = await withTimeout(
      fetch(stack.gateway.agentUrl('acme'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(await res.text(), ANSWER);
    assert.equal(res.headers.get('x-hop'), null);
    assert.equal(res.headers.get('x-other'), null);
    assert.equal(res.headers.get('x-kept'), 'k');
  });
});
