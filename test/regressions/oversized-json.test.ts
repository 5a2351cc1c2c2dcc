/**
 * Regression: a seller answers a tools/call with a JSON body over max_response_bytes.
 *
 * Input: a 5 MiB tools/call result (limit: the 4 MiB default), (a) announced with an honest
 * Content-Length of 5242880, (b) chunked, without Content-Length.
 * Expectation: HTTP 200 with exactly one JSON-RPC message for the request id, nothing of the
 * seller's body: (a) RESPONSE_TOO_LARGE `content_length`, limit_bytes 4194304,
 * observed_bytes 5242880 (the announced length), refused before the body is read; (b)
 * RESPONSE_TOO_LARGE `raw_bytes`, limit_bytes 4194304, observed_bytes in (4194304, 4194304 +
 * one read], counted as the bytes arrive. recovery `correctable` (a tools/call can be
 * narrowed). The host's body is byte for byte the minted message (its length asserted).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
const BODY = 5 * MIB;
const stack = useHostileStack((seller) => ({
  'with-length': seller.url('oversized-json', { bytes: BODY }),
  chunked: seller.url('oversized-json', { bytes: BODY, content_length: 0 }),
}));

type ToolError = { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; recovery: string; details: Record<string, number | string> } } } };

describe('oversized JSON', { timeout: TEST_TIMEOUT_MS }, () => {
  test('with Content-Length: content_length, refused on the header', async () => {
    const r = await rawPost(stack.gateway.agentUrl('with-length'), toolCall('big-1', 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const expected = expectedErrorJson({ id: 'big-1', method: 'tools/call', toolName: 'get_products', reason: 'content_length', limitBytes: LIMIT, observedBytes: BODY });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    // The wording, pinned once (docs/errors.md): the error is the host's answer, not the seller's bytes.
    const m = r.json() as ToolError;
    assert.equal(m.id, 'big-1');
    assert.equal(m.result.isError, true);
    const err = m.result.structuredContent.adcp_error;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.recovery, 'correctable');
    assert.deepEqual(err.details, { reason: 'content_length', limit_bytes: 4194304, observed_bytes: 5242880 });
    assert.equal(
      (err as unknown as { message: string }).message,
      "The seller announced a 5242880-byte response (Content-Length), over the 4194304-byte limit; narrow the request with fields, max_results or a cursor.",
    );
    assert.equal(r.bytes, 1053);
    const line = await stack.gateway.exchangeLine('with-length', 'big-1');
    assert.equal(line.outcome, 'local_error');
    assert.equal(line.reason, 'content_length');
    assert.equal(line.bytes_to_host, r.bytes);
  });

  test('without Content-Length: raw_bytes, counted as the bytes arrive', async () => {
    const r = await rawPost(stack.gateway.agentUrl('chunked'), toolCall(2, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const m = r.json() as ToolError;
    const observed = m.result.structuredContent.adcp_error.details.observed_bytes as number;
    assert.ok(observed > LIMIT && observed <= LIMIT + 256 * 1024, `observed_bytes ${observed}`);
    const expected = expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'raw_bytes', limitBytes: LIMIT, observedBytes: observed });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await stack.gateway.exchangeLine('chunked', 2);
    assert.equal(line.reason, 'raw_bytes');
    assert.equal(line.bytes_from_seller, observed);
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
