/**
 * Regression (a reviewer, "A resumed batch SSE stream does not know its request ids"): a host
 * on MCP 2025-03-26 POSTed `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,
 * "method":"tools/list"}]`; the seller's SSE answer carried the response to 1 in an event with
 * an id, then dropped. The host resumed with `Last-Event-ID` (the gateway's token), and the
 * seller sent the response to 2, then closed (or kept the stream open). The resume token did
 * not carry the batch's ids, so the resumed stream could not tell the batch was answered: it
 * ended `resumable_end` (inviting another resume) although every answer had arrived, or, the
 * seller's stream kept open, ran until `sse_idle_timeout_ms` and ended with an `sse_idle`
 * error event for id null.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`, resume secret set,
 * `sse_idle_timeout_ms: 1500`), batches sent with no MCP-Protocol-Version; each first stream
 * drops after the events the test names, each resume (a GET with the last token) gets the
 * events it names.
 * Expectation: a batch's tokens carry the requests still awaited after their event
 * (resume/token.ts `w`), so a resumed stream ends as the first one would have once they are
 * answered: the seller's events byte for byte (ids as tokens), nothing after them, outcome
 * `ok`, the last token final (a resume from it: `already_answered`), the seller's request
 * closed. A response to an id already answered (before the token) answers no request still
 * awaited: `upstream_not_mcp` for each request still awaited (its id as the host wrote it:
 * `9007199254740993`), as on the first stream
 * (test/regressions/batch-answer-for-other-ids-forwarded.test.ts); a batch without requests
 * waits for nothing. Ids whose list is over 1024 characters are not carried: that resumed
 * stream ends as before (`resumable_end`), the documented limit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedBatchErrorFrames, startObservedGateway, withToken, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const BATCH = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const frame = (id: string, json: string): string => `id: ${id}\ndata: ${json}\n\n`;

/** What the seller does with the next POST (`first`) and with each resume GET (`resumes`, in order). */
let post: (res: ServerResponse) => void = () => {};
let resumes: Array<(req: SeenRequest, res: ServerResponse) => void> = [];
/** The seller's last resume GET closed (the gateway ended or aborted it). */
let resumeClosed: Promise<void> = Promise.resolve();

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startRawSeller((req, res) => {
      if (req.method === 'POST') return post(res);
      resumeClosed = new Promise((resolve) => res.on('close', () => resolve()));
      const next = resumes.shift();
      if (next) next(req, res);
      else res.writeHead(405).end();
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1500 } }, RESUME_YAML)),
);

/** The seller streams `body` as SSE, then drops the connection (the host then resumes). */
function streamThenDrop(body: string): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(body);
    setTimeout(() => res.destroy(), 20);
  };
}

/** A resume the seller answers with `body` as SSE, then closes (or keeps open, `close` false). */
function resumeWith(body: string, close = true): (req: SeenRequest, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (close) res.end(body);
    else res.write(body);
  };
}

/** The next exchange line from now. */
function nextLine(): Promise<LogLine> {
  const seen = stack.gateway.lines.length;
  return stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
}

/** POSTs `batch`; the host's SSE body, its tokens and the exchange line. */
async function open(batch: string): Promise<{ text: string; tokens: string[]; line: LogLine }> {
  const line = nextLine();
  const r = await rawPost(stack.gateway.agentUrl('s'), batch);
  assert.equal(r.status, 200);
  const text = r.text();
  return { text, tokens: sseIds(text), line: await line };
}

/** Resumes from `token` as an SDK client does (GET, Last-Event-ID); the host's SSE body, its tokens and the exchange line. */
async function resume(token: string): Promise<{ text: string; tokens: string[]; line: LogLine; sellerLastEventId: unknown }> {
  const line = nextLine();
  const r = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token } });
  assert.equal(r.status, 200);
  const text = await r.text();
  return { text, tokens: sseIds(text), line: await line, sellerLastEventId: stack.seller.requests.at(-1)?.headers['last-event-id'] };
}

const outcome = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, outcome: line.outcome, reason: line.reason });

/**
 * A resume from `token` (a final one) is answered at once, the seller not contacted, the
 * stream held empty until sse_idle_timeout_ms and then ended after `id: <token>` (changed on
 * purpose: it ended at once, empty:
 * test/regressions/already-answered-resume-ends-at-once-sdk-reconnect-loop.test.ts).
 */
async function assertFinal(token: string): Promise<void> {
  const seen = stack.seller.requests.length;
  const again = await resume(token);
  assert.equal(again.text, `id: ${token}\n\n`);
  assert.equal(again.line.outcome, 'already_answered');
  assert.equal(stack.seller.requests.length, seen);
}

