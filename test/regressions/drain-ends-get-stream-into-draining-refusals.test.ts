/**
 * Regression (a hostile operator's trial 49, finding 2): on SIGTERM the gateway ended at once
 * the standalone GET stream (every MCP SDK client opens one) and the other streams that answer
 * no request. While a request was still draining, the SDK client (1.32) reconnected into 503
 * `draining` (then a refused connection) and gave up for good ("Maximum reconnection attempts
 * (2) exceeded"): after the restart its host got no server-initiated messages.
 *
 * Now such a stream ends when nothing else keeps the process (no request exchange in flight:
 * just before the exit), or at the grace's margin, whichever comes first
 * (src/shutdown-streams.ts): its client's reconnect goes to the successor, not into `draining`.
 *
 * Input: real SDK 1.x sellers on 127.0.0.1 (test/support/sdk1/drain-sellers.ts): `sse`
 * (stateful, with the standalone GET stream) and `json` (answers JSON). The gateway runs as its
 * own process (src/main.ts), no resume secret. A real SDK 1.x Client on agent `sse` (default
 * reconnection options; its fetch records every attempt) has its GET stream open.
 *
 * Expectation:
 * - A `json_call` in flight (another SDK Client, agent `json`), answered 1500 ms after the
 *   `shutting down` line: the GET stream is not ended meanwhile (its client makes no new
 *   request: no 503); its exchange line (outcome `resumable_end`) comes after the JSON call's
 *   and before `stopped`; nothing is refused `draining`; `shutting down` says
 *   `sse_streams_ended` 0, `sse_streams_finishing` 1; exit 0.
 * - Only the idle GET stream open: it ends at the signal (`sse_streams_ended` 1) and the
 *   process exits at once: `stopped` within 500 ms of `shutting down` (the default grace is
 *   10 s: far below it proves no wait; 500 ms, not 100, holds on a busy CI runner: review
 *   34, item 3).
 * - A second SIGTERM while the JSON call drains: exit 1 at once, the GET stream ended first
 *   (its exchange line, then the exit line).
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { JSON_RESULT, startDrainSellers, watchingFetch, type Attempt, type DrainSellers } from '../support/sdk1/drain-sellers.js';

const CALL_TIMEOUT_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sellers: DrainSellers;
let dir: string;
const cleanups: Array<() => Promise<void>> = [];

before(async () => {
  sellers = await startDrainSellers();
  dir = await mkdtemp(join(tmpdir(), 'gw-drain-get-'));
});

afterEach(async () => {
  sellers.release('json_call');
  for (const cleanup of cleanups.splice(0)) await cleanup();
  sellers.reset();
});

after(async () => {
  await sellers.close();
  await rm(dir, { recursive: true, force: true });
});

interface Setup {
  gw: GatewayProcess;
  /** Every attempt of the `sse` agent's client, its first GET stream's included. */
  seen: Attempt[];
  jsonClient: Client;
}

