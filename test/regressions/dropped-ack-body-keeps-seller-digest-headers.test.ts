/**
 * Regression (read-only review 37, F2): a dropped acknowledgement body kept the seller's digest
 * and ETag headers. A notification answered 200 `{"status":"accepted"}` with `ETag`,
 * `Content-Digest` and `Content-MD5` reached the host as 202 with an empty body and all three
 * headers, which describe bytes the host never got (json-stage.ts dropAckBody never called
 * dropSellerBytesHeaders; headers.ts SELLER_BYTES_HEADERS: they pass only with those bytes).
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway answering a POSTed
 * notification with an acknowledgement body (JSON, then `text/plain` `OK`: the two paths that
 * drop one), each with `ETag`, `Content-Digest`, `Repr-Digest`, `Digest`, `Content-MD5`, plus
 * `Last-Modified` and `X-Seller-Trace` (controls: not about the bytes); then the empty 202 a
 * seller usually sends, with the same headers (the seller's bytes, unchanged: kept).
 * Expectation: the dropped body's answer is 202, no body, `Content-Length: 0`, no Content-Type,
 * none of the five seller-bytes headers, the two controls as sent; the empty 202 keeps all.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const BYTES_HEADERS = {
  etag: '"e1"',
  'content-digest': 'sha-256=:abc=:',
  'repr-digest': 'sha-256=:def=:',
  digest: 'SHA-256=ghi=',
  'content-md5': 'xyz',
} as const;
const CONTROLS = { 'last-modified': 'Tue, 01 Dec 2026 00:00:00 GMT', 'x-seller-trace': 't-1' } as const;

/** The answer under test: status, Content-Type (none when undefined), body. */
let answer: readonly [number, string | undefined, string] = [200, 'application/json', '{"status":"accepted"}'];

const stack = useSellerAndGateway(
  () =>
    startRawSeller((_req, res) => {
      const [status, type, body] = answer;
      res.writeHead(status, { ...BYTES_HEADERS, ...CONTROLS, ...(type === undefined ? {} : { 'content-type': type }) }).end(body);
    }),
  (seller) => startGateway(agentsYaml({ s: seller.url }, ['log_level: silent'])),
);

const NOTIFICATION = { jsonrpc: '2.0', method: 'notifications/initialized' };
const notify = () => withTimeout(rawPost(stack.gateway.agentUrl('s'), NOTIFICATION, { 'mcp-protocol-version': '2025-06-18' }), undefined, 'the POST');

/** The headers of `names` the host got (absent ones left out). */
function picked(headers: Headers, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = headers.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}

describe('a dropped acknowledgement body goes without the seller-bytes headers', () => {
  for (const [name, type, body] of [
    ['200 application/json {"status":"accepted"}', 'application/json', '{"status":"accepted"}'],
    ['200 text/plain OK', 'text/plain', 'OK'],
  ] as const) {
    test(name, { timeout: TEST_TIMEOUT_MS }, async () => {
      answer = [200, type, body];
      const r = await notify();
      assert.equal(r.status, 202);
      assert.equal(r.bytes, 0);
      assert.equal(r.headers.get('content-length'), '0');
      assert.equal(r.headers.get('content-type'), null);
      assert.deepEqual(picked(r.headers, Object.keys(BYTES_HEADERS)), {});
      assert.deepEqual(picked(r.headers, Object.keys(CONTROLS)), CONTROLS);
    });
  }

  test('control: an empty 202 (the seller bytes, unchanged) keeps them all', { timeout: TEST_TIMEOUT_MS }, async () => {
    answer = [202, undefined, ''];
    const r = await notify();
    assert.equal(r.status, 202);
    assert.equal(r.bytes, 0);
    assert.deepEqual(picked(r.headers, Object.keys(BYTES_HEADERS)), BYTES_HEADERS);
    assert.deepEqual(picked(r.headers, Object.keys(CONTROLS)), CONTROLS);
  });
});