describe('sse-batch-resumed-stream-never-ends-cleanly', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the response to 1, a drop, then the resume brings 2 and the seller closes: outcome ok, not resumable_end', async () => {
    const first = frame('e1', R1);
    post = streamThenDrop(first);
    const opened = await open(BATCH);
    assert.match(opened.tokens[0] ?? '', RESUME_TOKEN);
    assert.equal(opened.text, withToken(first, opened.tokens[0]!));
    assert.equal(opened.line.outcome, 'resumable_end');

    const second = frame('e2', R2);
    resumes = [resumeWith(second)];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.sellerLastEventId, 'e1');
    assert.equal(resumed.text, withToken(second, resumed.tokens[0]!));
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'ok', reason: null });
    await assertFinal(resumed.tokens[0]!);
  });

  test('the seller keeps the resumed stream open after the last response: the host\'s stream ends there (ok, not sse_idle)', async () => {
    post = streamThenDrop(frame('e1', R2));
    const opened = await open(BATCH);
    const second = frame('e2', NOTE) + frame('e3', R1);
    resumes = [resumeWith(second, false)];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.text, withToken(frame('e2', NOTE), resumed.tokens[0]!) + withToken(frame('e3', R1), resumed.tokens[1]!));
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'ok', reason: null });
    await resumeClosed; // the upstream request was closed
  });

  test('resumed twice: what is awaited passes from token to token (a notification, a drop, then the last response)', async () => {
    post = streamThenDrop(frame('e1', NOTE));
    const opened = await open(BATCH);
    resumes = [
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(frame('e2', `[${R2}]`));
        setTimeout(() => res.destroy(), 20);
      },
      resumeWith(frame('e3', R1)),
    ];
    const once = await resume(opened.tokens[0]!);
    assert.equal(once.line.outcome, 'resumable_end');
    const twice = await resume(once.tokens[0]!);
    assert.equal(twice.sellerLastEventId, 'e2');
    assert.equal(twice.text, withToken(frame('e3', R1), twice.tokens[0]!));
    assert.deepEqual(outcome(twice.line), { rpc_kind: 'batch', outcome: 'ok', reason: null });
    await assertFinal(twice.tokens[0]!);
  });

  test('ids compare exactly on the resumed stream: the exact id answers, 9007199254740992 does not answer 9007199254740993', async () => {
    const batch = '[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]';
    const right = frame('e3', '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}');
    post = streamThenDrop(frame('e1', '{"jsonrpc":"2.0","id":"a","result":{}}'));
    const opened = await open(batch);
    resumes = [resumeWith(right)];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.text, withToken(right, resumed.tokens[0]!));
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'ok', reason: null });
    // The same double, not the same id: a response for an id not awaited, the stream's end
    // (test/regressions/batch-answer-for-other-ids-forwarded.test.ts).
    post = streamThenDrop(frame('e1', '{"jsonrpc":"2.0","id":"a","result":{}}'));
    const again = await open(batch);
    resumes = [resumeWith(frame('e2', '{"jsonrpc":"2.0","id":9007199254740992,"result":{}}') + right)];
    const wrong = await resume(again.tokens[0]!);
    // The error answers the request still awaited, its id written as the host wrote it (from the token's key, json-numbers.ts exactDecimal).
    assert.equal(wrong.text, expectedBatchErrorFrames([{ id: 9007199254740992, idText: '9007199254740993' }], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    assert.deepEqual(outcome(wrong.line), { rpc_kind: 'batch', outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('a batch without requests: its resumed stream waits for nothing, the seller\'s end is a normal end', async () => {
    post = streamThenDrop(frame('e1', NOTE));
    const opened = await open('[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"srv-1","result":{}}]');
    // Waiting for nothing, the first stream's end (here a drop) is a normal end already; a host may still resume.
    assert.equal(opened.line.outcome, 'ok');
    resumes = [resumeWith(frame('e2', NOTE))];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.text, withToken(frame('e2', NOTE), resumed.tokens[0]!));
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'ok', reason: null });
  });

  test('a response to the id answered before the token: a second answer, upstream_not_mcp for request 2, still awaited', async () => {
    // Before the ids were checked against the batch (a new user's trial, 2026-12-03) it did
    // not count, and the resumed stream ended as an unanswered one, resumable_end.
    post = streamThenDrop(frame('e1', R1));
    const opened = await open(BATCH);
    resumes = [resumeWith(frame('e2', R1))];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.text, expectedBatchErrorFrames([2], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('control, the documented limit: ids whose list is over 1024 characters are not carried, the resumed stream ends as before', async () => {
    const long = (k: number): string => `"${String(k).padStart(400, 'x')}"`;
    const batch = `[${[1, 2, 3, 4].map((k) => `{"jsonrpc":"2.0","id":${long(k)},"method":"ping"}`).join(',')}]`;
    post = streamThenDrop(frame('e1', `{"jsonrpc":"2.0","id":${long(1)},"result":{}}`));
    const opened = await open(batch);
    assert.match(opened.tokens[0] ?? '', RESUME_TOKEN);
    const rest = [2, 3, 4].map((k) => frame(`e${k}`, `{"jsonrpc":"2.0","id":${long(k)},"result":{}}`)).join('');
    resumes = [resumeWith(rest)];
    const resumed = await resume(opened.tokens[0]!);
    assert.equal(resumed.tokens.length, 3);
    assert.deepEqual(outcome(resumed.line), { rpc_kind: 'batch', outcome: 'resumable_end', reason: null });
  });
});
