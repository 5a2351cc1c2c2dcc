/**
 * Regression (a hostile new user's trial 15, L3): a seller whose response head is over the
 * 16 KiB undici reads it with (`maxHeaderSize`, Node's `http.maxHeaderSize`) was answered
 * `upstream_reset`, "The seller's connection closed, or its response could not be read",
 * with no hint that its headers were too large (the trial's hdr4.mjs: 1,500 headers of 10
 * bytes, one of 70,000 bytes, 100 of 1,000).
 *
 * Now undici's UND_ERR_HEADERS_OVERFLOW is `upstream_headers_too_large`, the reason a head too
 * large for the host gets (test/regressions/set-cookie-path-overflows-host-headers.test.ts):
 * HTTP 200, SERVICE_UNAVAILABLE for the request's id, `limit_bytes` 16384 (undici's limit),
 * no `observed_bytes` (undici stops reading at the limit), the message naming the headers and
 * the limit, and, the request having been delivered, the warning that a mutation may have run;
 * the exchange line says the same reason.
 *
 * Input: a seller on 127.0.0.1 that reads the request, then writes one of the three heads
 * and a valid body; a `create_media_buy` tools/call through the real gateway, POSTed with
 * fetch. Control: a head that is no HTTP at all is still `upstream_reset`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

/** Shape name -> [header count, bytes of each value], as the trial's hdr4.mjs. */
const SHAPES: Record<string, [number, number]> = {
  many_small: [1500, 10],
  one_huge: [1, 70_000],
  hundred_1k: [100, 1000],
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { shape: string } } };
      const socket = res.socket as Socket;
      const shape = msg.params.arguments.shape;
      if (shape === 'garbage') return void socket.end('SMTP 220 mail.example ESMTP ready\r\n\r\n');
      const [count, bytes] = SHAPES[shape]!;
      const body = toolResponse(msg.id, { content: [{ type: 'text', text: 'after the headers' }] });
      let head = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
      for (let n = 0; n < count; n++) head += `x-h-${n}: ${'h'.repeat(bytes)}\r\n`;
      socket.end(`${head}\r\n${body}`);
    }),
  (seller) => startObservedGateway(agentsYaml({ hdr: seller.url })),
);

const call = (id: number, shape: string) =>
  withTimeout(rawPost(stack.gateway.agentUrl('hdr'), toolCall(id, 'create_media_buy', { shape }), { 'mcp-protocol-version': '2025-06-18' }), undefined, 'the POST');

describe('a seller head over undici’s 16 KiB is upstream_headers_too_large, not upstream_reset', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 0;
  for (const [shape, [count, bytes]] of Object.entries(SHAPES)) {
    test(`${count} headers of ${bytes} bytes`, async () => {
      const r = await call(++id, shape);
      assert.equal(r.status, 200);
      // The reason first (the exact bytes below are built from the catalog).
      assert.equal(/"reason":"(\w+)"/.exec(r.text())?.[1], 'upstream_headers_too_large');
      const expected = expectedErrorJson({ id, method: 'tools/call', toolName: 'create_media_buy', reason: 'upstream_headers_too_large', limitBytes: 16_384 });
      assert.equal(r.text(), expected);
      const err = (r.json() as { result: { structuredContent: { adcp_error: { code: string; message: string; details: unknown } } } }).result.structuredContent.adcp_error;
      assert.equal(err.code, 'SERVICE_UNAVAILABLE');
      assert.equal(
        err.message,
        "The seller's response headers exceeded the 16384-byte limit for a response head; the seller may have completed the operation, so re-read its state before retrying.",
      );
      assert.deepEqual(err.details, { reason: 'upstream_headers_too_large', limit_bytes: 16_384 });
      const line = await stack.gateway.exchangeLine('hdr', id);
      assert.deepEqual([line.status, line.outcome, line.reason, line.upstream_status], [200, 'local_error', 'upstream_headers_too_large', null]);
    });
  }

  test('control: a head that is no HTTP stays upstream_reset', async () => {
    const r = await call(++id, 'garbage');
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: 'create_media_buy', reason: 'upstream_reset' }));
    const line = await stack.gateway.exchangeLine('hdr', id);
    assert.equal(line.reason, 'upstream_reset');
  });
});
