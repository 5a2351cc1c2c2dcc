/**
 * Regression: events on the standalone GET stream that break the per-event bound.
 *
 * Decision (documented in src/response/sse-stage.ts and docs): the GET stream carries server
 * notifications, not the answer to a request, so there is no id to answer with an error.
 * An event over max_sse_event_bytes is DROPPED, logged at warn level ("SSE
 * stream: event dropped", with agent, reason and observed_bytes) and counted in the exchange
 * line (`reason`); the stream STAYS OPEN. Ending it would make the host's client reconnect
 * straight into the same event (a reconnect loop).
 *
 * Input (max_response_bytes 1048576, max_sse_event_bytes 2048): the host opens the GET
 * stream; the seller sends g1 (small), g2 (2049 bytes of data), g3 (small), g4: one `data:`
 * line of 100000 bytes, past the parser's cap (2048 + 65536), only then its line break and
 * blank line, then g5 and g6 (small), then ends the stream.
 * Expectation: the host receives exactly g1, g3, g5 and g6 (ids turned into resume tokens),
 * nothing of g2 or g4, and the stream ends only when the seller ends it (outcome `ok`). Two
 * warnings: the first drop's, sse_event with observed_bytes 2049, then the stream end's
 * summary of the later drops (src/response/sse-drop-log.ts: drop warnings are throttled per
 * stream, a new user's trial 9, F5): one more sse_event, two in all, its largest
 * observed_bytes the bytes of g4's line read when the cap broke: over 67584, at most its
 * 100006 (it was the cap + 1, 67585, whatever was read:
 * test/regressions/sse-event-cap-observed-bytes.test.ts; how far past the cap depends on where
 * the seller's bytes were cut into reads). The exchange line's `events_dropped` says 2 too.
 * The seller sees ONE GET.
 * Bug fixed: after the parser's buffer cap terminated it (g4), the next chunk made the
 * parser throw, which ended the GET stream: g5 and g6 were lost and the client reconnected.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESUME_TOKEN, messageFrame, withToken, useHostileStack } from '../support/hostile-seller.js';
import { sseMessages, sseIds } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { dropLinesOf } from '../helpers/drop-lines.js';

const stack = useHostileStack((seller) => ({
  notes: { url: seller.url('get-stream', { event_bytes: 2048, endless_bytes: 100_000 }), max_response_bytes: 1048576, max_sse_event_bytes: 2048 },
}));

const note = (n: number) => messageFrame(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `g${n}` } }), `g${n}`);

describe('standalone GET stream: an event over the per-event bound', { timeout: TEST_TIMEOUT_MS }, () => {
  test('is dropped and logged; the stream stays open and later events flow', async () => {
    const res = await fetch(stack.gateway.agentUrl('notes'), { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const text = await withTimeout(res.text(), 10_000, 'GET stream');

    const msgs = sseMessages(text) as Array<{ params: { data: string } }>;
    assert.deepEqual(
      msgs.map((m) => m.params.data),
      ['g1', 'g3', 'g5', 'g6'],
    );
    const tokens = sseIds(text);
    assert.equal(tokens.length, 4);
    for (const t of tokens) assert.match(t, RESUME_TOKEN);
    const expected = [1, 3, 5, 6].map((n, i) => withToken(note(n), tokens[i]!)).join('');
    assert.equal(text, expected);
    assert.equal(Buffer.byteLength(text), Buffer.byteLength(expected));

    const gets = stack.seller.requestsFor('get-stream').filter((q) => q.method === 'GET');
    assert.equal(gets.length, 1);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'notes');
    assert.equal(line.outcome, 'ok');
    assert.equal(line.reason, 'sse_event');
    assert.equal(line.bytes_to_host, Buffer.byteLength(text));
    assert.deepEqual(line.events_dropped, { sse_event: 2 });
    const drops = dropLinesOf(stack.gateway.lines, 'notes');
    assert.deepEqual(
      drops.map((l) => [l.level, l.msg, l.reason, l.dropped, l.dropped_total, l.stream_ended]),
      [
        [40, 'SSE stream: event dropped', 'sse_event', undefined, undefined, undefined],
        [40, 'SSE stream: events dropped', undefined, { sse_event: 1 }, { sse_event: 2 }, true],
      ],
    );
    assert.equal(drops[0]!.observed_bytes, 2049);
    const g4 = drops[1]!.max_observed_bytes as number;
    assert.ok(g4 > 2048 + 65536 && g4 <= 'data: '.length + 100_000, `observed_bytes ${g4}`);
  });
});
