/**
 * Regression: one SSE event over max_sse_event_bytes, on a single `data:` line.
 *
 * Input (max_response_bytes 1048576, max_sse_event_bytes 2048), a tools/call answered over SSE
 * with (a) one event whose data is one line of 5000 bytes, properly terminated; (b) one
 * `data:` line that never ends (200000 bytes of `x`, then silence).
 * Expectation: RESPONSE_TOO_LARGE `sse_event` as the only event of the host's stream, for the
 * request id, and the stream ends: (a) limit_bytes 2048, observed_bytes 5000 (the event's
 * data bytes); (b) the parser's pending buffer is capped at the event limit + 65536 bytes of
 * slack, so the gateway does not wait for the line to end: limit_bytes 2048, observed_bytes
 * the bytes of the line read when it stopped (over 67584: the exchange line's
 * bytes_from_seller less the 15 of `event: message\n`; it was 67585 whatever was read:
 * test/regressions/sse-event-cap-observed-bytes.test.ts). The host's body is exactly that
 * frame each time (no seller byte).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { expectedErrorFrame, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const EVENT_LIMIT = 2048;
const stack = useHostileStack((seller) => {
  const agent = (params: Record<string, string | number>) => ({ url: seller.url('sse-data-line', params), max_response_bytes: 1048576, max_sse_event_bytes: EVENT_LIMIT });
  return { line: agent({ bytes: 5000 }), endless: agent({ bytes: 200_000, endless: 1 }) };
});

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('oversized single SSE event on one data: line', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a 5000-byte data line against a 2048-byte event limit: sse_event, observed 5000', async () => {
    const r = await call('line', 1);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const frame = expectedErrorFrame({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: 5000 });
    assert.equal(r.text(), frame);
    assert.equal(r.bytes, 991);
    const line = await stack.gateway.exchangeLine('line', 1);
    assert.equal(line.reason, 'sse_event');
    assert.equal(line.bytes_to_host, r.bytes);
  });

  test('a data line that never ends: sse_event at the parser cap, without waiting for the line', async () => {
    assert.equal(SSE_PENDING_SLACK_BYTES, 65536);
    const r = await call('endless', 2);
    const line = await stack.gateway.exchangeLine('endless', 2);
    assert.equal(line.reason, 'sse_event');
    const observed = (line.bytes_from_seller as number) - 'event: message\n'.length;
    assert.ok(observed > EVENT_LIMIT + SSE_PENDING_SLACK_BYTES, `observed_bytes ${observed}`);
    const frame = expectedErrorFrame({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: observed });
    assert.equal(r.text(), frame);
    assert.equal(r.bytes, Buffer.byteLength(frame));
  });
});
