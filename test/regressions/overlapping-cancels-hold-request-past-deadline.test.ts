/**
 * Regression (a review of the fix for "a cancellation takes effect only once the seller answers
 * it 2xx", Medium 2): "overlapping cancellations hold a request past its deadline". A request
 * held by the gateway (pipelined behind another answer on its connection, or waiting for its
 * agent's backoff turn) whose turn came while a cancellation naming it awaited the seller's
 * answer waited until no cancellation naming it was awaited. It stayed registered meanwhile, so
 * each new cancellation naming it (anyone knowing the session id can send one: the seller
 * refusing it 401 changed nothing) extended the wait, and no timer applied the request's own
 * response_deadline_ms: the review held one 5,368 ms with a 1,000 ms deadline by cancellations
 * each refused 401, and one 4,115 ms by one cancellation left unanswered, sent through a twin
 * agent (same url) with a longer deadline; the request was then answered `pipeline_wait`,
 * "waited ... on its connection for the answers pipelined before it", which it had not. In a
 * backoff wait the granted turn (the probe's slot) was held all along, stalling its kind.
 *
 * Now a held request waits only for the cancellations awaited when its turn came (a later one
 * still stops it if accepted before it is sent), at most until too little of its deadline is
 * left to send it (routing/in-flight-requests.ts InFlightRequests.holdAtTurn); past that it is answered
 * `cancel_wait` (docs/errors.md), unsent.
 *
 * Input: a raw seller on 127.0.0.1 that holds each `notifications/cancelled` until the test
 * answers it (`hung` ones only once the request they name was answered), holds `tools/call` 1, 10 and 20 (the answers ahead
 * of pipelined calls), answers `create_media_buy` 49 and 59 over 1,000 bytes (a breach) and any
 * other call with a small JSON result. Agents (one url): `p` and `q` (pipelined calls; q's
 * deadline 1,000 ms), `b` and `d` (backoff after one breach for 1 s; d's deadline 3,000 ms),
 * `slow` (deadline 8,000 ms: the route of the cancellations left unanswered). Cancellations
 * carry other credentials than the calls (`authorization`), as anyone's knowing the session id.
 * Fails before the fix: 4 of 4.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { openRawConnection, responsesWhenWhole, type RawConnection } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCallIdsSent, until } from '../helpers/raw-stack.js';
import { withTimeout } from '../helpers/timeout.js';
import { callKind } from '../../src/admission/agent-guard.js';

const SESSION = 'session-overlapping-cancels';
const HOST = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18', authorization: 'Bearer host' };
const OTHER = { ...HOST, authorization: 'Bearer someone-else' };
const TOOL = 'create_media_buy';

/** The cancellations the seller holds, by the id they name, in the order they came. */
const heldCancels = new Map<number, ServerResponse[]>();
/** Calls the seller holds (the answers ahead of pipelined calls), by id. */
const heldCalls = new Map<number, ServerResponse>();

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { requestId?: number } };
      if (msg.method === 'notifications/cancelled') {
        const id = msg.params!.requestId!;
        heldCancels.set(id, [...(heldCancels.get(id) ?? []), res]);
        return;
      }
      if (msg.method !== 'tools/call') {
        res.writeHead(202).end();
        return;
      }
      const id = msg.id!;
      res.writeHead(200, { 'content-type': 'application/json' });
      if ([1, 10, 20].includes(id)) heldCalls.set(id, res);
      else if (id === 49 || id === 59) res.end(toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(5_000) }] }));
      else res.end(toolResponse(id, { content: [{ type: 'text', text: `done ${id}` }] }));
    }),
  (seller) => {
    const backoff = { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 1, backoff_base_ms: 1000, backoff_max_ms: 1000 };
    return startObservedGateway(
      agentsYaml({
        p: { url: seller.url, response_deadline_ms: 10_000 },
        q: { url: seller.url, response_deadline_ms: 1000 },
        b: { ...backoff, response_deadline_ms: 10_000 },
        d: { ...backoff, response_deadline_ms: 3000 },
        slow: { url: seller.url, response_deadline_ms: 8000 },
      }),
    );
  },
);

