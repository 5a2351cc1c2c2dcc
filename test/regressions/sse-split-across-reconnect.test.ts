/**
 * Regression: an oversized answer split across a reconnect (raw HTTP; the real SDK client
 * version is sse-resume-sdk-client.test.ts).
 *
 * Input (max_response_bytes 9216): a tools/call answered over SSE with 3 events of 2000
 * bytes with ids s1-1..s1-3, then the connection drops before any response. The host
 * resumes with GET and Last-Event-ID (the gateway token of s1-3); the seller replays 2 more
 * events of 2000 bytes (s1-4, s1-5).
 * Expectation: the POST stream ends plainly after the 3 events (6000 bytes, ids turned into
 * resume tokens): the host resumes. The seller gets its own id `s1-3` back. The count carries
 * over, with what the resume tokens added to the host's streams (a token's length over its
 * seller id's; s1-3's token carries the count before its own length, and the resume from it
 * adds that length: the host received it; test/regressions/resume-loop-exceeds-cumulative-bound.test.ts):
 * s1-4 ends at 8000 seller bytes + ~930 for the tokens of s1-1..s1-4, and is forwarded; s1-5
 * crosses 9216 (the limit was 8192 before tokens counted; raised so that s1-4 and its token
 * still fit): the final `message` event
 * RESPONSE_TOO_LARGE `sse_cumulative` for the ORIGINAL request id, limit_bytes 9216,
 * observed_bytes exactly 10000 + what the tokens of s1-1..s1-4 added. The resumed
 * body is exactly s1-4 (with its token) + that frame.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESUME_TOKEN, expectedErrorFrame, notificationFrame, withToken, RESUME_YAML, useHostileStack } from '../support/hostile-seller.js';
import { rawPost, sseMessages, toolCall, sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 9216;
const EVENT = 2000;
const stack = useHostileStack(
  (seller) => ({ split: { url: seller.url('sse-reconnect', { event_bytes: EVENT, first_events: 3, second_events: 2 }), max_response_bytes: LIMIT } }),
  RESUME_YAML,
);

describe('oversized result split across a reconnect', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the replay crosses the limit: sse_cumulative for the original id', async () => {
    const first = await rawPost(stack.gateway.agentUrl('split'), toolCall('r-1', 'get_products'), { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(first.status, 200);
    const tokens = sseIds(first.text());
    assert.equal(tokens.length, 3);
    for (const t of tokens) assert.match(t, RESUME_TOKEN);
    assert.equal(first.text(), [1, 2, 3].map((n, i) => withToken(notificationFrame(EVENT, `s1-${n}`), tokens[i]!)).join(''));
    assert.equal(first.bytes, 6000 - 3 * 'id: s1-1\n'.length + tokens.reduce((n, t) => n + `id: ${t}\n`.length, 0));

    const resumed = await fetch(stack.gateway.agentUrl('split'), {
      headers: { accept: 'text/event-stream', 'last-event-id': tokens[2]!, 'mcp-protocol-version': '2025-11-25' },
    });
    assert.equal(resumed.status, 200);
    const text = await resumed.text();
    const get = stack.seller.requestsFor('sse-reconnect').find((q) => q.method === 'GET');
    assert.equal(get?.headers['last-event-id'], 's1-3');

    const msgs = sseMessages(text);
    assert.equal(msgs.length, 2);
    const last = msgs[1] as { id: string; result: { structuredContent: { adcp_error: { details: { reason: string; observed_bytes: number } } } } };
    assert.equal(last.id, 'r-1');
    const observed = last.result.structuredContent.adcp_error.details.observed_bytes;
    const [token4] = sseIds(text);
    assert.match(token4!, RESUME_TOKEN);
    const added = (token: string): number => token.length - 's1-1'.length;
    const tokensAdded = added(tokens[0]!) + added(tokens[1]!) + added(tokens[2]!) + added(token4!);
    assert.equal(observed, 10_000 + tokensAdded);
    assert.ok(8000 + tokensAdded <= LIMIT, 's1-4 and its token fit');
    const frame = expectedErrorFrame({ id: 'r-1', method: 'tools/call', toolName: 'get_products', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed });
    const expected = withToken(notificationFrame(EVENT, 's1-4'), token4!) + frame;
    assert.equal(text, expected);
    assert.equal(Buffer.byteLength(text), Buffer.byteLength(expected));
  });
});
