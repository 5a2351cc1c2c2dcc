/**
 * Regression: a seller that sends its response headers, then nothing.
 *
 * Input: a tools/call answered with (a) `application/json` headers and no byte of body
 * (response_deadline_ms 300); (b) `text/event-stream` headers and no byte at all, not even
 * a comment (sse_idle_timeout_ms 200; response_deadline_ms and sse_deadline_ms 10 s, so only
 * the idle timer can end it).
 * Expectation: (a) SERVICE_UNAVAILABLE `deadline_exceeded`, details { limit_ms: 300, observed_ms >= 300 }, as
 * the HTTP 200 JSON answer for the request id, exactly the minted message (703 bytes);
 * (b) the host's SSE stream (already started) carries exactly one event, the final `message`
 * event with SERVICE_UNAVAILABLE `sse_idle`, details { limit_ms: 200, observed_ms >= 200 }, for the request id,
 * and ends: the host's body is exactly that frame (693 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedErrorFrame, observedMsAtLeast, expectedErrorJson, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({
  json: { url: seller.url('headers-then-silence'), response_deadline_ms: 300 },
  sse: { url: seller.url('headers-then-silence', { type: 'sse' }), response_deadline_ms: 10000, sse_idle_timeout_ms: 200, sse_deadline_ms: 10000 },
}));

const call = (agent: string, id: string) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('headers then silence', { timeout: TEST_TIMEOUT_MS }, () => {
  test('JSON headers, no body: deadline_exceeded', async () => {
    const r = await call('json', 'j1');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type')?.split(';')[0], 'application/json');
    const observedMs = observedMsAtLeast(r.text(), 300);
    const expected = expectedErrorJson({ id: 'j1', method: 'tools/call', toolName: 'get_products', reason: 'deadline_exceeded', limitMs: 300, observedMs });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 703 + 2 * `,"observed_ms":${observedMs}`.length + 2, 'the escaped copy in text adds two backslashes');
    const line = await stack.gateway.exchangeLine('json', 'j1');
    assert.equal(line.reason, 'deadline_exceeded');
    assert.equal(line.bytes_from_seller, 0);
  });

  test('SSE headers, then silence: sse_idle as the final event', async () => {
    const r = await call('sse', 's1');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const observedMs = observedMsAtLeast(r.text(), 200);
    const expected = expectedErrorFrame({ id: 's1', method: 'tools/call', toolName: 'get_products', reason: 'sse_idle', limitMs: 200, observedMs });
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, 693 + 2 * `,"observed_ms":${observedMs}`.length + 2, 'the escaped copy in text adds two backslashes');
    const line = await stack.gateway.exchangeLine('sse', 's1');
    assert.equal(line.reason, 'sse_idle');
    assert.equal(line.bytes_to_host, r.bytes);
  });
});
