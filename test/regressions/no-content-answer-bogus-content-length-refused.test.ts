/**
 * Regression (read-only review 37, F6): a 204 with a bogus `Content-Length: 5000` answering a
 * notification got HTTP 502 `content_length` (read-body.ts: the declared length was compared
 * with `max_response_bytes`, 1,000 here, before a byte was read), although a 204 never has a
 * body, whatever its Content-Length (RFC 9112 §6.3: a 1xx, 204 or 304 response "is always
 * terminated by the first empty line after the header fields"; RFC 9110 §8.6: a server
 * "MUST NOT send a Content-Length header field in any response with a status code of ... 204").
 * Skipping that check alone was not enough: undici (7.x) frames the 204 without a body, then
 * finds the 0 bytes read differ from the declared length and fails the body with
 * `ResponseContentLengthMismatchError` (its socket destroyed), which the gateway reported as
 * `upstream_reset` (502). Now the JSON stage reads no body for a 204 (nor a 304, refused before
 * it: pipeline.ts): the body is empty, the stream released.
 *
 * Input: a raw node:http seller on 127.0.0.1 (agent `max_response_bytes: 1000`) answering a
 * POSTed notification with 204 and `Content-Length: 5000` (no Content-Type; `application/json`;
 * `application/json` and `Content-Encoding: gzip`) or `Content-Length: 500` (under the
 * limit: it was `upstream_reset`), a tools/call with 204, `Content-Length: 5000`
 * and `application/json`, then a tools/call answered normally.
 * Expectation: the notifications get 204, no body, outcome `ok`; the request gets
 * `upstream_not_mcp` for its id (an empty answer to a request, as a 204 without a
 * Content-Length gets), not `content_length` or `upstream_reset`; the last call its result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** The 204's headers by the method (a notification's) or tool name. */
const BOGUS: Record<string, Record<string, string>> = {
  'notifications/none': { 'content-length': '5000' },
  'notifications/json': { 'content-length': '5000', 'content-type': 'application/json' },
  'notifications/gzip': { 'content-length': '5000', 'content-type': 'application/json', 'content-encoding': 'gzip' },
  'notifications/under': { 'content-length': '500', 'content-type': 'application/json' },
  json_204: { 'content-length': '5000', 'content-type': 'application/json' },
};
const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string } };
      const bogus = BOGUS[msg.id === undefined ? (msg.method ?? '') : (msg.params?.name ?? '')];
      if (bogus !== undefined) return void res.writeHead(204, bogus).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(result(msg.id ?? 0));
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: 1000 } })),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const post = (message: unknown) => withTimeout(rawPost(stack.gateway.agentUrl('s'), message, HEADERS), undefined, 'the POST');

describe('a 204 with a bogus Content-Length has no body', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends Content-Length: 5000 on its 204', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/none' }) });
    assert.deepEqual([res.status, res.headers.get('content-length')], [204, '5000']);
    await res.arrayBuffer();
  });

  for (const [method, was] of [
    ['notifications/none', 'content_length'],
    ['notifications/json', 'content_length'],
    ['notifications/gzip', 'content_length'],
    ['notifications/under', 'upstream_reset: undici found 0 bytes of the 500 declared'],
  ]) {
    test(`${method}: 204 to the host, no body, outcome ok (was 502 ${was})`, async () => {
      const seen = stack.gateway.lines.length;
      const r = await post({ jsonrpc: '2.0', method });
      assert.deepEqual([r.status, r.bytes], [204, 0]);
      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === method && stack.gateway.lines.indexOf(l) >= seen);
      assert.deepEqual([line.outcome, line.reason ?? null], ['ok', null]);
    });
  }

  test('a request answered so: upstream_not_mcp for its id (was content_length)', async () => {
    const r = await post(toolCall(7, 'json_204'));
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id: 7, method: 'tools/call', toolName: 'json_204', reason: 'upstream_not_mcp', limitBytes: 1000, observedBytes: 0, upstreamStatus: 204 }));
  });

  test('the next call is answered as usual', async () => {
    const r = await post(toolCall(8, 'plain'));
    assert.deepEqual([r.status, r.text()], [200, result(8)]);
  });
});
