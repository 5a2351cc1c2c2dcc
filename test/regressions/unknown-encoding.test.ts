/**
 * Regression: a seller uses a content coding the gateway did not ask for.
 *
 * Input: a small tools/call result with `Content-Encoding: zstd` (the gateway asks for
 * `gzip, deflate, br`), then the same with `compress` and with `gzip;q=1` (a parameter is
 * not a coding).
 * Expectation: SERVICE_UNAVAILABLE `unsupported_encoding`, recovery `transient`, for the
 * request id; the body is never passed through undecoded: the host's body is exactly the
 * minted message (788 bytes for the tools/call `get_products` with id 1).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const CODINGS = ['zstd', 'compress', 'gzip;q=1'];

const stack = useHostileStack((seller) => Object.fromEntries(CODINGS.map((c, i) => [`c${i}`, seller.url('unknown-encoding', { coding: c })])));

describe('unknown encoding', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [i, coding] of CODINGS.entries()) {
    test(`Content-Encoding: ${coding} -> unsupported_encoding`, async () => {
      const r = await rawPost(stack.gateway.agentUrl(`c${i}`), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(r.status, 200);
      assert.equal(stack.seller.requestsFor('unknown-encoding').at(-1)?.headers['accept-encoding'], 'gzip, deflate, br');
      const expected = expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'unsupported_encoding' });
      assert.equal(r.text(), expected);
      assert.equal(r.bytes, 788);
      const m = r.json() as { id: number; result: { structuredContent: { adcp_error: { code: string; recovery: string } } } };
      assert.equal(m.id, 1);
      assert.equal(m.result.structuredContent.adcp_error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(m.result.structuredContent.adcp_error.recovery, 'transient');
      const line = await stack.gateway.exchangeLine(`c${i}`, 1);
      assert.equal(line.reason, 'unsupported_encoding');
    });
  }
});
