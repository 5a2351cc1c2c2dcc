/**
 * Regression (a new user's trial): on SIGTERM the gateway let in-flight JSON exchanges run
 * for `shutdown_grace_ms`, then exited 1 with only "shutdown_grace_ms is over with requests
 * still open: exiting anyway": an exchange cut off that way wrote no `exchange` line, so the
 * operator could not tell which agents, tools and requests were cut. The same held for the
 * immediate exit on a second signal.
 *
 * Input: a real gateway process (src/main.ts) with two agents on one raw seller on
 * 127.0.0.1; one exchange answered at once, then two whose seller never answers (a
 * `tools/call` with a string id on agent `a`, a `tools/list` with a number id on agent `b`);
 * then SIGTERM with a small `shutdown_grace_ms` (or SIGTERM twice).
 * Expected: exit 1; one `exchange` line per exchange, the answered one `ok`, each cut one
 * with its agent, method, tool and id, `status` null (no response head went out) and
 * `outcome` `shutdown_cut`; the exit's error line counts them (`exchanges_cut`).
 *
 * And in that order on stdout: every exchange line before the exit's own line, the last one.
 * The cut lines were seen after it (their timestamps earlier): the first one's asynchronous
 * write was still in flight on libuv's thread pool when the exit flushed the lines queued
 * behind it synchronously, the exit's line included (a new user's trial, second signal).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const GRACE_OVER = 'shutdown_grace_ms is over with requests still open: exiting anyway';
const SECOND_SIGNAL = 'second signal while shutting down: exiting now';

let seller: RawSeller;
let dir: string;
/** Called with the JSON-RPC id of each request the seller holds (never answers). */
let onHeld: (id: unknown) => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: unknown; method: string; params?: { name?: string } };
    if (msg.params?.name === 'quick') {
      const body = toolResponse(msg.id as number, { content: [{ type: 'text', text: 'done' }] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    onHeld(msg.id); // no answer, not even the head: the exchange is open when the grace runs out
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-shutdown-cut-'));
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** The gateway process, and when it is over with its stdout read to the end (after `exited`: the last lines may still be in the pipe then). */
async function startTwoAgentGateway(name: string, graceMs: number): Promise<GatewayProcess & { closed: Promise<void> }> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    // A response deadline far past any hang guard: only the shutdown can end the held exchanges.
    `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nshutdown_grace_ms: ${graceMs}\nresume:\n  secret: shutdown-cut-test-resume-secret-0123456789\ndefaults:\n  response_deadline_ms: 3600000\nagents:\n  a:\n    url: ${seller.url}\n  b:\n    url: ${seller.url}\n`,
  );
  const gw = await startGatewayProcess(file);
  return { ...gw, closed: new Promise<void>((resolve) => gw.child.once('close', () => resolve())) };
}

/** POSTs `message` to `agent`; resolves with the HTTP status, or `reset` when the connection closes with no response. */
function post(gw: GatewayProcess, agent: string, message: unknown): Promise<number | 'reset'> {
  return fetch(`${gw.address}/agents/${agent}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(message),
  }).then(
    async (res) => {
      await res.arrayBuffer();
      return res.status;
    },
    () => 'reset' as const,
  );
}

/** One answered exchange, then two held at the seller: resolves once both arrived there, with the hosts' outcomes to come. */
async function answeredThenTwoHeld(gw: GatewayProcess): Promise<{ hosts: Promise<Array<number | 'reset'>> }> {
  assert.equal(await withTimeout(post(gw, 'a', toolCall(1, 'quick')), PROCESS_TIMEOUT_MS, 'answered exchange'), 200);
  const arrived = new Set<unknown>();
  const bothHeld = new Promise<void>((resolve) => {
    onHeld = (id) => {
      arrived.add(id);
      if (arrived.size === 2) resolve();
    };
  });
  const hosts = Promise.all([post(gw, 'a', toolCall('cut-a', 'create_media_buy')), post(gw, 'b', { jsonrpc: '2.0', id: 42, method: 'tools/list', params: {} })]);
  await withTimeout(bothHeld, PROCESS_TIMEOUT_MS, 'both requests at the seller');
  return { hosts }; // wrapped: an async function returning the promise itself would wait for it
}

/** The fields of a line that a test can state exactly (everything but `duration_ms` and pino's own). */
function exchangeFields(e: LogEntry): Record<string, unknown> {
  return {
    agent: e.agent,
    method: e.method,
    tool: e.tool,
    rpc_id: e.rpc_id,
    status: e.status,
    upstream_status: e.upstream_status,
    bytes_from_seller: e.bytes_from_seller,
    bytes_decoded: e.bytes_decoded,
    bytes_to_host: e.bytes_to_host,
    bytes_saved: e.bytes_saved,
    outcome: e.outcome,
    reason: e.reason,
  };
}

const CUT = { status: null, upstream_status: null, bytes_from_seller: 0, bytes_decoded: 0, bytes_to_host: 0, bytes_saved: 0, outcome: 'shutdown_cut', reason: null };

/** Asserts the exchange lines: the answered one, then one per cut exchange (in any order), each once. */
function assertExchangeLines(logs: LogEntry[]): void {
  const lines = logs.filter((e) => e.msg === 'exchange');
  const byId = new Map(lines.map((e) => [e.rpc_id, e]));
  assert.equal(byId.size, lines.length, `one line per exchange: ${JSON.stringify(lines)}`);
  assert.deepEqual([...byId.keys()].sort((x, y) => String(x).localeCompare(String(y))), [1, 42, 'cut-a']);
  assert.equal(byId.get(1)!.outcome, 'ok');
  assert.deepEqual(exchangeFields(byId.get('cut-a')!), { agent: 'a', method: 'tools/call', tool: 'create_media_buy', rpc_id: 'cut-a', ...CUT });
  assert.deepEqual(exchangeFields(byId.get(42)!), { agent: 'b', method: 'tools/list', tool: null, rpc_id: 42, ...CUT });
  for (const id of ['cut-a', 42]) {
    const line = byId.get(id)!;
    assert.equal(line.level, 40); // warn: a failed exchange (hostile trial 53, F2; it was info, as every exchange line)
    assert.equal(typeof line.duration_ms, 'number');
  }
}

/** Every exchange line comes before the exit's line (`exitMsg`) in stdout, and the exit's line is the last one. */
function assertExitLineLast(logs: LogEntry[], exitMsg: string): void {
  const order = JSON.stringify(logs.map((e) => [e.msg, e.time, e.rpc_id ?? null]));
  const exitAt = logs.findIndex((e) => e.msg === exitMsg);
  assert.equal(exitAt, logs.length - 1, `the exit's line is the last: ${order}`);
  const exchangesAt = logs.flatMap((e, i) => (e.msg === 'exchange' ? [i] : []));
  assert.equal(exchangesAt.length, 3, order);
  for (const i of exchangesAt) assert.ok(i < exitAt, `exchange line ${i} after the exit's line ${exitAt}: ${order}`);
}

describe('an exchange cut by the forced exit of a shutdown writes its exchange line', () => {
  it('shutdown_grace_ms runs out: exit 1, a shutdown_cut line per open exchange', OPTIONS, async () => {
    const gw = await startTwoAgentGateway('grace', 200);
    try {
      const { hosts } = await answeredThenTwoHeld(gw);
      gw.child.kill('SIGTERM');
      assert.equal(await withTimeout(gw.exited, PROCESS_TIMEOUT_MS, 'exit'), 1);
      await withTimeout(gw.closed, PROCESS_TIMEOUT_MS, 'stdout end');
      assert.deepEqual(await withTimeout(hosts, PROCESS_TIMEOUT_MS, 'hosts'), ['reset', 'reset']);
      assertExchangeLines(gw.logs);
      const over = gw.logs.find((e) => e.msg === GRACE_OVER);
      assert.ok(over, JSON.stringify(gw.logs.map((e) => e.msg)));
      assert.equal(over.grace_ms, 200);
      assert.equal(over.exchanges_cut, 2);
      assertExitLineLast(gw.logs, GRACE_OVER);
    } finally {
      gw.kill();
    }
  });

  it('a second signal: exit 1 at once, a shutdown_cut line per open exchange', OPTIONS, async () => {
    const gw = await startTwoAgentGateway('twice', 600_000);
    try {
      const { hosts } = await answeredThenTwoHeld(gw);
      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      gw.child.kill('SIGTERM');
      assert.equal(await withTimeout(gw.exited, PROCESS_TIMEOUT_MS, 'exit'), 1);
      await withTimeout(gw.closed, PROCESS_TIMEOUT_MS, 'stdout end');
      assert.deepEqual(await withTimeout(hosts, PROCESS_TIMEOUT_MS, 'hosts'), ['reset', 'reset']);
      assertExchangeLines(gw.logs);
      const second = gw.logs.find((e) => e.msg === SECOND_SIGNAL);
      assert.ok(second, JSON.stringify(gw.logs.map((e) => e.msg)));
      assert.equal(second.exchanges_cut, 2);
      assertExitLineLast(gw.logs, SECOND_SIGNAL);
    } finally {
      gw.kill();
    }
  });
});