/** The ids of the `tools/call`s that reached the seller, in order. */
const callsSent = (): unknown[] => toolCallIdsSent(stack.seller);

/** Sends a cancellation of `id` through `agent` with other credentials; resolves with the held answer of the seller (the n-th for `id`) and the host's status to come. */
async function cancel(agent: string, id: number): Promise<{ seller: ServerResponse; status: Promise<number> }> {
  const n = (heldCancels.get(id)?.length ?? 0) + 1;
  const status = rawPost(stack.gateway.agentUrl(agent), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`, OTHER).then((r) => r.status);
  await until(`the seller holds cancellation ${n} of ${id}`, () => (heldCancels.get(id)?.length ?? 0) >= n);
  return { seller: heldCancels.get(id)![n - 1]!, status };
}

/** A POSTed `create_media_buy` `id` to agent `agent`, as written on a raw connection. */
function pipelined(agent: string, id: number): string {
  const body = JSON.stringify(toolCall(id, TOOL));
  return (
    `POST /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-session-id: ${SESSION}\r\nmcp-protocol-version: 2025-06-18\r\nauthorization: ${HOST.authorization}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Pipelines `ahead` and `behind` to `agent` on a new connection; resolves once `ahead` is at the seller and `behind` waits for its turn. */
async function pipeline(agent: string, ahead: number, behind: number): Promise<RawConnection> {
  const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
  conn.socket.write(pipelined(agent, ahead) + pipelined(agent, behind));
  await until(`call ${ahead} at the seller, ${behind} waiting for its turn`, () => heldCalls.has(ahead) && stack.gateway.app.gateway.pipelinedWaiting === 1);
  return conn;
}

/** Ends the held call `ahead`: the turn of the call behind it comes once its answer is written. */
async function endAhead(conn: RawConnection, ahead: number): Promise<void> {
  heldCalls.get(ahead)!.end(toolResponse(ahead, { content: [] }));
  await until(`the turn after ${ahead}`, () => conn.text().includes(`"id":${ahead},`) && stack.gateway.app.gateway.pipelinedWaiting === 0);
}

const post = (agent: string, id: number): Promise<Response> =>
  fetch(stack.gateway.agentUrl(agent), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HOST },
    body: JSON.stringify(toolCall(id, TOOL)),
  });

/** Breaks agent `agent`'s bound with call `breach`, then POSTs `id`: it waits for its backoff turn (resolves once it does, with its answer to come). */
async function waitingForBackoff(agent: string, breach: number, id: number): Promise<{ answer: Promise<Response> }> {
  assert.match((await rawPost(stack.gateway.agentUrl(agent), toolCall(breach, TOOL), HOST)).text(), /raw_bytes/);
  assert.equal((await stack.gateway.exchangeLine(agent, breach)).reason, 'raw_bytes'); // its breach counted: the backoff began
  const waiting = post(agent, id);
  await until(`call ${id} waits for its backoff turn`, () => stack.gateway.app.gateway.guard.waiting(agent, callKind('tools/call', TOOL)) === 1);
  return { answer: waiting };
}

