/**
 * Regression: a decompression bomb, gzip and brotli.
 *
 * Input: a tools/call answered with 1 GiB of zeros compressed with (a) `Content-Encoding:
 * gzip`, level 9, to ~1 MB, (b) `Content-Encoding: br` to ~1.6 KB (honest Content-Length,
 * under the 4 MiB raw limit).
 * Expectation: RESPONSE_TOO_LARGE `decoded_bytes` for the request id, limit_bytes 4194304,
 * observed_bytes in (4194304, 4194304 + 16384] (the decoder stops within one decoder chunk of
 * the limit); the host's body is exactly the minted message; no `content-encoding` reaches
 * the host; the exchange log line says reason decoded_bytes with bytes_decoded ==
 * observed_bytes.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MIB, assertDecodedBytesError, brotliBomb, gzipBomb, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 4 * MIB;
const BOMBS = [
  { name: 'gzip', agent: 'gzip', mode: 'gzip-bomb', id: 'gz' },
  { name: 'brotli', agent: 'br', mode: 'brotli-bomb', id: 'br' },
] as const;

before(async () => {
  await Promise.all([gzipBomb(), brotliBomb()]); // made once (a few seconds), before the clock of any test starts
});
const stack = useHostileStack((seller) => Object.fromEntries(BOMBS.map((b) => [b.agent, seller.url(b.mode)])));

describe('compression bombs', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const { name, agent, id } of BOMBS) {
    test(`${name}: decoded_bytes near the limit, the host gets only the error`, async () => {
      const r = await rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
      const observed = assertDecodedBytesError(r, id, LIMIT);
      const line = await stack.gateway.exchangeLine(agent, id);
      assert.equal(line.reason, 'decoded_bytes');
      assert.equal(line.bytes_decoded, observed);
      assert.equal(line.bytes_to_host, r.bytes);
    });
  }
});
