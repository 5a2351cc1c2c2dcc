/**
 * Reported failure (review 35, F3, Low): a resume after the stream's `sse_deadline_ms` had run
 * out still went to the seller. The stream's start comes from its token, but the deadline was
 * checked only once the SSE stage started (sse-stream-timers.ts, a timer of 0 ms then): with
 * `sse_deadline_ms: 300`, a resume 600 ms after the stream started sent the seller a GET with
 * `Last-Event-ID`, and only then did the host get `sse_deadline`.
 * Now a resume of a stream with the deadline (a request's, a batch's, a POSTed notification's
 * or response's: exchange.ts hasCumulativeBound) past it is answered `sse_deadline` at once
 * (resume/resume-past-deadline.ts), in the form a resumed request's local error takes before
 * anything was sent (errors/local-reply.ts: HTTP 200, one SSE event with the error for the id
 * in the token), and the seller is not contacted. The exchange line says so: outcome
 * `local_error`, reason `sse_deadline`, `upstream_status` null, nothing from the seller. The
 * standalone GET stream has no deadline: its resume is sent as before.
 *
 * Input: a raw seller on 127.0.0.1 answering a POST and its resume with one event `id: s1`,
 * the standalone GET stream and its resume with one event `id: g1`, each dropped after 20 ms.
 * Agent `a` with `sse_deadline_ms: 300`; a `tools/call` of tool `t`, id 1, and a standalone
 * GET stream, each resumed 400 ms after its answer ended.
 * Expected: the call's resume: HTTP 200 `text/event-stream`, exactly the `sse_deadline` event
 * for id 1 (limit_ms 300, observed_ms at least 400), no request to the seller; the GET
 * stream's resume reaches the seller with `Last-Event-ID: g1`.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedErrorFrame, observedMsAtLeast, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const DEADLINE_MS = 300;
/** How long after its answer (so at least that long after its start) each stream is resumed. */
const RESUME_AFTER_MS = 400;

const event = (id: string, method: string): string => `id: ${id}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method, params: { progressToken: 'p', progress: 1 } })}\n\n`;

const answer = async (req: SeenRequest, res: ServerResponse): Promise<void> => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(req.method === 'POST' || req.headers['last-event-id'] === 's1' ? event('s1', 'notifications/progress') : event('g1', 'notifications/message'));
  await new Promise((r) => setTimeout(r, 20));
  res.socket?.destroy();
};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ a: { url: seller.url, sse_deadline_ms: DEADLINE_MS } }, RESUME_YAML)),
);

const resumesSent = (sellerId: string) => stack.seller.requests.filter((q) => q.method === 'GET' && q.headers['last-event-id'] === sellerId).length;
const resume = (token: string) => withTimeout(fetch(stack.gateway.agentUrl('a'), { headers: { accept: 'text/event-stream', 'last-event-id': token } }));

describe('resume-past-deadline-contacts-seller', { timeout: TEST_TIMEOUT_MS }, () => {
  test("a request stream's resume past sse_deadline_ms is answered sse_deadline at once, the seller not contacted", async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('a'), toolCall(1, 't')));
    const [token] = sseIds(r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    await new Promise((done) => setTimeout(done, RESUME_AFTER_MS));
    const res = await resume(token!);
    const text = await withTimeout(res.text());
    assert.equal(resumesSent('s1'), 0, 'the seller got no resume');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const observedMs = observedMsAtLeast(text, RESUME_AFTER_MS);
    const frame = expectedErrorFrame({ id: 1, method: 'tools/call', toolName: 't', reason: 'sse_deadline', limitMs: DEADLINE_MS, observedMs });
    assert.equal(text, frame);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.rpc_id === 1);
    assert.deepEqual(
      [line.outcome, line.reason, line.status, line.upstream_status, line.bytes_from_seller, line.bytes_to_host],
      ['local_error', 'sse_deadline', 200, null, 0, Buffer.byteLength(frame)],
    );
  });

  test('the standalone GET stream has no deadline: its resume is sent to the seller as before', async () => {
    const g = await withTimeout(fetch(stack.gateway.agentUrl('a'), { headers: { accept: 'text/event-stream' } }));
    const [token] = sseIds(await withTimeout(g.text()));
    assert.match(token ?? '', RESUME_TOKEN);
    await new Promise((done) => setTimeout(done, RESUME_AFTER_MS));
    const res = await resume(token!);
    assert.equal(res.status, 200);
    await withTimeout(res.text());
    assert.equal(resumesSent('g1'), 1);
  });
});
