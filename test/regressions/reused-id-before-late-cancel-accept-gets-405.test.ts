/**
 * Regression (a review of the fix for "a cancellation takes effect only once the seller answers
 * it 2xx", Medium 1; hostile trial 56, F3 back): "a request id reused before the seller accepts
 * the old call's cancellation has its resume answered 405". A new request forgets a remembered
 * cancellation of its id when it is sent (routing/cancelled-requests.ts forget), but a
 * cancellation is remembered only when the seller's 2xx arrives: a new call with the id sent
 * between the cancellation and that answer forgot nothing, and the late 2xx then remembered the
 * id, which by then named the new call. The new call's stream was cut, and its resume got 405,
 * outcome `cancelled`, never sent: the host's uncancelled call never got its answer.
 *
 * Now a cancellation awaiting the seller's answer is noted (CancelledRequests.awaitSeller), a
 * new request sent with its id meanwhile supersedes it, and its 2xx remembers nothing.
 *
 * Input: a raw seller on 127.0.0.1: a `tools/call` gets one event `id: e<id>` and its stream is
 * cut; a `notifications/cancelled` is held until the test answers it (202); a resume (a GET
 * with `Last-Event-ID: e<id>`) is answered with the call's response. Agent `r`, resume tokens on.
 * Fails before the fix: 1 of 3 (the first; the other two pin what must not change: a
 * cancellation naming the new call is remembered, and one accepted late with no new call is).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { primingEvent, resumeAnswer, sessionHost } from '../helpers/cut-and-resume.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-session-id': 'session-late-accept', 'mcp-protocol-version': '2025-06-18' };

/** The cancellations the seller holds, in the order they came. */
const heldCancels: ServerResponse[] = [];

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startRawSeller((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(resumeAnswer(Number(String(req.headers['last-event-id']).slice(1))));
        return;
      }
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string };
      if (msg.method === 'notifications/cancelled') {
        heldCancels.push(res);
        return;
      }
      if (msg.method === 'tools/call') {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(primingEvent(msg.id!));
        return;
      }
      res.writeHead(202).end();
    }),
  (seller) => startObservedGateway(agentsYaml({ r: { url: seller.url } }, RESUME_YAML)),
);

const host = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);
const resumesSent = (): number => stack.seller.requests.filter((r) => r.method === 'GET').length;

async function heldCancel(n: number): Promise<ServerResponse> {
  for (let i = 0; i < 500 && heldCancels.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(heldCancels.length, n, `the seller holds cancellation ${n}`);
  return heldCancels[n - 1]!;
}

/** Opens call `id` (its stream is cut after one event): its resume token. */
async function cutCall(id: number): Promise<string> {
  const call = await host.openCall('r', id);
  const [token] = sseIds(call.first);
  assert.ok(token !== undefined && token.startsWith('agw1.'), call.first);
  assert.equal(await withTimeout(call.rest, 5_000, 'end of the cut stream'), '');
  return token;
}

async function resumed(token: string): Promise<[number, string]> {
  const res = await host.resume('r', token);
  return [res.status, await withTimeout(res.text(), 5_000, 'resume body')];
}

describe('reused-id-before-late-cancel-accept-gets-405', { timeout: TEST_TIMEOUT_MS }, () => {
  test("id 5 cancelled; a new call 5 sent before the seller accepts: the new call's resume reaches the seller", async () => {
    const cancelled = host.cancel('r', 5);
    const accept = await heldCancel(1);
    const token = await cutCall(5);
    accept.writeHead(202).end();
    assert.equal(await cancelled, 202);
    const before = resumesSent();
    const [status, body] = await resumed(token);
    assert.equal(status, 200);
    assert.match(body, /^id: agw1\.[^\n]+\ndata: \{"jsonrpc":"2\.0","id":5,"result":\{"content":\[\{"type":"text","text":"done 5"\}\]\}\}\n\n$/);
    assert.equal(resumesSent(), before + 1);
  });

  test('id 6 cancelled while a new call 6 is pending, that call then cancelled too and accepted: its resume 405, whatever the first answer', async () => {
    const first = host.cancel('r', 6);
    const lateAccept = await heldCancel(2);
    const call = await host.openCall('r', 6);
    const [token] = sseIds(call.first);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the cut stream'), '');
    // The host cancels the new call 6 too: this one names it, and the seller accepts it at once.
    const second = host.cancel('r', 6);
    (await heldCancel(3)).writeHead(202).end();
    assert.equal(await second, 202);
    lateAccept.writeHead(202).end();
    assert.equal(await first, 202);
    const before = resumesSent();
    assert.deepEqual(await resumed(token!), [405, '']);
    assert.equal(resumesSent(), before, 'not sent');
  });

  test('control: call 7 cut, then cancelled, the seller accepting late with nothing sent meanwhile: its resume 405, not sent', async () => {
    const token = await cutCall(7);
    const cancelled = host.cancel('r', 7);
    (await heldCancel(4)).writeHead(202).end();
    assert.equal(await cancelled, 202);
    const before = resumesSent();
    assert.deepEqual(await resumed(token), [405, '']);
    assert.equal(resumesSent(), before);
  });
});