/** A gateway process, the `sse` client with its GET stream open, and a client of agent `json`. */
async function setUp(name: string): Promise<Setup> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  sse: { url: ${sellers.sseUrl} }\n  json: { url: ${sellers.jsonUrl} }\n`);
  const gw = await startGatewayProcess(file);
  const seen: Attempt[] = [];
  let getOpen!: () => void;
  const opened = new Promise<void>((resolve) => (getOpen = resolve));
  const sseClient = new Client({ name: 'drain-host', version: '1.0.0' });
  const jsonClient = new Client({ name: 'drain-host', version: '1.0.0' });
  cleanups.push(async () => {
    await sseClient.close().catch(() => {});
    await jsonClient.close().catch(() => {});
    gw.kill();
  });
  await withTimeout(sseClient.connect(new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/sse/mcp`), { fetch: watchingFetch(seen, getOpen) })), 10_000, 'connect sse');
  await withTimeout(jsonClient.connect(new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/json/mcp`))), 10_000, 'connect json');
  await withTimeout(opened, 10_000, 'the standalone GET stream');
  // Every exchange but the open GET stream over (each client's initialize and initialized
  // notification, and the json client's GET, answered 405): one still open at the signal is a
  // request in flight, and the idle GET stream would then end after it, not at the signal
  // (review 34: the `[1, 0]` of `shutting down` failed about one run in two).
  await withTimeout(
    (async () => {
      while (gw.logs.filter((l) => l.msg === 'exchange').length < 5) await sleep(10);
    })(),
    10_000,
    'the setup exchanges logged',
  );
  return { gw, seen, jsonClient };
}

const getLine = (logs: readonly LogEntry[]): number => logs.findIndex((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.agent === 'sse');
const indexOf = (logs: readonly LogEntry[], msg: string): number => logs.findIndex((l) => l.msg === msg);

describe('drain-ends-get-stream-into-draining-refusals', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('a JSON call draining: the GET stream is not ended meanwhile, but just before the exit', async () => {
    const { gw, seen, jsonClient } = await setUp('draining');
    const jsonCall = jsonClient.callTool({ name: 'json_call', arguments: {} }, undefined, { timeout: CALL_TIMEOUT_MS });
    jsonCall.catch(() => {}); // awaited below
    await sleep(200); // the call reached the seller
    const before = seen.length;
    gw.child.kill('SIGTERM');
    await gw.waitForLog('shutting down');
    await sleep(1_500); // past the SDK client's first reconnect (1 s), had its stream ended
    const during = seen.slice(before).map((a) => [a.method, a.status]);
    sellers.release('json_call');
    assert.deepEqual(await withTimeout(jsonCall, 10_000, 'json_call'), JSON_RESULT);
    const code = await withTimeout(gw.exited, 15_000, 'exit');

    assert.deepEqual(during, [], 'the GET stream was left open while the JSON call drained: no reconnect');
    assert.deepEqual(gw.logs.filter((l) => l.msg === 'refused').map((l) => [l.http_method, l.reason]), []);
    const down = gw.logs.find((l) => l.msg === 'shutting down');
    assert.deepEqual([down?.sse_streams_ended, down?.sse_streams_finishing], [0, 1]);
    const json = gw.logs.findIndex((l) => l.msg === 'exchange' && l.tool === 'json_call');
    const get = getLine(gw.logs);
    assert.ok(json !== -1 && get > json, `the GET stream's line after the JSON call's (${get}, ${json})`);
    assert.equal(gw.logs[get]?.outcome, 'resumable_end');
    assert.ok(get < indexOf(gw.logs, 'stopped'), 'and before stopped');
    assert.equal(code, 0);
  });

  test('only the idle GET stream open: ended at the signal, stopped within 500 ms (at once: no grace waited)', async () => {
    const { gw } = await setUp('idle');
    gw.child.kill('SIGTERM');
    assert.equal(await withTimeout(gw.exited, 10_000, 'exit'), 0);
    const down = gw.logs.find((l) => l.msg === 'shutting down');
    const stopped = gw.logs.find((l) => l.msg === 'stopped');
    assert.deepEqual([down?.sse_streams_ended, down?.sse_streams_finishing], [1, 0]);
    assert.equal(gw.logs[getLine(gw.logs)]?.outcome, 'resumable_end');
    const took = Date.parse(String(stopped?.time)) - Date.parse(String(down?.time));
    assert.ok(took >= 0 && took < 500, `stopped ${took} ms after shutting down`);
  });

  test('a second signal while a JSON call drains: the GET stream ends, then exit 1 at once', async () => {
    const { gw, jsonClient } = await setUp('twice');
    jsonClient.callTool({ name: 'json_call', arguments: {} }, undefined, { timeout: CALL_TIMEOUT_MS }).catch(() => {});
    await sleep(200);
    gw.child.kill('SIGTERM');
    await gw.waitForLog('shutting down');
    await sleep(300);
    gw.child.kill('SIGTERM');
    assert.equal(await withTimeout(gw.exited, 5_000, 'exit'), 1);
    const exit = indexOf(gw.logs, 'second signal while shutting down: exiting now');
    const get = getLine(gw.logs);
    assert.ok(get !== -1 && get < exit, `the GET stream's line before the exit line (${get}, ${exit})`);
    // Only the JSON call is cut; the GET stream, ended plainly, keeps its outcome (a hostile
    // operator's trial 51, finding 4: test/regressions/second-signal-logs-ended-streams-as-cut.test.ts).
    assert.equal(gw.logs[get]?.outcome, 'resumable_end');
    assert.equal(gw.logs[exit]?.exchanges_cut, 1);
  });
});
