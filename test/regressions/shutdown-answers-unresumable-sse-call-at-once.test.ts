/**
 * Regression (a hostile trial 47, F1): on SIGTERM the gateway answered every `tools/call`
 * whose seller answers over SSE and that could not be resumed (no resume secret, or no event
 * id sent to the host yet) with `gateway_shutdown` at once, although the seller would have
 * answered within `shutdown_grace_ms`; a JSON answer, by contrast, finishes within the grace.
 * Now such a call's stream keeps running during the grace: the seller's result reaches the
 * host and the process exits 0 once nothing is in flight; one the seller has not answered
 * shortly before the grace runs out (min(1000 ms, half the grace) before it) gets
 * `gateway_shutdown` then, early enough to be written before the forced exit.
 *
 * Input: a real MCP TypeScript SDK 1.x server (McpServer + StreamableHTTPServerTransport,
 * stateless, no event store: its SSE events carry no id) on 127.0.0.1, with two tools:
 * `slow_report` sends a progress notification, then answers when the test releases it (300 ms
 * after the gateway logged `shutting down`); `stuck_report` sends the progress notification
 * and never answers. The gateway runs as its own process (src/main.ts); a real SDK 1.x Client
 * (StreamableHTTPClientTransport) calls the tool through it; once the progress notification
 * has reached the client, the gateway gets SIGTERM.
 *
 * Expectation:
 * - `slow_report`, without a resume secret (the shipped config) and with one: `callTool`
 *   resolves with the tool's own result; the gateway exits 0 (`stopped`, no forced exit);
 *   the call's exchange line says outcome `ok`, reason null, no `resume_secret`; the
 *   `shutting down` line `sse_streams_ended` 0 and `sse_streams_finishing` 1.
 * - `stuck_report` with `shutdown_grace_ms: 1500`: `callTool` resolves with the gateway's
 *   `gateway_shutdown` tool error (docs/errors.md), written before the forced exit: exit 0,
 *   no `shutdown_grace_ms is over` line; the line `shutdown_grace_ms nearly over: ...`
 *   (`sse_streams_ended` 1, `margin_ms` 750) comes before the call's exchange line (outcome
 *   `local_error`, reason `gateway_shutdown`, `resume_secret` `per_process`).
 * - `stuck_report` and a second SIGTERM (default grace): the stream left to finish gets its
 *   `gateway_shutdown` event before that signal's immediate exit 1 (before the change it had
 *   it at the first signal; cut with no event, the SDK call would hang to its timeout); the
 *   exchange line says `local_error`, reason `gateway_shutdown`, and the exit's
 *   `exchanges_cut` is 0 (it said `shutdown_cut` and counted it before trial 51, finding 4).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildAdcpError, toolErrorResult } from '../../src/mcp/local-error.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { callAfterFirstProgress } from '../helpers/sdk-call-after-progress.js';

const SECRET = 'shutdown-unresumable-sse-call-secret-0123456789';
const RESULT = { content: [{ type: 'text', text: 'report ready: 3 rows' }] };
/** The client's own timeout for the call: far past every grace here. */
const CALL_TIMEOUT_MS = 30_000;
const NEARLY_OVER = 'shutdown_grace_ms nearly over: ending the SSE streams still open';

let seller: Server;
let sellerUrl: string;
let dir: string;
/** Resolved by the test: `slow_report` answers then. */
let release: () => void = () => {};
/** Every tool run still waiting, resolved at the end so the seller can close. */
const waiting = new Set<() => void>();

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'grace-seller', version: '1.0.0' });
  const progress = async (extra: { _meta?: { progressToken?: string | number }; sendNotification: (n: never) => Promise<void> }): Promise<void> => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } } as never);
  };
  server.registerTool('slow_report', { description: 'Answers once released.' }, async (extra) => {
    await progress(extra as never);
    await new Promise<void>((resolve) => {
      waiting.add(resolve);
      release = resolve;
    });
    return RESULT as never;
  });
  server.registerTool('stuck_report', { description: 'Never answers.' }, async (extra) => {
    await progress(extra as never);
    await new Promise<void>((resolve) => waiting.add(resolve));
    return RESULT as never;
  });
  return server;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // No standalone GET stream, no sessions: the SDK client takes 405 as "none".
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
  const body = await readBody(req);
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => server.close()));
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

