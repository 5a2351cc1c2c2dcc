/**
 * Regression: an oversized answer split across many small SSE events.
 *
 * Input (max_response_bytes 65536): a tools/call answered over SSE with 100 events of
 * exactly 1024 bytes each (logging notifications, no ids, no response), 102400 bytes in all;
 * each event is far under the per-event bound.
 * Expectation: the cumulative bound of the request's stream breaks: the 64 events that end
 * within the first 65536 bytes are forwarded byte for byte, then the final `message` event
 * RESPONSE_TOO_LARGE `sse_cumulative` for the request id, limit_bytes 65536, observed_bytes
 * in (65536, 65536 + 1024] (counted through the slice that crossed), and the stream ends.
 * The host's body is exactly 64 x 1024 bytes + that frame.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorFrame, notificationFrame, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 65536;
const EVENT = 1024;
const stack = useHostileStack((seller) => ({ many: { url: seller.url('sse-many-events', { count: 100, event_bytes: EVENT }), max_response_bytes: LIMIT } }));

describe('oversized result split across many events', { timeout: TEST_TIMEOUT_MS }, () => {
  test('sse_cumulative at the limit point, the events before it delivered', async () => {
    const r = await rawPost(stack.gateway.agentUrl('many'), toolCall('m-1', 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    const msgs = sseMessages(r.text());
    assert.equal(msgs.length, 65);
    const last = msgs.at(-1) as { id: string; result: { structuredContent: { adcp_error: { details: { reason: string; observed_bytes: number } } } } };
    assert.equal(last.id, 'm-1');
    assert.equal(last.result.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    const observed = last.result.structuredContent.adcp_error.details.observed_bytes;
    assert.ok(observed > LIMIT && observed <= LIMIT + EVENT, `observed_bytes ${observed}`);
    const frame = expectedErrorFrame({ id: 'm-1', method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed });
    const expected = notificationFrame(EVENT).repeat(LIMIT / EVENT) + frame;
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 64 * 1024 + Buffer.byteLength(frame));
    const line = await stack.gateway.exchangeLine('many', 'm-1');
    assert.equal(line.reason, 'sse_cumulative');
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
