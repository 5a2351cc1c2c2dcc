/**
 * Regression: a seller that keeps a request's SSE stream alive with comments and never answers.
 *
 * Input: a tools/call answered with SSE headers, then `: keepalive` every 20 ms, forever
 * (bounded in the seller at 10000); sse_idle_timeout_ms 1000 (50 comment intervals, so a
 * loaded machine cannot make it fire), sse_deadline_ms 2500.
 * Expectation: comments reset the idle timer but not the deadline: the stream ends with
 * SERVICE_UNAVAILABLE `sse_deadline`, details { limit_ms: 2500, observed_ms >= 2500 }, recovery `transient`, as the
 * final `message` event for the request id. The host's body is k forwarded comments
 * (`: keepalive\n`, 12 bytes each, k >= 1) then exactly that frame (719 bytes with observed_ms left out): nothing else.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorFrame, observedMsAtLeast, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({
  ka: { url: seller.url('sse-keepalive-forever', { interval_ms: 20 }), sse_idle_timeout_ms: 1000, sse_deadline_ms: 2500 },
}));

describe('endless keep-alive comments', { timeout: TEST_TIMEOUT_MS }, () => {
  test('end by sse_deadline, not sse_idle', async () => {
    const r = await rawPost(stack.gateway.agentUrl('ka'), toolCall(11, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const text = r.text();
    const observedMs = observedMsAtLeast(text, 2500);
    const frame = expectedErrorFrame({ id: 11, method: 'tools/call', toolName: 'get_products', reason: 'sse_deadline', limitMs: 2500, observedMs });
    assert.equal(Buffer.byteLength(frame), 719 + 2 * `,"observed_ms":${observedMs}`.length + 2);
    assert.ok(text.endsWith(frame), text.slice(-300));
    const head = text.slice(0, text.length - frame.length);
    assert.match(head, /^(: keepalive\n)+$/);
    const k = head.length / ': keepalive\n'.length;
    assert.equal(r.bytes, k * 12 + Buffer.byteLength(frame));
    const line = await stack.gateway.exchangeLine('ka', 11);
    assert.equal(line.reason, 'sse_deadline');
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
