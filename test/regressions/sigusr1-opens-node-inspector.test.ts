/**
 * Regression (a hostile operator's trial 45, finding 1): `kill -USR1 <gateway pid>` (what
 * logrotate-style tools send to make a daemon reopen its logs) printed `Debugger listening on
 * ws://127.0.0.1:9229/...` on stderr: Node's default action for SIGUSR1 opens its inspector, an
 * unauthenticated port on loopback that runs any code inside the gateway, which holds the
 * sellers' credentials (in a Kubernetes pod the buyer's container shares that loopback).
 *
 * Now the bin listens for SIGUSR1 from its first statement (src/stop-signals.ts): a listener
 * keeps Node from opening the inspector (checked on Node 20, 22 and 24), and the gateway
 * writes one warning line naming the signal, and goes on serving.
 *
 * Input: the real CLI with `--inspect-port=<a free loopback port>` in NODE_OPTIONS (so that an
 * inspector, if one opened, would listen there, not on 9229 that another process may hold).
 * Expected: after SIGUSR1, the exact warning line; nothing listens on that port and stderr has
 * no `Debugger listening`; a tools/call is still answered.
 *
 * Also as the Dockerfile's ENTRYPOINT starts it, `node --disable-sigusr1` (Node >= 22.14; skipped
 * where Node refuses the option, Node 20): Node drops SIGUSR1 itself, from its own start-up on
 * (the bin's listener never runs, so no line); no inspector, still serving. And with the flag in
 * NODE_OPTIONS, the way to set it for the bin and `npm start` (README, "Signals"): the same (the
 * README said Node refuses it there; Node 22.23.5 and 24.22.3 take it, CI runs this file on both).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort } from '../helpers/ports.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

/** The warning line's `msg` (src/cli.ts). */
const SIGNAL_IGNORED_MSG = 'signal ignored: the gateway acts on SIGHUP (reload), SIGTERM, SIGINT and SIGQUIT (stop) only';

let dir: string;
let seller: RawSeller;
let file: string;

before(async () => {
  seller = await startRawSeller((req, res) => {
    const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, RESULT));
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-sigusr1-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nresume:\n  secret: sigusr1-test-resume-secret-0123456789\nagents:\n  s:\n    url: ${seller.url}\n`);
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

const RESULT = { content: [{ type: 'text', text: 'served' }] };
const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };

/** Whether a TCP connection to 127.0.0.1:`port` is accepted (then closed at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The gateway on the config, an inspector (were one to open) on a free loopback port: `inspectPort`;
 * `nodeOptions` go into NODE_OPTIONS before that port's.
 */
async function startWatched(nodeArgs: readonly string[], nodeOptions: readonly string[] = []): Promise<{ gw: GatewayProcess; inspectPort: number }> {
  const inspectPort = await closedPort();
  const NODE_OPTIONS = [...nodeOptions, `--inspect-port=127.0.0.1:${inspectPort}`].join(' ');
  const gw = await startGatewayProcess(file, { env: { NODE_OPTIONS }, nodeArgs });
  return { gw, inspectPort };
}

/** A tools/call's round trip (Node opens an inspector within milliseconds of the signal), then: nothing on the port, no `Debugger listening`. */
async function assertNoInspector(gw: GatewayProcess, inspectPort: number): Promise<void> {
  await rawPost(`${gw.address}/agents/s/mcp`, toolCall(1, 'x'), PROTOCOL);
  assert.equal(await accepts(inspectPort), false, `something listens on ${inspectPort}; stderr: ${gw.stderr()}`);
  assert.doesNotMatch(gw.stderr(), /Debugger listening/);
}

async function assertServing(gw: GatewayProcess): Promise<void> {
  const r = await rawPost(`${gw.address}/agents/s/mcp`, toolCall(2, 'x'), PROTOCOL);
  assert.deepEqual({ status: r.status, body: r.text() }, { status: 200, body: toolResponse(2, RESULT) });
  assert.equal(gw.child.exitCode, null);
}

describe('SIGUSR1 to the serving gateway', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let gw: GatewayProcess;
  let inspectPort: number;
  before(async () => ({ gw, inspectPort } = await startWatched([])));
  after(() => gw.kill());

  it('writes one warning line naming the signal (was: none)', async () => {
    gw.child.kill('SIGUSR1');
    const line = await withTimeout(gw.waitForLog(SIGNAL_IGNORED_MSG), 10_000, 'the warning line');
    assert.deepEqual({ level: line.level, signal: line.signal, msg: line.msg }, { level: 40, signal: 'SIGUSR1', msg: SIGNAL_IGNORED_MSG });
    assert.equal(gw.logs.filter((l) => l.msg === SIGNAL_IGNORED_MSG).length, 1);
  });

  it("opens no inspector: nothing on the inspect port, no 'Debugger listening' (was: both)", () => assertNoInspector(gw, inspectPort));

  it('goes on serving: a tools/call answered 200', () => assertServing(gw));
});

/** Whether this Node takes `--disable-sigusr1` (Node >= 22.14, 23.7). */
const disableSigusr1 = spawnSync(process.execPath, ['--disable-sigusr1', '-e', '0']).status === 0;

/** SIGUSR1 then SIGUSR2: Node drops the first (no line), the second is logged alone; no inspector; still serving. */
async function assertDropped(gw: GatewayProcess, inspectPort: number): Promise<void> {
  gw.child.kill('SIGUSR1');
  gw.child.kill('SIGUSR2');
  await withTimeout(gw.waitForLog(SIGNAL_IGNORED_MSG), 10_000, 'the SIGUSR2 warning line');
  await assertNoInspector(gw, inspectPort);
  assert.deepEqual(gw.logs.filter((l) => l.msg === SIGNAL_IGNORED_MSG).map((l) => l.signal), ['SIGUSR2']);
  await assertServing(gw);
}

const noFlag = disableSigusr1 ? false : `Node ${process.version} has no --disable-sigusr1`;

describe('SIGUSR1 to the gateway started as the Docker image starts it (node --disable-sigusr1)', { timeout: PROCESS_TEST_TIMEOUT_MS, skip: noFlag }, () => {
  let gw: GatewayProcess;
  let inspectPort: number;
  before(async () => ({ gw, inspectPort } = await startWatched(['--disable-sigusr1'])));
  after(() => gw.kill());

  it('Node drops it: no line (a SIGUSR2 sent after it is logged alone), no inspector, still serving', () => assertDropped(gw, inspectPort));
});

describe('SIGUSR1 to the gateway with NODE_OPTIONS=--disable-sigusr1 (the way for the bin and npm start)', { timeout: PROCESS_TEST_TIMEOUT_MS, skip: noFlag }, () => {
  let gw: GatewayProcess;
  let inspectPort: number;
  before(async () => ({ gw, inspectPort } = await startWatched([], ['--disable-sigusr1'])));
  after(() => gw.kill());

  it('Node takes the flag there and drops it: no line, no inspector, still serving', () => assertDropped(gw, inspectPort));
});
