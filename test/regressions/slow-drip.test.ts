/**
 * Regression: a seller that drips its answer.
 *
 * Input: a tools/call (`create_media_buy`) answered with JSON headers, then one byte every
 * 50 ms; the agent's response_deadline_ms is 300.
 * Expectation: at the deadline the host gets SERVICE_UNAVAILABLE `deadline_exceeded`,
 * recovery `transient`, details { limit_ms: 300, observed_ms >= 300 }, for the request id, with the warning that
 * the seller may have completed the operation (a mutating tool); the host's body is exactly
 * that message (949 bytes), none of the dripped bytes; the upstream request is aborted (the
 * seller sees its connection close), so the drip stops.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorJson, observedMsAtLeast, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ drip: { url: seller.url('slow-drip', { interval_ms: 50 }), response_deadline_ms: 300 } }));

describe('slow drip', { timeout: TEST_TIMEOUT_MS }, () => {
  test('one byte per 50 ms against a 300 ms deadline: deadline_exceeded', async () => {
    const r = await rawPost(stack.gateway.agentUrl('drip'), toolCall(7, 'create_media_buy', { budget: 1 }), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    const observedMs = observedMsAtLeast(r.text(), 300);
    const expected = expectedErrorJson({ id: 7, method: 'tools/call', toolName: 'create_media_buy', reason: 'deadline_exceeded', limitMs: 300, observedMs });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 949 + 2 * `,"observed_ms":${observedMs}`.length + 2, 'the escaped copy in text adds two backslashes');
    const m = r.json() as { id: number; result: { isError: boolean; structuredContent: { adcp_error: { code: string; recovery: string; message: string; details: unknown } } } };
    assert.equal(m.id, 7);
    assert.equal(m.result.isError, true);
    const err = m.result.structuredContent.adcp_error;
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.equal(err.recovery, 'transient');
    assert.deepEqual(err.details, { reason: 'deadline_exceeded', limit_ms: 300, observed_ms: observedMs });
    assert.match(err.message, /the seller may have completed the operation, so re-read its state before retrying\.$/);
    const line = await stack.gateway.exchangeLine('drip', 7);
    assert.equal(line.outcome, 'local_error');
    assert.equal(line.reason, 'deadline_exceeded');
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
