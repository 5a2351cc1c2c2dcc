/**
 * Regression: compressed data that decodes to (almost) nothing, on a request's SSE stream.
 *
 * Input (max_response_bytes 65536, sse_idle_timeout_ms 3000): a tools/call answered with
 * `Content-Encoding: gzip` and a gzip header followed by 8 MiB of EMPTY stored deflate blocks
 * (`00 00 00 FF FF`, what Z_SYNC_FLUSH writes with no input): wire bytes, zero decoded
 * bytes; (b) `Content-Encoding: gzip, gzip` whose OUTER layer inflates ~97 KB into 64 MiB of
 * such blocks; each claimed as (1) `application/json` and (2) `text/event-stream`.
 * Expectation: raw and decoded bytes are bounded on the SSE path as on the JSON path:
 * (a) RESPONSE_TOO_LARGE `raw_bytes`, limit_bytes 65536, observed_bytes in (65536, 65536 +
 * 262144] (one network read), as the request's answer; (b) RESPONSE_TOO_LARGE `decoded_bytes`,
 * limit_bytes 65536 (the intermediate layer is bounded: on SSE its count may run one
 * decoder chunk past the limit + 64 KiB before it trips, so the cumulative bound of the
 * final output always trips first on real data), for the request id, before the idle timer.
 * Bug fixed: the SSE path opened the body with no raw and no decoded bound (only the
 * cumulative bound on the final output), so such a stream was read and inflated without
 * any bound until sse_idle_timeout_ms (5 min by default), then ended `sse_idle`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DECODER_CHUNK_BYTES } from '../../src/response/decode.js';
import { SSE_DECODED_SLACK_BYTES } from '../../src/response/pipeline.js';
import { useHostileStack } from '../support/hostile-seller.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 65536;
/** Upper bound of one network read as undici hands it over (the raw overshoot unit). */
const READ = 256 * 1024;
const stack = useHostileStack((seller) => {
  const agent = (params: Record<string, string | number>) => ({ url: seller.url('compressed-flood', params), max_response_bytes: LIMIT, sse_idle_timeout_ms: 3000 });
  return {
    'json-wire': agent({ mib: 8 }),
    'sse-wire': agent({ mib: 8, sse: 1 }),
    'json-middle': agent({ mib: 64, middle: 1 }),
    'sse-middle': agent({ mib: 64, middle: 1, sse: 1 }),
  };
});

type ToolError = { id: number; result: { structuredContent: { adcp_error: { code: string; details: { reason: string; limit_bytes: number; observed_bytes: number } } } } };

async function errorOf(agent: string, id: number, sse: boolean): Promise<ToolError['result']['structuredContent']['adcp_error']> {
  const r = await rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
  assert.equal(r.status, 200);
  const m = (sse ? sseMessages(r.text()) : [r.json()]) as ToolError[];
  assert.equal(m.length, 1);
  assert.equal(m[0]!.id, id);
  return m[0]!.result.structuredContent.adcp_error;
}

describe('compressed flood', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const sse of [false, true]) {
    const kind = sse ? 'sse' : 'json';
    test(`${kind}: empty deflate blocks on the wire -> raw_bytes`, async () => {
      const err = await errorOf(`${kind}-wire`, 1, sse);
      assert.equal(err.code, 'RESPONSE_TOO_LARGE');
      assert.equal(err.details.reason, 'raw_bytes');
      assert.equal(err.details.limit_bytes, LIMIT);
      assert.ok(err.details.observed_bytes > LIMIT && err.details.observed_bytes <= LIMIT + READ, `observed_bytes ${err.details.observed_bytes}`);
      const line = await stack.gateway.exchangeLine(`${kind}-wire`, 1);
      assert.equal(line.reason, 'raw_bytes');
      assert.equal(line.bytes_decoded, 0);
    });

    test(`${kind}: an outer layer inflating into empty blocks -> decoded_bytes`, async () => {
      const err = await errorOf(`${kind}-middle`, 2, sse);
      assert.equal(err.code, 'RESPONSE_TOO_LARGE');
      assert.equal(err.details.reason, 'decoded_bytes');
      assert.equal(err.details.limit_bytes, LIMIT);
      const most = LIMIT + (sse ? SSE_DECODED_SLACK_BYTES : 0) + DECODER_CHUNK_BYTES;
      assert.ok(err.details.observed_bytes > LIMIT && err.details.observed_bytes <= most, `observed_bytes ${err.details.observed_bytes}`);
      const line = await stack.gateway.exchangeLine(`${kind}-middle`, 2);
      assert.equal(line.reason, 'decoded_bytes');
      assert.equal(line.bytes_decoded, 0);
    });
  }
});
