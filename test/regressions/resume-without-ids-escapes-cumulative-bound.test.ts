/**
 * Reported failure (a review of src/resume and src/routing, 2026-12-05, High): the cumulative
 * bound on a request's SSE stream (`max_response_bytes`, "counted across Last-Event-ID
 * resumes") was bypassed once per resume. The tail ledger (resume/tail-ledger.ts) notes the
 * bytes a stream sent after the last token the host got with an event, but a RESUMED stream
 * that forwarded no event with an id had no such token: it noted nothing. The host still
 * holds the token it resumed from, so every later resume from it started from that token's
 * count again: a seller answering each resume with ~30 KB of notifications without an id and
 * a drop gave the host 372,389 bytes for one call over 10 resumes, `max_response_bytes: 100000`,
 * each resumed exchange logged `resumable_end`, never `sse_cumulative`.
 * Now the resumed stream starts with the token it resumes from (exchange.ts
 * `stream.resumeToken`, sse-event-ids.ts `lastEventToken`), so its bytes are noted under it and
 * the next resume from it starts after them.
 *
 * Input: a raw seller on 127.0.0.1: the POST's SSE stream holds `id: L-1` with a small
 * notification, then a ~60 KB notification without an id, and drops; every GET resume gets a
 * ~30 KB notification without an id and a drop. Agent `max_response_bytes: 100000`, a resume
 * secret. The host (raw fetch, as an SSE client that got no new id) resumes 4 times from the
 * token of L-1.
 * Expected: resume 1 gets the 30 KB notification (the count ~60 KB -> ~90 KB: within the
 * bound), then the call's `upstream_reset` error (the seller dropped it with no new id: as
 * before); resumes 2-4 get only the call's error event, RESPONSE_TOO_LARGE `sse_cumulative`
 * for id 7, observed_bytes the count after resume 1 plus the notification's frame. Was: every
 * resume got the 30 KB and `upstream_reset` again (a host that resumes once more after an
 * error answer, or any SSE client reconnecting with its last event ID, pulled the bytes again).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 100_000;
const CALL_ID = 7;
const RESUMES = 4;

const progress = (n: number, size: number): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: n, message: 'x'.repeat(size) } });
/** A notification as the seller frames it and the gateway forwards it (LF-only, `data: ` with the space). */
const frame = (n: number, size: number): string => `data: ${progress(n, size)}\n\n`;
const RESUME_FRAME = frame(100, 30_000);

const answer = (req: SeenRequest, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (req.method === 'POST') res.write(`id: L-1\n${frame(1, 10)}${frame(2, 60_000)}`);
  else res.write(RESUME_FRAME);
  setTimeout(() => res.socket?.destroy(), 50);
};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ loop: { url: seller.url, max_response_bytes: LIMIT, sse_deadline_ms: 60_000 } }, RESUME_YAML)),
);

/** The `observed_bytes` of the (last) minted error event in an SSE body. */
function observedBytesOf(body: string): number {
  const found = [...body.matchAll(/\\"observed_bytes\\":(\d+)/g)].at(-1);
  assert.ok(found, `no minted error in ${body.slice(-300)}`);
  return Number(found[1]);
}

const HEADERS = { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 's1' };

describe('a resumed stream sending bytes without an id, then a drop, on every resume', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the second resume from the same token trips sse_cumulative', async () => {
    const url = stack.gateway.agentUrl('loop');
    const post = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: CALL_ID, method: 'tools/call', params: { name: 'loop', arguments: {} } }),
    });
    const postText = await post.text();
    const [token] = sseIds(postText);
    assert.match(token!, RESUME_TOKEN);
    assert.equal(postText, `id: ${token}\n${frame(1, 10)}${frame(2, 60_000)}`);

    const bodies: string[] = [];
    for (let i = 0; i < RESUMES; i++) {
      const res = await fetch(url, { headers: { ...HEADERS, accept: 'text/event-stream', 'last-event-id': token! } });
      assert.equal(res.status, 200);
      bodies.push(await res.text());
    }
    // Resume 1: within the bound, forwarded as it came; the seller's drop without a new id
    // answers the call (upstream_reset), as before.
    assert.equal(bodies[0], RESUME_FRAME + expectedErrorFrame({ id: CALL_ID, method: 'tools/call', toolName: 'loop', reason: 'upstream_reset', limitBytes: LIMIT, observedBytes: 0 }));
    // Resumes 2-4 from the same token start from the count at resume 1's end, which holds what
    // the POST's stream and resume 1 sent: the next frame does not fit.
    const frameBytes = Buffer.byteLength(RESUME_FRAME);
    const observed = observedBytesOf(bodies[1]!);
    const afterResume1 = observed - frameBytes;
    assert.ok(afterResume1 <= LIMIT && afterResume1 >= Buffer.byteLength(postText) + frameBytes, `count ${afterResume1} after resume 1`);
    const error = expectedErrorFrame({ id: CALL_ID, method: 'tools/call', toolName: 'loop', reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed });
    for (let i = 1; i < RESUMES; i++) assert.equal(bodies[i], error, `resume ${i + 1}`);
    assert.equal(stack.seller.requests.filter((q) => q.method === 'GET' && q.headers['last-event-id'] === 'L-1').length, RESUMES);
    const breaches = stack.gateway.lines.filter((l) => l.msg === 'exchange' && l.reason === 'sse_cumulative');
    assert.equal(breaches.length, RESUMES - 1);
  });
});
