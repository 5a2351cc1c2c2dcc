/**
 * Regression (a hostile operator's trial 51, finding 1): with a resume secret configured, a
 * seller that closes its own SSE stream for a call during the drain (SEP-1699 polling: an
 * event with an id, then the close; the answer comes on the stream the client resumes) while
 * another call keeps the old process up. The gateway ended the host's stream plainly
 * (`resumable_end`); the MCP SDK client's (1.32) reconnect, a GET with `Last-Event-ID` on its
 * keep-alive connection to the old process, got 503 `draining`, the next a refused connection
 * (listener closed, no successor yet); the SDK gave up and the call hung to the client's own
 * timeout (45 s in the trial), though the seller answered 2 s after closing.
 *
 * Now a resume (a GET on an MCP endpoint carrying `Last-Event-ID`) is not refused `draining`:
 * it is served as usual, and its stream runs under the drain's rules (src/routing/draining.ts).
 *
 * Input: the real SDK 1.x sellers of test/support/sdk1/drain-sellers.ts; the gateway as its own
 * process (src/main.ts) with a resume secret and the default grace; two real SDK Clients call
 * `json_call` (held: keeps the process draining) and `poll_call` through it; once the
 * `poll_call` progress reached its client, SIGTERM; after `shutting down` the seller closes the
 * call's stream, and answers 2 s later; then the JSON seller answers.
 *
 * Expectation: `poll_call` resolves with the seller's result within 2 s of the answer; the
 * client resumed once with `Last-Event-ID` (200) and saw no 503 and no failed request; nothing
 * is refused; the resumed stream's exchange line says outcome `ok`; the process exits 0.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { callAfterFirstProgress } from '../helpers/sdk-call-after-progress.js';
import { openDrainSession } from '../helpers/drain-session.js';
import { JSON_RESULT, POLL_RESULT, startDrainSellers, type DrainSellers } from '../support/sdk1/drain-sellers.js';

const SECRET = 'resume-during-drain-refused-draining-0123456789';
const CALL_TIMEOUT_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sellers: DrainSellers;
let dir: string;

before(async () => {
  sellers = await startDrainSellers();
  dir = await mkdtemp(join(tmpdir(), 'gw-resume-drain-'));
});

after(async () => {
  await sellers.close();
  await rm(dir, { recursive: true, force: true });
});

describe('resume-during-drain-refused-draining', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('a seller closing its stream during the drain: the SDK client resumes on the old process and gets its result', async () => {
    const { gw, sseClient: pollClient, jsonCall, resumesAndRefusals, close } = await openDrainSession(sellers, dir, SECRET, CALL_TIMEOUT_MS);
    try {
      const { settled: pollCall } = await callAfterFirstProgress(pollClient, 'poll_call', CALL_TIMEOUT_MS);

      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      sellers.release('poll_close'); // the seller closes the call's stream (SEP-1699)
      await sleep(2_000);
      sellers.release('poll_call');
      const settled = await Promise.race([pollCall, sleep(2_000).then(() => ({ nothing: 'within 2 s of the seller answering' }))]);
      sellers.release('json_call');
      assert.deepEqual(settled, { result: POLL_RESULT });
      assert.deepEqual(await withTimeout(jsonCall, 10_000, 'json_call'), JSON_RESULT);
      assert.equal(await withTimeout(gw.exited, 15_000, 'exit'), 0);

      assert.deepEqual(resumesAndRefusals(), [['GET', true, 200]], 'one resume, answered 200; no 503, no refused connection');
      assert.deepEqual(gw.logs.filter((l) => l.msg === 'refused').map((l) => l.reason), []);
      const calls = gw.logs.filter((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.tool === 'poll_call');
      assert.deepEqual(
        calls.map((l) => [l.http_method, l.outcome]),
        [
          ['POST', 'resumable_end'],
          ['GET', 'ok'],
        ],
      );
      assert.ok(gw.logs.some((l) => l.msg === 'stopped'));
    } finally {
      for (const tool of ['poll_close', 'poll_call', 'json_call'] as const) sellers.release(tool);
      await close();
    }
  });
});
