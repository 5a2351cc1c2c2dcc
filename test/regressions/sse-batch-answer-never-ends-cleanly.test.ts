/**
 * Regression (a new user's trial, Medium): "A JSON-RPC batch answered over SSE never ends
 * cleanly". A host on MCP 2025-03-26 (the only revision with batches) POSTed
 * `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`;
 * the seller answered `text/event-stream` with one event per response and closed the stream
 * (MCP 2025-03-26 Streamable HTTP: the server SHOULD close the SSE stream after all JSON-RPC
 * responses have been sent; the same with one event holding a JSON array of the responses).
 * The host got both answers, then an extra error event for id null (-32027, upstream_reset),
 * and the exchange line said `outcome=local_error reason=upstream_reset`; with `id:` fields on
 * the seller's events it said `resumable_end`, inviting a reconnect although every answer had
 * arrived.
 *
 * Input (raw seller on 127.0.0.1, agent `s`, resume secret set, no MCP-Protocol-Version):
 * the batch above (or the variants named per test), answered over SSE as each test says.
 * Expectation: once every request of the batch (an element with a `method` and an `id`) has
 * its response (an event whose data is a response with that id, or an array holding such
 * responses; ids compared exactly: `"2"` is not `2`, `9007199254740992` is not
 * `9007199254740993`, `2.0` is `2`), the host's stream ends as a single request's does: the
 * seller's events byte for byte (ids as resume tokens), nothing after them, outcome `ok`,
 * reason null; the token of the last response's event is final (a resume from it gets the
 * empty stream, held until sse_idle_timeout_ms, `already_answered`); a seller that keeps the stream open is cut there. A batch
 * without requests waits for nothing: the seller's end is a normal end. A stream that ends
 * before every response arrived ends with the error event (`upstream_reset`) for each request
 * still awaited (test/regressions/batch-local-error-answers-no-request.test.ts; before, one for
 * id null), or `resumable_end` after an event id; a response for an id not in the batch or a
 * second one for an id ends it with `upstream_not_mcp`
 * (test/regressions/batch-answer-for-other-ids-forwarded.test.ts). A batch answered with a JSON array
 * (application/json) goes out as the seller's bytes, outcome `ok`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, expectedBatchErrorFrames, startObservedGateway, withToken, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const BATCH = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const data = (json: string): string => `data: ${json}\n\n`;
/** The gateway's default max_response_bytes (4 MiB): the error's limit_bytes. */
const LIMIT = 4 * 1024 * 1024;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
/** The seller's request for the batch closed (the gateway ended or aborted it). */
let sellerClosed: Promise<void> = Promise.resolve();

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 2000 } }, RESUME_YAML)),
);

/** The seller answers the next POST with `body` as `text/event-stream`, then closes it (or keeps it open). */
function sellerStreams(body: string, close = true): void {
  answer = (_req, res) => {
    sellerClosed = new Promise((resolve) => res.on('close', () => resolve()));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (close) res.end(body);
    else res.write(body);
  };
}

/** POSTs `batch` as a 2025-03-26 host (no MCP-Protocol-Version): the response and the exchange line it made. */
async function postBatch(batch: string): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), batch);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  assert.equal(line.rpc_kind, 'batch');
  return { r, line };
}

