/**
 * Regression: stacked content codings.
 *
 * Input (limit: the 4 MiB default):
 * (a) `Content-Encoding: gzip, gzip` around a 1 GiB gzip bomb: the INNER (last) layer inflates;
 * (b) `Content-Encoding: gzip, gzip` whose OUTER layer inflates: it yields 64 MiB (a stored,
 *     level-0 gzip stream of zeros) that the inner layer would then decode;
 * (c) a small result gzipped 5 times, `Content-Encoding: gzip, gzip, gzip, gzip, gzip`;
 * (d) the same gzipped 4 times (the most the gateway undoes).
 * Expectation: (a) and (b) RESPONSE_TOO_LARGE `decoded_bytes`, observed_bytes in (4194304,
 * 4194304 + 16384]: every layer is bounded, not just the last one, and the exchange's final
 * decoded count never passes that either. (c) SERVICE_UNAVAILABLE `unsupported_encoding`
 * before any decoder is made. (d) passes: the host gets the decoded message byte for byte,
 * without Content-Encoding. In (a)-(c) the host's body is exactly the minted message.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DECODER_CHUNK_BYTES } from '../../src/response/decode.js';
import { MIB, assertDecodedBytesError, expectedErrorJson, gzipBomb, middleLayerBomb, resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;

before(async () => {
  await Promise.all([gzipBomb(), middleLayerBomb()]);
});
const stack = useHostileStack((seller) => ({
  inner: seller.url('stacked-encodings', { bomb: 'inner' }),
  middle: seller.url('stacked-encodings', { bomb: 'middle' }),
  five: seller.url('stacked-encodings', { depth: 5 }),
  four: seller.url('stacked-encodings', { depth: 4 }),
}));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

async function assertDecodedBreach(agent: string, id: number): Promise<void> {
  assertDecodedBytesError(await call(agent, id), id, LIMIT);
  const line = await stack.gateway.exchangeLine(agent, id);
  assert.equal(line.reason, 'decoded_bytes');
  assert.ok((line.bytes_decoded as number) <= LIMIT + DECODER_CHUNK_BYTES, `bytes_decoded ${String(line.bytes_decoded)}`);
}

describe('stacked encodings', { timeout: TEST_TIMEOUT_MS }, () => {
  test('gzip, gzip with the bomb in the inner layer: decoded_bytes', () => assertDecodedBreach('inner', 1));

  test('gzip, gzip with the bomb in the outer layer: the intermediate layer is bounded too', () => assertDecodedBreach('middle', 2));

  test('five stacked codings: unsupported_encoding', async () => {
    const r = await call('five', 3);
    const expected = expectedErrorJson({ id: 3, method: 'tools/call', toolName: 'get_products', reason: 'unsupported_encoding' });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 788);
    const line = await stack.gateway.exchangeLine('five', 3);
    assert.equal(line.reason, 'unsupported_encoding');
    assert.equal(line.bytes_decoded, 0);
  });

  test('four stacked codings pass, decoded', async () => {
    const r = await call('four', 4);
    const want = resultMessage(4, { content: [{ type: 'text', text: 'stacked' }] });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-encoding'), null);
    assert.equal(r.text(), want);
    assert.equal(r.bytes, Buffer.byteLength(want));
  });
});
