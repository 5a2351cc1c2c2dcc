/**
 * Regression: a gzip bomb.
 *
 * Input: a tools/call answered with `Content-Encoding: gzip` and 1 GiB of zeros compressed
 * to ~1 MB (honest Content-Length, under the 4 MiB raw limit).
 * Expectation: RESPONSE_TOO_LARGE `decoded_bytes` for the request id, limit_bytes 4194304,
 * observed_bytes in (4194304, 4194304 + 16384] (the decoder stops within one zlib chunk of
 * the limit); the host's body is exactly the minted message; no `content-encoding` reaches
 * the host; the exchange log line says reason decoded_bytes with bytes_decoded ==
 * observed_bytes.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DECODER_CHUNK_BYTES } from '../../src/response/decode.js';
import { MIB, expectedErrorJson, gzipBomb, startHostileSeller, startObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;

before(async () => {
  await gzipBomb(); // made once (a few seconds), before the clock of any test starts
});
const stack = useSellerAndGateway(startHostileSeller, (seller) =>
  startObservedGateway(['agents:', '  bomb:', `    url: ${seller.url('gzip-bomb')}`, ''].join('\n')),
);

describe('gzip bomb', { timeout: TEST_TIMEOUT_MS }, () => {
  test('decoded_bytes near the limit, the host gets only the error', async () => {
    const r = await rawPost(stack.gateway.agentUrl('bomb'), toolCall('gz', 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-encoding'), null);
    const m = r.json() as { id: string; result: { structuredContent: { adcp_error: { code: string; details: { reason: string; observed_bytes: number } } } } };
    assert.equal(m.id, 'gz');
    assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'decoded_bytes');
    const observed = m.result.structuredContent.adcp_error.details.observed_bytes;
    assert.ok(observed > LIMIT && observed <= LIMIT + DECODER_CHUNK_BYTES, `observed_bytes ${observed}`);
    const expected = expectedErrorJson({ id: 'gz', method: 'tools/call', toolName: 'get_products', reason: 'decoded_bytes', limitBytes: LIMIT, observedBytes: observed });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await stack.gateway.exchangeLine('bomb', 'gz');
    assert.equal(line.reason, 'decoded_bytes');
    assert.equal(line.bytes_decoded, observed);
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
