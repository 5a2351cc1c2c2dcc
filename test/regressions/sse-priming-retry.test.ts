/**
 * Regression (not an error): the 2025-11-25 priming event and `retry:` through the gateway.
 *
 * Input: a tools/call answered over SSE the way SDK servers with an event store do: first the
 * priming event `id: p-0` / `retry: 25` / `data: ` (an id with empty data), then the result
 * event `id: p-1`.
 * Expectation: the host gets `retry: 500` (sets its reconnection delay: the seller's 25 clamped
 * to the gateway's least, sse-encode.ts SSE_RETRY_MIN_MS;
 * test/regressions/sse-retry-field-passes-through.test.ts), the priming event
 * with its id turned into a gateway resume token and its empty data kept, then the result
 * event (id as a token), then the stream ends: exactly
 * `retry: 500\n\n` + `id: <t0>\ndata: \n\n` + `id: <t1>\nevent: message\ndata: <result>\n\n`.
 * The priming token is a working resume point: a GET with it as Last-Event-ID reaches the
 * seller carrying `p-0` (the seller answers 405, passed through).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESUME_TOKEN, messageFrame, resultMessage, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, toolCall, sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const stack = useHostileStack((seller) => ({ primed: seller.url('sse-priming', { retry_ms: 25 }) }));

describe('priming event and retry', { timeout: TEST_TIMEOUT_MS }, () => {
  test('pass through, ids as resume tokens', async () => {
    const r = await rawPost(stack.gateway.agentUrl('primed'), toolCall('p', 'get_products'), { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const tokens = sseIds(r.text());
    assert.equal(tokens.length, 2);
    for (const t of tokens) assert.match(t, RESUME_TOKEN);
    const result = resultMessage('p', { content: [{ type: 'text', text: 'primed' }] });
    const expected = `retry: 500\n\nid: ${tokens[0]}\ndata: \n\n` + messageFrame(result, tokens[1]);
    assert.equal(r.text(), expected);
    assert.equal(r.bytes, Buffer.byteLength(expected));
    const line = await stack.gateway.exchangeLine('primed', 'p');
    assert.equal(line.outcome, 'ok');

    // The priming token is a resume point: the seller gets its own id back. This seller has no
    // GET stream (405), so the resumed request's id is answered on the host's SSE stream instead
    // of being left pending (regression: new-user-findings, "a resume the seller refuses").
    const resumed = await fetch(stack.gateway.agentUrl('primed'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens[0]!, 'mcp-protocol-version': '2025-11-25' } });
    const resumedText = await resumed.text();
    assert.equal(resumed.status, 200);
    assert.match(resumedText, /"id":"p".*"reason":"upstream_status","upstream_status":405/s);
    const get = stack.seller.requestsFor('sse-priming').find((q) => q.method === 'GET');
    assert.equal(get?.headers['last-event-id'], 'p-0');
  });
});
