/**
 * The `retry:` a graceful shutdown writes before each stream it ends plainly
 * (src/response/shutdown-retry.ts; a hostile operator's trial 53, F1): the config's
 * `shutdown_sse_retry_ms`, 0 for none, clamped to the exchange's ceiling; and the config's range
 * for the setting is the range of the `retry:` values the gateway forwards.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BOUNDS, DEFAULT_SHUTDOWN_SSE_RETRY_MS } from '../../src/config/defaults.js';
import { parseConfig } from '../../src/config/load.js';
import { SSE_RETRY_MAX_MS, SSE_RETRY_MIN_MS } from '../../src/response/sse-encode.js';
import { shutdownRetryFrame, shutdownRetryMs } from '../../src/response/shutdown-retry.js';

const AGENT = 'agents:\n  a: { url: http://127.0.0.1:1/mcp }\n';

describe('shutdown retry', () => {
  test('the config range is the forwarded retry: range; the default is 5000', () => {
    assert.deepEqual({ ...BOUNDS.sseRetry }, { min: SSE_RETRY_MIN_MS, max: SSE_RETRY_MAX_MS });
    assert.equal(DEFAULT_SHUTDOWN_SSE_RETRY_MS, 5000);
    assert.equal(parseConfig(AGENT, { env: {} }).shutdown_sse_retry_ms, 5000);
  });

  test('the frame: the value, clamped to the ceiling; none for 0 or a call that is not a shutdown', () => {
    assert.equal(shutdownRetryFrame(5000, SSE_RETRY_MAX_MS), 'retry: 5000\n\n');
    assert.equal(shutdownRetryFrame(300_000, 30_000), 'retry: 30000\n\n');
    assert.equal(shutdownRetryFrame(0, SSE_RETRY_MAX_MS), '');
    assert.equal(shutdownRetryFrame(undefined, SSE_RETRY_MAX_MS), '');
    assert.equal(shutdownRetryMs(500, 500), 500);
    assert.equal(shutdownRetryMs(0, 500), undefined);
  });

  test('shutdown_sse_retry_ms: 0 and 500 .. 300000 are accepted; anything else is a config error', () => {
    for (const ok of [0, 500, 2500, 300_000]) assert.equal(parseConfig(`shutdown_sse_retry_ms: ${ok}\n${AGENT}`, { env: {} }).shutdown_sse_retry_ms, ok);
    for (const bad of ['1', '499', '300001', '-1', '2.5', '"5000"']) {
      assert.throws(
        () => parseConfig(`shutdown_sse_retry_ms: ${bad}\n${AGENT}`, { env: {} }),
        (err: Error & { format?: () => string }) => /expected 0 \(no retry: field\) or an integer >= 500 and <= 300000 \(5 min\)/.test(err.format?.() ?? err.message),
        bad,
      );
    }
  });
});
