/**
 * Reported failure (a new user's trial, 2026-12-02): "the request's Content-Encoding is
 * ignored": a gzip-compressed JSON-RPC request was read as its compressed bytes and refused
 * as `parse_error` ("not valid JSON"), which sent the user looking for a JSON mistake. Now a
 * request body with any Content-Encoding but identity is refused for what it is: 415
 * `unsupported_content_encoding` with `Accept-Encoding: identity` (RFC 9110 §12.5.3), and the
 * seller never sees it. An explicit `identity` is forwarded as usual.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('a request body with a Content-Encoding', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}')),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  const json = Buffer.from(JSON.stringify(toolCall(1, 'get_products')));
  const post = (body: Buffer, coding: string): Promise<Response> =>
    withTimeout(
      fetch(stack.gateway.agentUrl('acme'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-encoding': coding, 'mcp-protocol-version': '2025-11-25' },
        body,
      }),
    );

  for (const [coding, body] of [
    ['gzip', gzipSync(json)],
    ['GZIP', gzipSync(json)],
    ['br', json],
    ['gzip, identity', gzipSync(json)],
  ] as const) {
    test(`Content-Encoding: ${coding} -> 415 unsupported_content_encoding, Accept-Encoding: identity, the seller not contacted`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const before = stack.seller.requests.length;
      const res = await post(body, coding);
      assert.equal(res.status, 415);
      assert.equal(res.headers.get('accept-encoding'), 'identity');
      assert.equal(
        await res.text(),
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `Unsupported Content-Encoding "${coding}" on the request: send the JSON body uncompressed.`, data: { reason: 'unsupported_content_encoding' } },
        }),
      );
      assert.equal(stack.seller.requests.length, before);
    });
  }

  test('Content-Encoding: identity is forwarded as usual', { timeout: TEST_TIMEOUT_MS }, async () => {
    const before = stack.seller.requests.length;
    const res = await post(json, 'identity');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '{"jsonrpc":"2.0","id":1,"result":{}}');
    assert.equal(stack.seller.requests.length, before + 1);
  });
});
