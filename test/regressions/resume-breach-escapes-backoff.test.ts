/**
 * Reported failure (review 35, F1, Medium): a seller escaped `backoff_after_breaches` by
 * breaking its bounds only on resumes. Only a POST was admitted to the agent guard
 * (routing/handler.ts), and an outcome was recorded only for an admission, so a resumed GET
 * stream's `sse_cumulative` never counted toward its kind's breaches, and its answer was never
 * shed. The seller answered each `tools/call` POST with one event `id: s1` and dropped the
 * connection (the POST ends `resumable_end`: neither a breach nor a clean answer), and every
 * resume with a 5 KB event: with `max_response_bytes: 1000`, `backoff_after_breaches: 1` and a
 * 20 s backoff, 3 calls were all sent, each resume ended `sse_cumulative`, and no
 * `agent backing off` line was written.
 * Now a resumed request's (or batch's) stream counts for the kind its token names, as the
 * request's own answer would (admission/agent-guard.ts `admitResumed`): its breach counts (it
 * starts a backoff, never deepens one: it is no probe), its clean end resets the count (and
 * ends a backoff), as a clean POST's answer does. A resume is never held back nor refused
 * during a backoff: the host fetches the answer to a request already sent.
 *
 * Input: a raw seller on 127.0.0.1: every POST gets `id: s1` + a progress notification, then
 * its connection dropped after 20 ms; each resume (GET, `Last-Event-ID: s1`) gets the next
 * answer the test queued: `bomb` (one 5 KB progress notification, then the end) or a clean
 * result for the id given. Agents `a` (`backoff_after_breaches: 1`) and `b` (`2`), both with
 * `max_response_bytes: 1000`, a 20 s backoff and `response_deadline_ms: 1000`.
 * Expected: below, per test.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedErrorFrame, expectedErrorJson, startObservedGateway, withToken, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const LIMIT = 1000;
const BACKOFF_MS = 20_000;
const DEADLINE_MS = 1000;

const POST_FRAME = `id: s1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n\n`;
const BOMB_FRAME = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 2, message: 'x'.repeat(5000) } })}\n\n`;
const HELD_PROGRESS = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 3 } })}\n\n`;
const cleanFrame = (id: number): string => `data: ${toolResponse(id, { content: [{ type: 'text', text: 'ok' }] })}\n\n`;

/** Of a held answer: the first part, 40 KiB, over half of agent `c`'s 64 KiB buffer cap. */
const HEAD_BYTES = 40 * 1024;
const HELD_RESULT = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'h'.repeat(2 * HEAD_BYTES) }] });
/** What the seller answers the next resumes with, in order: a bomb, a clean result for this id, or a held stream. */
const resumeAnswers: Array<'bomb' | 'hold' | number> = [];
/** Releases the answers the seller holds after their first part. */
const held: Array<() => void> = [];
const hold = () => new Promise<void>((r) => held.push(r));

const answer = async (req: SeenRequest, res: ServerResponse): Promise<void> => {
  if (req.method === 'POST') {
    const { id, params } = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { mode?: string } } };
    const mode = params.arguments.mode;
    if (mode === 'deep' || mode === 'hold') {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (mode === 'deep') res.end('['.repeat(200)); // a depth breach in its first bytes
      else {
        res.write(HELD_RESULT(id).slice(0, HEAD_BYTES));
        await hold();
        res.end(HELD_RESULT(id).slice(HEAD_BYTES));
      }
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(POST_FRAME);
    await new Promise((r) => setTimeout(r, 20));
    res.socket?.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const next = resumeAnswers.shift();
  if (next === 'hold') {
    // A progress event, then 40 KiB of a data line that does not end until released.
    res.write(`${HELD_PROGRESS}data: ${'s'.repeat(HEAD_BYTES)}`);
    await hold();
    res.end('\n\n');
    return;
  }
  res.end(next === undefined ? '' : next === 'bomb' ? BOMB_FRAME : cleanFrame(next));
};

