/**
 * Regression (hostile trial 56, F3): "a request id reused after its call was cancelled and is
 * over has its resume answered 405". docs/errors.md ("Request ids in flight"): once a call is
 * over its id may be sent again. Id 77's stream was cut and the call cancelled (remembered:
 * routing/cancelled-requests.ts); then id 77 was sent again in the session, and when that new
 * call's stream was cut its resume got 405 (the old 77's remembered cancellation), outcome
 * `cancelled`, the seller never contacted: the host's uncancelled call never got its answer (the
 * MCP SDK client, rejoining a session with ids restarting at 0, saw its call time out).
 *
 * Now a new request opening with an id in a session (a POST the in-flight registry registers)
 * forgets any remembered cancellation of that id there: only the cancelled call's own resumes,
 * made before, get 405. And (a review: F3 could come back) a cancelled resume that ends after
 * the newer call opened only renews a cancellation still remembered (cancelled-requests.ts
 * renewRequest), never re-adding the one the newer call's open forgot.
 *
 * Input: a raw seller on 127.0.0.1 (a `tools/call` gets one event `id: e<id>`; the first id 77
 * is held until its cancellation reaches the seller, the second then cut; a resume is answered
 * with its response); agent `r`, resume tokens on.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { resumeAnswer, sessionHost, startCutAndResumeSeller } from '../helpers/cut-and-resume.js';
import { sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-f3';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };

/** The first resume of id 5 (`Last-Event-ID: e5`), held open; the second is answered. */
let heldResume: ServerResponse | undefined;

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startCutAndResumeSeller(
      // Both calls with id 5, and the second id 77: cut after their event; the first id 77: held until cancelled.
      (id, nth) => (id === 77 && nth === 1 ? 'until-cancelled' : 'cut'),
      (req, res) => {
        if (req.headers['last-event-id'] === 'e5') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          if (heldResume === undefined) {
            heldResume = res;
            res.flushHeaders();
          } else {
            res.end(resumeAnswer(5));
          }
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(resumeAnswer(77));
      },
    ),
  (seller) => startObservedGateway(agentsYaml({ r: { url: seller.url, sse_idle_timeout_ms: 1000 } }, RESUME_YAML)),
);

const host = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);
const { openCall, cancel } = host;
const resume = (token: string): Promise<Response> => host.resume('r', token);

describe('reused-id-after-cancel-resume-gets-405', { timeout: TEST_TIMEOUT_MS }, () => {
  test("id 77 cancelled and over, then sent again: the new call's resume reaches the seller and gets its answer", async () => {
    const first = await openCall('r', 77);
    const [oldToken] = sseIds(first.first);
    assert.ok(oldToken !== undefined && oldToken.startsWith('agw1.'), first.first);
    assert.equal(await cancel('r', 77), 202);
    assert.equal(await withTimeout(first.rest, 5_000, 'end of the cancelled stream'), '');
    // The cancelled call's own resume: 405, not sent.
    const old = await resume(oldToken);
    assert.deepEqual([old.status, await old.text()], [405, '']);

    const second = await openCall('r', 77);
    const [newToken] = sseIds(second.first);
    assert.ok(newToken !== undefined && newToken.startsWith('agw1.'), second.first);
    assert.equal(await withTimeout(second.rest, 5_000, 'end of the cut stream'), '');
    const resumed = await resume(newToken);
    assert.equal(resumed.status, 200);
    assert.match(await withTimeout(resumed.text(), 5_000, 'resume body'), /done 77/);
    assert.equal(stack.seller.requests.filter((r) => r.method === 'GET').length, 1, "the new call's resume reached the seller");
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'r' && l.rpc_id === 77 && l.http_method === 'GET' && l.status === 200);
    assert.notEqual(line.outcome, 'cancelled');
  });

  test("id 5's resume cancelled while open, id 5 sent again, then the old resume ends: the new call's resume still reaches the seller", async () => {
    const first = await openCall('r', 5);
    const [oldToken] = sseIds(first.first);
    assert.ok(oldToken !== undefined && oldToken.startsWith('agw1.'), first.first);
    assert.equal(await withTimeout(first.rest, 5_000, 'end of the cut stream'), '');
    // A's resume: open at the seller, held.
    const oldResume = await resume(oldToken);
    assert.equal(oldResume.status, 200);
    const oldBody = oldResume.text();
    assert.ok(heldResume !== undefined, 'the seller holds the first resume');
    assert.equal(await cancel('r', 5), 202);
    // B: a new call with id 5 (the cancelled resume does not hold it), cut after its event.
    const second = await openCall('r', 5);
    const [newToken] = sseIds(second.first);
    assert.ok(newToken !== undefined && newToken.startsWith('agw1.'), second.first);
    assert.equal(await withTimeout(second.rest, 5_000, 'end of the cut stream'), '');
    // A's resume ends only now (not by the gateway's idle timer before B opened).
    assert.equal(heldResume.destroyed, false, 'the first resume was still open when B opened');
    heldResume.end();
    await withTimeout(oldBody, 5_000, "end of the cancelled resume's body");
    const resumed = await resume(newToken);
    assert.equal(resumed.status, 200);
    assert.match(await withTimeout(resumed.text(), 5_000, 'resume body'), /done 5/);
    assert.equal(stack.seller.requests.filter((r) => r.method === 'GET' && r.headers['last-event-id'] === 'e5').length, 2, "the new call's resume reached the seller");
  });
});