before(async () => {
  seller = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/mcp`;
  dir = await mkdtemp(join(tmpdir(), 'gw-grace-sse-'));
});

after(async () => {
  for (const resolve of waiting) resolve();
  seller.closeAllConnections();
  await new Promise<void>((resolve) => seller.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  settled: { result: unknown } | { error: Error };
  exitCode: number | null;
  logs: readonly LogEntry[];
}

/** `tool` called through a gateway process on `name`.yaml, SIGTERM once its progress notification reached the client. */
async function callAcrossShutdown(name: string, tool: string, opts: { secret: boolean; graceMs?: number; secondSignal?: boolean }): Promise<Run> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\n${opts.secret ? `resume:\n  secret: ${SECRET}\n` : ''}` +
      `${opts.graceMs === undefined ? '' : `shutdown_grace_ms: ${opts.graceMs}\n`}agents:\n  s:\n    url: ${sellerUrl}\n`,
  );
  const gw: GatewayProcess = await startGatewayProcess(file);
  const client = new Client({ name: 'grace-host', version: '1.0.0' });
  try {
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/s/mcp`), {
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
    });
    await withTimeout(client.connect(transport), 10_000, 'connect');
    const { settled: call } = await callAfterFirstProgress(client, tool, CALL_TIMEOUT_MS);

    gw.child.kill('SIGTERM');
    await gw.waitForLog('shutting down');
    if (opts.secondSignal === true) gw.child.kill('SIGTERM');
    // The seller answers within the grace (slow_report), well after the signal.
    const released = new Promise<void>((resolve) => setTimeout(resolve, 300)).then(() => release());
    const settled = await withTimeout(call, CALL_TIMEOUT_MS + 5_000, 'callTool');
    await released;
    const exitCode = await withTimeout(gw.exited, 30_000, 'exit');
    return { settled, exitCode, logs: gw.logs };
  } finally {
    await client.close().catch(() => {});
    gw.kill();
  }
}

function resultOf(run: Run): unknown {
  if ('error' in run.settled) assert.fail(`callTool did not get an answer: ${run.settled.error.message}`);
  return run.settled.result;
}

const callLine = (run: Run): LogEntry => {
  const line = run.logs.find((l) => l.msg === 'exchange' && l.method === 'tools/call');
  assert.ok(line, 'an exchange line for the call');
  return line;
};

const shuttingDown = (run: Run): unknown[] => {
  const line = run.logs.find((l) => l.msg === 'shutting down');
  return [line?.sse_streams_ended, line?.sse_streams_finishing];
};

/** Asserts the seller's result reached the host and the gateway exited 0 with nothing cut. */
function assertAnsweredBySeller(run: Run, resumeSecret: string): void {
  assert.deepEqual(resultOf(run), RESULT);
  assert.equal(run.exitCode, 0);
  const line = callLine(run);
  assert.deepEqual([line.outcome, line.reason, 'resume_secret' in line], ['ok', null, false]);
  assert.deepEqual(shuttingDown(run), [0, 1]);
  assert.equal(run.logs.find((l) => l.msg === 'shutting down')?.resume_secret, resumeSecret);
  assert.ok(run.logs.some((l) => l.msg === 'stopped'));
  assert.deepEqual(
    run.logs.filter((l) => (l.level ?? 0) >= 50).map((l) => l.msg),
    [],
  );
  assert.equal(run.logs.some((l) => l.msg === NEARLY_OVER), false);
}

describe('shutdown-answers-unresumable-sse-call-at-once', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('no resume secret: the SDK call in flight over SSE gets the tool result within the grace, exit 0', async () => {
    assertAnsweredBySeller(await callAcrossShutdown('none', 'slow_report', { secret: false }), 'per_process');
  });

  test('a configured secret, no event id sent yet: the same', async () => {
    assertAnsweredBySeller(await callAcrossShutdown('configured', 'slow_report', { secret: true }), 'configured');
  });

  test('a seller that never answers: gateway_shutdown before the forced exit (shutdown_grace_ms 1500), exit 0', async () => {
    const run = await callAcrossShutdown('stuck', 'stuck_report', { secret: false, graceMs: 1500 });
    const err = buildAdcpError({ reason: 'gateway_shutdown', method: 'tools/call', toolName: 'stuck_report' });
    assert.equal(err.code, 'SERVICE_UNAVAILABLE');
    assert.deepEqual(err.details, { reason: 'gateway_shutdown' });
    assert.deepEqual(resultOf(run), toolErrorResult(err));
    assert.equal(run.exitCode, 0);
    assert.equal(run.logs.some((l) => l.msg === 'shutdown_grace_ms is over with requests still open: exiting anyway'), false);
    assert.deepEqual(shuttingDown(run), [0, 1]);
    const nearlyOver = run.logs.findIndex((l) => l.msg === NEARLY_OVER);
    assert.notEqual(nearlyOver, -1, 'the nearly-over line');
    assert.deepEqual([run.logs[nearlyOver]!.sse_streams_ended, run.logs[nearlyOver]!.margin_ms, run.logs[nearlyOver]!.grace_ms], [1, 750, 1500]);
    const line = callLine(run);
    assert.ok(run.logs.indexOf(line) > nearlyOver, 'answered at the grace margin, not at the signal');
    assert.deepEqual([line.outcome, line.reason, line.resume_secret], ['local_error', 'gateway_shutdown', 'per_process']);
  });

  test('a second signal: the stream left to finish gets gateway_shutdown before the exit 1', async () => {
    const run = await callAcrossShutdown('twice', 'stuck_report', { secret: false, secondSignal: true });
    const err = buildAdcpError({ reason: 'gateway_shutdown', method: 'tools/call', toolName: 'stuck_report' });
    assert.deepEqual(resultOf(run), toolErrorResult(err));
    assert.equal(run.exitCode, 1);
    const exit = run.logs.find((l) => l.msg === 'second signal while shutting down: exiting now');
    // Its ending went out: it keeps its outcome and is not cut (a hostile operator's trial 51,
    // finding 4: test/regressions/second-signal-logs-ended-streams-as-cut.test.ts).
    assert.equal(exit?.exchanges_cut, 0);
    const line = callLine(run);
    assert.deepEqual([line.outcome, line.reason, line.resume_secret], ['local_error', 'gateway_shutdown', 'per_process']);
  });
});