const agent = (seller: RawSeller, breaches: number) => ({
  url: seller.url,
  max_response_bytes: LIMIT,
  backoff_after_breaches: breaches,
  backoff_base_ms: BACKOFF_MS,
  backoff_max_ms: BACKOFF_MS,
  response_deadline_ms: DEADLINE_MS,
});

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) =>
    startObservedGateway(
      agentsYaml({ a: agent(seller, 1), b: agent(seller, 2), c: { ...agent(seller, 1), max_response_bytes: 1_048_576, max_buffered_response_bytes: 65_536 } }, RESUME_YAML),
    ),
);

const guard = () => stack.gateway.app.gateway.guard;
const sellerPosts = () => stack.seller.requests.filter((q) => q.method === 'POST').length;
const sellerResumes = () => stack.seller.requests.filter((q) => q.method === 'GET' && q.headers['last-event-id'] === 's1').length;
const backingOff = (name: string, tool: string) => guard().isBackingOff(name, `tools/call ${tool}`);
const lines = (msg: string, name: string, tool: string) => stack.gateway.lines.filter((l) => l.msg === msg && l.agent === name && l.call === `tools/call ${tool}`);
const BACKING_OFF = 'agent backing off: its answers keep breaking size limits';
const RECOVERED = 'agent backoff ended: an answer came within limits';

/** POSTs `tools/call <tool>` id `id` to agent `name`; asserts the seller's answer came through with a token, and returns it. */
async function callForToken(name: string, id: number, tool: string): Promise<string> {
  const r = await withTimeout(rawPost(stack.gateway.agentUrl(name), toolCall(id, tool)));
  assert.equal(r.status, 200);
  const [token] = sseIds(r.text());
  assert.match(token ?? '', RESUME_TOKEN);
  assert.equal(r.text(), withToken(POST_FRAME, token!));
  const line = await stack.gateway.exchangeLine(name, id);
  assert.deepEqual([line.http_method, line.outcome, line.reason], ['POST', 'resumable_end', null]);
  return token!;
}

/** Resumes from `token` at agent `name` (the seller answering `next`); returns the body once its exchange line is written. */
async function resume(name: string, token: string, next: 'bomb' | 'hold' | number): Promise<string> {
  resumeAnswers.push(next);
  const before = stack.gateway.lines.length;
  const res = await withTimeout(fetch(stack.gateway.agentUrl(name), { headers: { accept: 'text/event-stream', 'last-event-id': token } }));
  assert.equal(res.status, 200);
  const text = await withTimeout(res.text());
  // The exchange line comes after the guard has the stream's outcome (handler.ts `end`).
  await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && stack.gateway.lines.indexOf(l) >= before);
  return text;
}

/** The exact error a bomb resume of `tools/call <tool>` id `id` gets: sse_cumulative at the limit, its observed_bytes as written. */
function assertCumulativeBreach(text: string, id: number, tool: string): void {
  const observed = Number(/\\"observed_bytes\\":(\d+)/.exec(text)?.[1]);
  assert.ok(observed > LIMIT, `observed_bytes ${observed}`);
  assert.equal(text, expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed }));
}

/** Asserts the POST `tools/call <tool>` id `id` to `name` is answered agent_backoff after its response_deadline_ms, never sent. */
async function assertBackoffAnswer(name: string, id: number, tool: string): Promise<void> {
  const posts = sellerPosts();
  const r = await withTimeout(rawPost(stack.gateway.agentUrl(name), toolCall(id, tool)));
  assert.equal(r.status, 200);
  const retryAfterS = Number(/"retry_after":(\d+)/.exec(r.text().replace(/\\"/g, '"'))?.[1]);
  assert.ok(retryAfterS >= 1 && retryAfterS <= BACKOFF_MS / 1000, `retry_after ${retryAfterS}`);
  assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'agent_backoff', retryAfterS }));
  assert.equal(sellerPosts(), posts, 'not sent to the seller');
  const line = await stack.gateway.exchangeLine(name, id);
  assert.deepEqual([line.outcome, line.reason, line.upstream_status], ['local_error', 'agent_backoff', null]);
}

