/**
 * Regression (a hostile operator's trial 53, F1): with a resume secret configured (the shipped
 * docker-compose requires one), a restart whose successor listened more than ~2.5 s after the
 * old gateway ended a call's SSE stream left that call hanging until the client's own timeout.
 * The old gateway ended the stream plainly (outcome `resumable_end`) at the grace's margin and
 * exited; the MCP SDK client (1.32.2, default reconnection options: 2 retries, 1000 ms then
 * 1500 ms apart, no `retry:` from the server) retried at ~1 s and ~2.5 s into a refused
 * connection, logged `Maximum reconnection attempts (2) exceeded.` and `callTool` failed with
 * `MCP error -32001: Request timed out` at 20.8 s. The successor logged no request, and nothing
 * in the old log said the call was now in its client's hands.
 *
 * Now every stream a shutdown ends plainly carries the gateway's own `retry:` field just before
 * its end (`shutdown_sse_retry_ms`, default 5000): the SDK client honours a server's `retry:`
 * (SEP-1699; it replaces its backoff for every later attempt of the transport), so its two
 * attempts come 5 s and 10 s after the end. And the old gateway logs at warn which calls'
 * streams it ended for their clients to resume (agent, tool, rpc_id).
 *
 * Input: real SDK 1.x sellers on 127.0.0.1 (test/support/sdk1/drain-sellers.ts, agent `sse`:
 * stateful, an event store, so every event has an id). The gateway runs as its own process
 * (src/main.ts) with a resume secret and `shutdown_grace_ms: 2000` (the stream ends at the
 * margin, 1000 ms after the signal). A real SDK 1.x Client with its default reconnection
 * options (its fetch records every attempt) calls `sse_call`; once the call's progress event
 * (an event with an id) has reached it, the gateway gets SIGTERM. The successor, the same
 * config on the same port, is started 3 s after the old one ended the stream (past the SDK's
 * default 2.5 s), once the old process has exited; the seller answers once it listens.
 *
 * Expectation (one run, checked by the tests below):
 * - `callTool` resolves with the seller's result (before: it timed out);
 * - the call's stream, as the client read it, ends with `retry: 5000` after its progress event;
 *   the client's first resume comes no sooner than ~5 s after that end (before: ~1 s), and one
 *   of its resumes is answered 200 by the successor;
 * - the old process logs the call's `exchange` line, outcome `resumable_end`, and the warn line
 *   `shutdown: SSE calls ended for their clients to resume on a successor` listing it
 *   (agent `sse`, tool `sse_call`, its rpc_id) with `retry_ms` 5000;
 * - the successor logs the resume's exchange (tools/call `sse_call`, same rpc_id, outcome ok).
 */
import { recordingFetch, type SeenExchange } from '../helpers/recording-fetch.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { callAfterFirstProgress, type SettledCall } from '../helpers/sdk-call-after-progress.js';
import { SSE_RESULT, startDrainSellers, type DrainSellers } from '../support/sdk1/drain-sellers.js';

const SECRET = 'slow-restart-leaves-resumable-sse-call-hanging-0123456789';
/** The client's own timeout (the trial's was 20 s). */
const CALL_TIMEOUT_MS = 20_000;
/** When the successor is started, after the old gateway ended the call's stream: past the SDK's default window (1 s + 1.5 s). */
const SUCCESSOR_AFTER_MS = 3_000;
/** The `retry:` the gateway writes by default (config shutdown_sse_retry_ms). */
const DEFAULT_RETRY_MS = 5_000;
const WARN_MSG = 'shutdown: SSE calls ended for their clients to resume on a successor';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One HTTP attempt of the client: its status or `failed` (a refused connection), when, and its body. */
type Attempt = SeenExchange;

interface Run {
  settled: SettledCall | { nothing: string };
  /** Date.now() when the old gateway's `shutdown_grace_ms nearly over` line came (the stream's end). */
  endedAt: number;
  seen: Attempt[];
  oldLogs: readonly LogEntry[];
  freshLogs: readonly LogEntry[];
}

let sellers: DrainSellers;
let dir: string;
let run: Run;

