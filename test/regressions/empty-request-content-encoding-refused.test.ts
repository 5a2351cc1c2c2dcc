/**
 * Reported failure (a hostile trial 26, L3): an empty `Content-Encoding:` header on a host's
 * POST was read as a coding: 415 `unsupported_content_encoding`, "Unsupported Content-Encoding
 * \"\" on the request", while docs/errors.md gives that refusal for a coding "other than
 * identity" and the seller side reads an empty value, or empty list elements, as no coding
 * (response/decode.ts parseContentEncoding; RFC 9110 §5.6.1: a recipient ignores empty list
 * elements). `identity, identity` was refused the same way.
 *
 * Now the host's header is read by the same parser: a value of empty elements and `identity`
 * only (`""`, `" "`, `","`, `"identity, "`, `", identity, identity"`) is no coding, and the
 * request is forwarded as one without the header would be (the header as sent, as `identity`
 * always was); a value naming any other coding, among empty elements too, is still refused.
 *
 * Input: raw host POSTs (node:http, so the empty value is sent as written) to the real gateway
 * in front of a raw seller on 127.0.0.1. Expectation: the seller's answer byte for byte and
 * the seller reached, or the exact 415 answer and the seller not reached.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}';
const JSON_BODY = Buffer.from(JSON.stringify(toolCall(1, 'get_products')));

/** A POST with `Content-Encoding: <coding>` written as given; the status, the Accept-Encoding and the body. */
function post(url: string, coding: string, body: Buffer): Promise<{ status: number; acceptEncoding: string | undefined; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-encoding': coding,
          'mcp-protocol-version': '2025-11-25',
          'content-length': String(body.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, acceptEncoding: res.headers['accept-encoding'], text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('a request Content-Encoding of empty elements and identity only is no coding', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER)),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  for (const coding of ['', ' ', ',', ' , ', 'identity, ', ', identity, identity', 'IDENTITY,,']) {
    test(`Content-Encoding: ${JSON.stringify(coding)} -> forwarded, the seller's answer`, async () => {
      const before = stack.seller.requests.length;
      const res = await withTimeout(post(stack.gateway.agentUrl('acme'), coding, JSON_BODY));
      assert.deepEqual([res.status, res.text], [200, ANSWER]);
      assert.equal(stack.seller.requests.length, before + 1);
      assert.deepEqual(stack.seller.requests.at(-1)!.body, JSON_BODY);
    });
  }

  for (const [coding, body] of [
    [', gzip', gzipSync(JSON_BODY)],
    ['identity, , br', JSON_BODY],
    [' ,zstd', JSON_BODY],
  ] as const) {
    test(`Content-Encoding: ${JSON.stringify(coding)} -> 415 unsupported_content_encoding, the seller not contacted`, async () => {
      const before = stack.seller.requests.length;
      const res = await withTimeout(post(stack.gateway.agentUrl('acme'), coding, body));
      assert.equal(res.status, 415);
      assert.equal(res.acceptEncoding, 'identity');
      // Node's parser drops a value's leading and trailing whitespace (RFC 9110 §5.5).
      const shown = coding.trim();
      assert.equal(
        res.text,
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `Unsupported Content-Encoding "${shown}" on the request: send the JSON body uncompressed.`, data: { reason: 'unsupported_content_encoding' } },
        }),
      );
      assert.equal(stack.seller.requests.length, before);
    });
  }
});