const outcome = (line: LogLine): { outcome: unknown; reason: unknown; bytes_to_host: unknown } => ({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

/** The error events the gateway ends an unanswered batch's stream with, one per request still awaited (`ids`), the seller having sent `sellerBytes`. */
const resetFrames = (ids: readonly number[], sellerBytes: string): string =>
  expectedBatchErrorFrames(ids, { reason: 'upstream_reset', limitBytes: LIMIT, observedBytes: Buffer.byteLength(sellerBytes) });

describe('sse-batch-answer-never-ends-cleanly', { timeout: TEST_TIMEOUT_MS }, () => {
  test('one event per response, then the seller closes: both answers and a normal end (outcome ok)', async () => {
    const body = data(R1) + data(R2);
    sellerStreams(body);
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('one event holding the responses as a JSON array: a normal end', async () => {
    const body = data(`[${R1},${R2}]`);
    sellerStreams(body);
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('events with ids: ok, not resumable_end; the last answer\'s token is final', async () => {
    const frames = [`id: e1\n${data(NOTE)}`, `id: e2\nevent: message\n${data(R2)}`, `id: e3\n${data(R1)}`];
    sellerStreams(frames.join(''));
    const { r, line } = await postBatch(BATCH);
    const tokens = sseIds(r.text());
    assert.equal(tokens.length, 3);
    for (const t of tokens) assert.match(t, RESUME_TOKEN);
    assert.equal(r.text(), frames.map((f, k) => withToken(f, tokens[k]!)).join(''));
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
    // The stream is over: a resume from its last token is answered at once, the seller not
    // contacted, and held empty until sse_idle_timeout_ms, then ends after `id: <token>`
    // (changed on purpose: it ended at once, empty, and the MCP SDK client reconnected into the
    // seller's 409: test/regressions/already-answered-resume-ends-at-once-sdk-reconnect-loop.test.ts).
    const seen = stack.seller.requests.length;
    const before = stack.gateway.lines.length;
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens[2]! } });
    assert.deepEqual({ status: resumed.status, body: await resumed.text() }, { status: 200, body: `id: ${tokens[2]!}\n\n` });
    assert.equal(stack.seller.requests.length, seen);
    const resumeLine = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= before);
    assert.equal(resumeLine.outcome, 'already_answered');
  });

  test('a seller that keeps the stream open after the last answer: the host\'s stream ends there (outcome ok)', async () => {
    const body = data(R1) + data(R2);
    sellerStreams(body, false);
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
    await sellerClosed; // the upstream request was aborted
  });

  test('the last answer split across the seller\'s writes (an event held over chunks): a normal end', async () => {
    const body = data(R1) + `event: message\n${data(R2)}`;
    const cut = body.length - 12;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(body.slice(0, cut));
      setTimeout(() => res.end(body.slice(cut)), 50);
    };
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('events after the last answer are not forwarded (as on a single request\'s stream)', async () => {
    sellerStreams(data(R1) + data(R2) + data(NOTE));
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.text(), data(R1) + data(R2));
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('a batch over 1 KiB (read by the peek\'s scan), notifications and a host response among its elements', async () => {
    const call = `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"get_products","arguments":{"brief":"${'b'.repeat(1500)}"}}}`;
    const batch = `[{"jsonrpc":"2.0","method":"notifications/initialized"},${call},{"jsonrpc":"2.0","id":5,"result":{}},{"jsonrpc":"2.0","id":3,"method":"ping"}]`;
    const answerC = '{"jsonrpc":"2.0","id":"c-1","result":{"content":[]}}';
    const answer3 = '{"jsonrpc":"2.0","id":3,"result":{}}';
    sellerStreams(data(answer3) + data(answerC));
    const { r, line } = await postBatch(batch);
    assert.equal(r.text(), data(answer3) + data(answerC));
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('ids compare exactly: 2.0 answers 2, an escaped id key is read', async () => {
    const batch = '[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]';
    const body = data('{"jsonrpc":"2.0","\\u0069d":2.0,"result":{}}') + data('[{"jsonrpc":"2.0","id":9007199254740993,"result":{}}]');
    sellerStreams(body);
    const { r, line } = await postBatch(batch);
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  test('a batch without requests (notifications, a response) waits for nothing: the seller\'s end is a normal end', async () => {
    const body = data(NOTE);
    sellerStreams(`id: n1\n${body}`);
    const { r, line } = await postBatch('[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":4,"result":{}}]');
    const [token] = sseIds(r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    assert.equal(r.text(), `id: ${token}\n${body}`);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  // Control: a stream that ends before every request has its response ends as before.
  for (const [label, batch, body, awaited] of [
    ['one response missing', BATCH, data(R1), [2]],
    ['a message with a method is no response', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', data('{"jsonrpc":"2.0","id":1,"method":"ping"}'), [1]],
  ] as const) {
    test(`control, ${label}: the error event for the request still awaited, outcome local_error upstream_reset`, async () => {
      sellerStreams(body);
      const { r, line } = await postBatch(batch);
      assert.equal(r.text(), body + resetFrames(awaited, body));
      assert.deepEqual(outcome(line), { outcome: 'local_error', reason: 'upstream_reset', bytes_to_host: r.bytes });
    });
  }

  // A response that answers no request still awaited (an id not in the batch, a second answer,
  // both result and error) ends the stream there with upstream_not_mcp for each request still
  // awaited, the events before it forwarded: test/regressions/batch-answer-for-other-ids-forwarded.test.ts.
  // Before that fix these were ignored and the stream ended upstream_reset.
  for (const [label, batch, before, refused, awaited] of [
    ['the same response twice, the other missing', BATCH, data(R1), data(`[${R1}]`), [2]],
    ['a response to "2" does not answer 2', '[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]', '', data('{"jsonrpc":"2.0","id":"2","result":{}}'), [2]],
    ['9007199254740992 does not answer 9007199254740993', '[{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]', '', data('{"jsonrpc":"2.0","id":9007199254740992,"result":{}}'), [{ id: 9007199254740992, idText: '9007199254740993' }]],
    ['result and error both: no response', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', '', data('{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}'), [1]],
  ] as const) {
    test(`${label}: the events before it, then upstream_not_mcp for each request still awaited`, async () => {
      sellerStreams(before + refused);
      const { r, line } = await postBatch(batch);
      assert.equal(r.text(), before + expectedBatchErrorFrames(awaited, { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      assert.deepEqual(outcome(line), { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('control, one response missing after an event id: resumable_end', async () => {
    const frame = `id: e1\n${data(R1)}`;
    sellerStreams(frame);
    const { r, line } = await postBatch(BATCH);
    const [token] = sseIds(r.text());
    assert.equal(r.text(), withToken(frame, token!));
    assert.deepEqual(outcome(line), { outcome: 'resumable_end', reason: null, bytes_to_host: r.bytes });
  });

  test('JSON path: a batch answered with a JSON array goes out as the seller\'s bytes, outcome ok', async () => {
    const body = `[${R1},${R2}]`;
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const { r, line } = await postBatch(BATCH);
    assert.equal(r.status, 200);
    assert.equal(r.text(), body);
    assert.deepEqual(outcome(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });
});