/** Asserts `text` is the gateway's `cancel_wait` answer to `create_media_buy` `id` with a `limitMs` deadline, its observed_ms under it: that observed_ms. */
function assertCancelWait(text: string, id: number, limitMs: number): number {
  const reason = /"reason":"(\w+)"/.exec(text.replace(/\\"/g, '"'))?.[1];
  assert.equal(reason, 'cancel_wait', text);
  const observedMs = Number(/\\"observed_ms\\":(\d+)/.exec(text)![1]);
  assert.ok(observedMs < limitMs, `answered within its deadline: observed_ms ${observedMs}, limit_ms ${limitMs}`);
  assert.equal(text, expectedErrorJson({ id, method: 'tools/call', toolName: TOOL, reason: 'cancel_wait', limitMs, observedMs }));
  return observedMs;
}

describe('overlapping-cancels-hold-request-past-deadline', { timeout: 60_000 }, () => {
  test('pipelined: a cancellation that comes after its turn does not extend its wait; sent once the ones awaited at its turn are refused', { timeout: 20_000 }, async () => {
    const conn = await pipeline('p', 1, 2);
    const first = await cancel('p', 2);
    await endAhead(conn, 1);
    const second = await cancel('p', 2); // after the turn
    assert.equal(callsSent().includes(2), false, 'not sent while the cancellation awaited at its turn is');
    first.seller.writeHead(401).end();
    assert.equal(await first.status, 401);
    await until('call 2 sent once the cancellation awaited at its turn is refused, the later one still awaited', () => callsSent().includes(2));
    second.seller.writeHead(401).end();
    assert.equal(await second.status, 401);
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 5_000, 'both answers');
    conn.socket.destroy();
    assert.deepEqual([responses[1]!.status, responses[1]!.body], [200, toolResponse(2, { content: [{ type: 'text', text: 'done 2' }] })]);
  });

  test('pipelined: a cancellation left unanswered (sent through an agent with a longer deadline) holds it only within its own deadline; answered cancel_wait, unsent', { timeout: 20_000 }, async () => {
    const conn = await pipeline('q', 10, 11);
    const hung = await cancel('slow', 11); // not answered while it matters: its exchange may last slow's 8,000 ms
    await endAhead(conn, 10);
    const { responses } = await withTimeout(responsesWhenWhole(conn, 2), 10_000, 'both answers');
    conn.socket.destroy();
    assert.equal(responses[1]!.status, 200);
    assertCancelWait(responses[1]!.body, 11, 1000);
    assert.equal(callsSent().includes(11), false);
    const line = await stack.gateway.exchangeLine('q', 11);
    assert.deepEqual([line.outcome, line.reason, line.upstream_status], ['local_error', 'cancel_wait', null]);
    hung.seller.writeHead(404).end();
    assert.equal(await hung.status, 404);
  });

  test('backoff: granted its turn while a cancellation awaits, a later cancellation does not extend the wait; sent (the probe) once the first is refused', { timeout: 20_000 }, async () => {
    const { answer: waiting } = await waitingForBackoff('b', 49, 50);
    const first = await cancel('b', 50);
    await until('call 50 granted its turn (the probe), held for the cancellation', () => stack.gateway.app.gateway.guard.waiting('b', callKind('tools/call', TOOL)) === 0);
    const second = await cancel('b', 50); // after its turn
    assert.equal(callsSent().includes(50), false);
    first.seller.writeHead(401).end();
    assert.equal(await first.status, 401);
    await until('call 50 sent once the cancellation awaited at its turn is refused, the later one still awaited', () => callsSent().includes(50));
    second.seller.writeHead(401).end();
    assert.equal(await second.status, 401);
    const answer = await withTimeout(waiting, 5_000, 'call 50 answered');
    assert.deepEqual([answer.status, await answer.text()], [200, toolResponse(50, { content: [{ type: 'text', text: 'done 50' }] })]);
  });

  test('backoff: a cancellation left unanswered holds the granted turn only within its deadline; answered cancel_wait, unsent, the turn given back', { timeout: 20_000 }, async () => {
    const { answer: waiting } = await waitingForBackoff('d', 59, 60);
    const hung = await cancel('slow', 60); // not answered while it matters: its exchange may last slow's 8,000 ms
    const answer = await withTimeout(waiting, 10_000, 'call 60 answered');
    assert.equal(answer.status, 200);
    assertCancelWait(await answer.text(), 60, 3000);
    assert.equal(callsSent().includes(60), false);
    const line = await stack.gateway.exchangeLine('d', 60);
    assert.deepEqual([line.outcome, line.reason, line.upstream_status], ['local_error', 'cancel_wait', null]);
    // The probe's turn was given back: the next call of that kind is sent (the probe) and answered.
    const next = await withTimeout(post('d', 61), 5_000, 'call 61 answered');
    assert.deepEqual([next.status, await next.text()], [200, toolResponse(61, { content: [{ type: 'text', text: 'done 61' }] })]);
    hung.seller.writeHead(404).end();
    assert.equal(await hung.status, 404);
  });
});