before(async () => {
  sellers = await startDrainSellers();
  dir = await mkdtemp(join(tmpdir(), 'gw-slow-restart-'));
  const file = join(dir, 'gateway.yaml');
  const config = (port: number): string =>
    `listen: { host: 127.0.0.1, port: ${port} }\nlog_level: info\nshutdown_grace_ms: 2000\nresume:\n  secret: ${SECRET}\nagents:\n  sse: { url: ${sellers.sseUrl} }\n`;
  await writeFile(file, config(0));
  const old: GatewayProcess = await startGatewayProcess(file);
  let fresh: GatewayProcess | undefined;
  const seen: Attempt[] = [];
  const client = new Client({ name: 'slow-restart-host', version: '1.0.0' });
  try {
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(`${old.address}/agents/sse/mcp`), { fetch: recordingFetch(seen, { recordFailures: true }) })), 10_000, 'connect');
    const { settled: call } = await callAfterFirstProgress(client, 'sse_call', CALL_TIMEOUT_MS);
    old.child.kill('SIGTERM');
    await old.waitForLog('shutdown_grace_ms nearly over');
    const endedAt = Date.now();
    assert.equal(await withTimeout(old.exited, 15_000, 'the old exit'), 0);
    await sleep(Math.max(0, endedAt + SUCCESSOR_AFTER_MS - Date.now()));
    // The same config on the same port, as a supervisor restarts it.
    await writeFile(file, config(Number(new URL(old.address).port)));
    fresh = await startGatewayProcess(file);
    sellers.release('sse_call');
    // Bounded: the SDK's second attempt comes 10 s after the end; before, the call settled only at its timeout.
    const settled = await Promise.race([call, sleep(Math.max(0, endedAt + 2 * DEFAULT_RETRY_MS + 3_000 - Date.now())).then(() => ({ nothing: 'within 13 s of the stream end' }))]);
    // The resume's exchange line comes as its stream ends, just after the answer: up to 5 s for it.
    for (let i = 0; i < 50 && !fresh.logs.some((l) => l.msg === 'exchange' && l.tool === 'sse_call'); i++) await sleep(100);
    run = { settled, endedAt, seen, oldLogs: old.logs, freshLogs: fresh.logs };
  } finally {
    await client.close().catch(() => {});
    old.kill();
    fresh?.kill();
  }
});

after(async () => {
  await sellers.close();
  await rm(dir, { recursive: true, force: true });
});

/** The call's POST (initialize first, then the call; notifications got 202). */
function callPost(): Attempt {
  const posts = run.seen.filter((a) => a.method === 'POST' && a.status === 200);
  assert.equal(posts.length, 2);
  return posts[1]!;
}

describe('slow-restart-leaves-resumable-sse-call-hanging', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('callTool resolves with the seller result through a successor started 3 s after the stream end', () => {
    assert.deepEqual(run.settled, { result: SSE_RESULT });
  });

  test("the call's stream ends with the gateway's retry: 5000, and the client waits that long before it resumes", async () => {
    const body = await withTimeout(callPost().text, 5_000, 'the call body');
    assert.match(body, /^id: .+\nevent: message\ndata: \{"method":"notifications\/progress"/m);
    assert.ok(body.endsWith(`\n\nretry: ${DEFAULT_RETRY_MS}\n\n`), `the stream ends with the retry field: ${JSON.stringify(body.slice(-80))}`);
    const resumes = run.seen.filter((a) => a.method === 'GET' && a.lastEventId !== null && a.at > run.endedAt);
    assert.ok(resumes.length > 0, 'the client resumes');
    // Not the SDK's own 1 s: the gateway's 5 s (less what the log line's trip to the test took).
    assert.ok(resumes[0]!.at - run.endedAt >= DEFAULT_RETRY_MS - 500, `first resume ${resumes[0]!.at - run.endedAt} ms after the end`);
    assert.ok(
      resumes.some((a) => a.status === 200),
      `a resume answered by the successor: ${JSON.stringify(resumes.map((a) => a.status))}`,
    );
  });

  test('the old gateway logs at warn which calls it ended for their clients to resume', () => {
    const line = run.oldLogs.find((l) => l.msg === 'exchange' && l.tool === 'sse_call');
    assert.equal(line?.outcome, 'resumable_end');
    const warn = run.oldLogs.find((l) => l.msg === WARN_MSG);
    assert.ok(warn, `a "${WARN_MSG}" line`);
    assert.deepEqual(
      { level: warn.level, calls: warn.calls, retry_ms: warn.retry_ms },
      { level: 40, calls: [{ agent: 'sse', tool: 'sse_call', rpc_id: line?.rpc_id }], retry_ms: DEFAULT_RETRY_MS },
    );
  });

  test("the successor logs the call's resume, outcome ok", () => {
    const old = run.oldLogs.find((l) => l.msg === 'exchange' && l.tool === 'sse_call');
    const resumed = run.freshLogs.find((l) => l.msg === 'exchange' && l.tool === 'sse_call');
    assert.deepEqual([resumed?.http_method, resumed?.rpc_id, resumed?.outcome], ['GET', old?.rpc_id, 'ok']);
  });
});