describe('resume-breach-escapes-backoff', { timeout: 2 * TEST_TIMEOUT_MS }, () => {
  test("a seller breaching only on resumes backs off: the resume's sse_cumulative counts, the next calls get agent_backoff unsent", async () => {
    const token = await callForToken('a', 1, 'big');
    assertCumulativeBreach(await resume('a', token, 'bomb'), 1, 'big');
    assert.equal(backingOff('a', 'big'), true, "the resume's breach counts: 1 of 1");
    const [line, ...more] = lines(BACKING_OFF, 'a', 'big');
    assert.deepEqual(more, []);
    assert.deepEqual([line?.level, line?.consecutive_breaches, line?.backoff_ms], [40, 1, BACKOFF_MS]);
    await assertBackoffAnswer('a', 2, 'big');
    await assertBackoffAnswer('a', 3, 'big');
    assert.equal(sellerPosts(), 1);
  });

  test('a resume during the backoff is sent, not held back; its breach does not deepen the backoff; its clean end ends it', async () => {
    const token = await callForToken('a', 11, 'big2');
    assertCumulativeBreach(await resume('a', token, 'bomb'), 11, 'big2');
    assert.equal(backingOff('a', 'big2'), true);
    const resumes = sellerResumes();
    assertCumulativeBreach(await resume('a', token, 'bomb'), 11, 'big2');
    assert.equal(sellerResumes(), resumes + 1, 'the resume went to the seller during the backoff');
    assert.equal(lines(BACKING_OFF, 'a', 'big2').length, 1, 'a resume is no probe: its breach does not deepen the backoff');
    assert.equal(await resume('a', token, 11), cleanFrame(11));
    assert.equal(backingOff('a', 'big2'), false, "the resume's clean answer ended the backoff");
    assert.equal(lines(RECOVERED, 'a', 'big2').length, 1);
    const posts = sellerPosts();
    await callForToken('a', 12, 'big2');
    assert.equal(sellerPosts(), posts + 1, 'the next call is sent at once');
  });

  test('a clean resumed stream resets the breach count, as a clean answer to a POST does', async () => {
    assertCumulativeBreach(await resume('b', await callForToken('b', 21, 'big'), 'bomb'), 21, 'big');
    assert.equal(backingOff('b', 'big'), false, '1 breach of 2');
    assert.equal(await resume('b', await callForToken('b', 22, 'big'), 22), cleanFrame(22));
    assertCumulativeBreach(await resume('b', await callForToken('b', 23, 'big'), 'bomb'), 23, 'big');
    assert.equal(backingOff('b', 'big'), false, 'the clean resume reset the count: 1 breach of 2 again');
    assertCumulativeBreach(await resume('b', await callForToken('b', 24, 'big'), 'bomb'), 24, 'big');
    assert.equal(backingOff('b', 'big'), true, '2 breaches in a row');
    await assertBackoffAnswer('b', 25, 'big');
  });

  test("a resumed stream waiting for buffer room is shed when its kind starts backing off, as the POST's own answer would be", async () => {
    const token = await callForToken('c', 41, 'big');
    // The agent's oldest answer holds 40 KiB; the resumed stream's next 40 KiB wait for room.
    const oldest = withTimeout(rawPost(stack.gateway.agentUrl('c'), toolCall(42, 'other', { mode: 'hold' })));
    await until('the oldest holds its first part', () => guard().heldBytes('c') >= HEAD_BYTES);
    const resumed = resume('c', token, 'hold');
    await until('the resumed stream waits for room', () => guard().bufferWaits('c') === 1);
    // A depth breach of the same kind starts its backoff (backoff_after_breaches: 1).
    assert.match((await withTimeout(rawPost(stack.gateway.agentUrl('c'), toolCall(43, 'big', { mode: 'deep' })))).text(), /"reason":"json_depth"/);
    assert.equal(backingOff('c', 'big'), true);
    try {
      const text = await withTimeout(resumed, 3_000, 'the shed resume (not shed, it waits for the seller, which holds it)');
      assert.equal(text, HELD_PROGRESS + expectedErrorFrame({ id: 41, method: 'tools/call', toolName: 'big', reason: 'agent_backoff_shed', retryAfterS: BACKOFF_MS / 1000 }));
    } finally {
      for (const release of held.splice(0)) release();
    }
    assert.equal((await oldest).text(), HELD_RESULT(42));
    await until('nothing held', () => guard().heldBytes('c') === 0);
  });
});
