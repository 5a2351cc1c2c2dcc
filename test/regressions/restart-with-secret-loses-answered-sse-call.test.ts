/**
 * Regression (a hostile operator's trial 49, finding 1): with `resume.secret` configured, on
 * SIGTERM the gateway ended at once (outcome `resumable_end`) every request's SSE stream that
 * had sent the host an event id. The gateway is a sidecar: its successor listens on the same
 * port only once the old process has exited, and the old one was still draining a slow JSON
 * call. The MCP SDK client (1.32) reconnected with `Last-Event-ID` after 1 s over its
 * keep-alive connection and got 503 `draining`, then a refused connection, and gave up
 * ("Maximum reconnection attempts (2) exceeded"); the seller answered 0.7 s after the signal,
 * but `callTool` hung until the client's own timeout (45 s in the trial). Without a secret the
 * same call finished on the old process (a hostile trial 47, F1), so the recommended secret
 * made a same-port restart worse.
 *
 * Now every request's stream is left running during `shutdown_grace_ms`, resumable or not:
 * the seller's answer reaches the host on the old process, as a JSON answer does
 * (src/shutdown-streams.ts).
 *
 * Input: real SDK 1.x sellers on 127.0.0.1 (test/support/sdk1/drain-sellers.ts): `sse`
 * (stateful, an event store: every event has an id) and `json` (answers JSON). The gateway
 * runs as its own process (src/main.ts) with a resume secret and the default grace; two real
 * SDK 1.x Clients (StreamableHTTPClientTransport, default reconnection options) call
 * `json_call` (agent `json`) and `sse_call` (agent `sse`) through it; once the `sse_call`
 * progress notification (an event with an id) has reached its client, the gateway gets
 * SIGTERM. The SSE seller answers 700 ms after the `shutting down` line, the JSON seller
 * 3500 ms after it (the SDK client's reconnects, at +1 s and +2.5 s, have been made by then).
 *
 * Expectation: `sse_call` resolves with the seller's result within 2 s of its answer (before:
 * nothing, as the client had given up); its exchange line says outcome `ok`; the client made
 * no request with `Last-Event-ID` and saw no 503; `json_call` gets its result too; the
 * `shutting down` line says `sse_streams_ended` 0 and `sse_streams_finishing` 2 (the call's
 * stream and the standalone GET stream: drain-ends-get-stream-into-draining-refusals.test.ts);
 * nothing is refused `draining`; the process exits 0 (`stopped`).
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
import { JSON_RESULT, SSE_RESULT, startDrainSellers, type DrainSellers } from '../support/sdk1/drain-sellers.js';

const SECRET = 'restart-with-secret-loses-answered-sse-call-0123456789';
/** The client's own timeout: far past the bounded waits below (the trial's was 45 s). */
const CALL_TIMEOUT_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sellers: DrainSellers;
let dir: string;

before(async () => {
  sellers = await startDrainSellers();
  dir = await mkdtemp(join(tmpdir(), 'gw-restart-secret-'));
});

after(async () => {
  await sellers.close();
  await rm(dir, { recursive: true, force: true });
});

describe('restart-with-secret-loses-answered-sse-call', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('a configured secret: the SSE call the seller answers 700 ms after SIGTERM gets its result on the old process', async () => {
    const { gw, sseClient, jsonCall, resumesAndRefusals, close } = await openDrainSession(sellers, dir, SECRET, CALL_TIMEOUT_MS);
    try {
      const { settled: sseCall } = await callAfterFirstProgress(sseClient, 'sse_call', CALL_TIMEOUT_MS);

      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      await sleep(700);
      sellers.release('sse_call');
      // Bounded: 2 s after the seller's answer (before, the call settled only at the client's timeout).
      const settled = await Promise.race([sseCall, sleep(2_000).then(() => ({ nothing: 'within 2 s of the seller answering' }))]);
      await sleep(800); // +3.5 s: the JSON seller answers
      sellers.release('json_call');
      assert.deepEqual(settled, { result: SSE_RESULT });
      assert.deepEqual(await withTimeout(jsonCall, 10_000, 'json_call'), JSON_RESULT);
      assert.equal(await withTimeout(gw.exited, 15_000, 'exit'), 0);

      assert.deepEqual(resumesAndRefusals(), [], 'no resume, no 503, no refused connection');
      const call = gw.logs.find((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.tool === 'sse_call');
      assert.deepEqual([call?.outcome, call?.reason], ['ok', null]);
      const down = gw.logs.find((l) => l.msg === 'shutting down');
      assert.deepEqual([down?.sse_streams_ended, down?.sse_streams_finishing, down?.resume_secret], [0, 2, 'configured']);
      assert.deepEqual(gw.logs.filter((l) => l.msg === 'refused').map((l) => l.reason), []);
      assert.ok(gw.logs.some((l) => l.msg === 'stopped'));
    } finally {
      sellers.release('sse_call');
      sellers.release('json_call');
      await close();
    }
  });
});
