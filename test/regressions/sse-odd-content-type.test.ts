/**
 * Regression: SSE claimed with odd casing and parameters.
 *
 * Input: tools/call answered with `Content-Type: Text/Event-Stream; charset=utf-8` and one
 * result event (id `o1`) whose data is (a) 300 bytes, (b) 2000 bytes against
 * max_sse_event_bytes 1024.
 * Expectation: the media type is compared by its parsed essence, so both are SSE and bounded
 * as SSE: (a) the host gets `Content-Type: text/event-stream` and the event byte for byte,
 * its id turned into a resume token; (b) RESPONSE_TOO_LARGE `sse_event`, limit_bytes 1024,
 * observed_bytes 2000, for the request id, as the only event (991 bytes).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESUME_TOKEN, expectedErrorFrame, messageFrame, resultMessageOfSize, withToken, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({
  small: seller.url('sse-odd-content-type', { bytes: 300 }),
  big: { url: seller.url('sse-odd-content-type', { bytes: 2000 }), max_sse_event_bytes: 1024 },
}));

const call = (agent: string, id: number) => rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

describe('SSE with odd casing and parameters', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a normal event passes as SSE', async () => {
    const r = await call('small', 1);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const token = /^id: (.*)$/m.exec(r.text())?.[1] ?? '';
    assert.match(token, RESUME_TOKEN);
    const expected = withToken(messageFrame(resultMessageOfSize(1, 300), 'o1'), token);
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
  });

  test('an oversized event is bounded as SSE: sse_event', async () => {
    const r = await call('big', 2);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const frame = expectedErrorFrame({ id: 2, method: 'tools/call', toolName: 'get_products', reason: 'sse_event', limitBytes: 1024, observedBytes: 2000 });
    assert.equal(r.text(), frame);
    assert.equal(r.bytes, 991);
    const line = await stack.gateway.exchangeLine('big', 2);
    assert.equal(line.reason, 'sse_event');
  });
});
