/**
 * Regression (a hostile operator's trial 45, finding 1): `kill -USR2 <gateway pid>` with a call
 * in flight killed the gateway by the signal's default action: exit status 140, no
 * `shutdown_cut` exchange line, no exit line, the host's call got no answer. Node leaves
 * SIGUSR2 to the process, and logrotate-style tools send USR1/USR2; so it is with the other
 * signals whose default action ends a process and that no operator means as a stop.
 *
 * Now (src/stop-signals.ts IGNORED_SIGNALS) SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGIO,
 * SIGPWR and SIGSTKFLT (each where the platform has it) are listened for from the bin's first
 * statement: each writes one warning line naming it, and the gateway goes on serving. SIGQUIT
 * (Ctrl-\, nginx's graceful stop) is a stop signal, as SIGTERM and SIGINT: a graceful shutdown.
 *
 * Input: the real CLI; a tools/call the seller holds. Expected: after SIGUSR2 the exact
 * warning line, the held call answered 200 once released, its exchange line `ok`; one line
 * per other signal, still serving; SIGQUIT: `shutting down` (signal SIGQUIT), `stopped`, exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

/** The warning line's `msg` (src/cli.ts). */
const SIGNAL_IGNORED_MSG = 'signal ignored: the gateway acts on SIGHUP (reload), SIGTERM, SIGINT and SIGQUIT (stop) only';
const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };
const RESULT = { content: [{ type: 'text', text: 'served' }] };

let dir: string;
let seller: RawSeller;
let gw: GatewayProcess;
let held: { res: ServerResponse; id: number } | undefined;
let heldArrived: () => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const { id, params } = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
    if (params.name === 'held') {
      held = { res, id };
      return heldArrived();
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, RESULT));
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-sigusr2-'));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nresume:\n  secret: sigusr2-test-resume-secret-0123456789\nagents:\n  s:\n    url: ${seller.url}\n`);
  gw = await startGatewayProcess(file);
});

after(async () => {
  held?.res.destroy();
  gw.kill();
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** The warning lines so far, as `signal` values. */
const warned = (): unknown[] => gw.logs.filter((l) => l.msg === SIGNAL_IGNORED_MSG).map((l) => l.signal);

/** Waits (at most 10 s, in 20 ms steps) until `n` warning lines are out. */
async function warnings(n: number): Promise<unknown[]> {
  for (let i = 0; i < 500 && warned().length < n && gw.child.exitCode === null && gw.child.signalCode === null; i++) await sleep(20);
  return warned();
}

const call = (id: number, tool: string) => rawPost(`${gw.address}/agents/s/mcp`, toolCall(id, tool), PROTOCOL);

describe('signals with no action of their own, to the serving gateway', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('SIGUSR2 with a call in flight: one warning line, the call answered 200 and logged ok (was: exit status 140, no line)', async () => {
    const arrived = new Promise<void>((resolve) => (heldArrived = resolve));
    const answer = call(1, 'held');
    await withTimeout(arrived, 10_000, 'the held call at the seller');
    gw.child.kill('SIGUSR2');
    assert.deepEqual(await warnings(1), ['SIGUSR2'], `signal: ${gw.child.signalCode}`);
    const line = gw.logs.find((l) => l.msg === SIGNAL_IGNORED_MSG)!;
    assert.deepEqual({ level: line.level, signal: line.signal, msg: line.msg }, { level: 40, signal: 'SIGUSR2', msg: SIGNAL_IGNORED_MSG });
    held!.res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(held!.id, RESULT));
    const r = await withTimeout(answer, 10_000, 'the held call');
    assert.deepEqual({ status: r.status, body: r.text() }, { status: 200, body: toolResponse(1, RESULT) });
    const exchange = await gw.waitForLog('exchange');
    assert.deepEqual({ status: exchange.status, outcome: exchange.outcome, tool: exchange.tool }, { status: 200, outcome: 'ok', tool: 'held' });
  });

  it('SIGALRM, SIGVTALRM, SIGIO, SIGPWR, SIGSTKFLT (where the platform has them): one warning line each, still serving', async () => {
    const signals = (['SIGALRM', 'SIGVTALRM', 'SIGIO', 'SIGPWR', 'SIGSTKFLT'] as const).filter((s) => s in constants.signals);
    for (const [i, signal] of signals.entries()) {
      gw.child.kill(signal);
      assert.deepEqual(await warnings(2 + i), ['SIGUSR2', ...signals.slice(0, i + 1)], `signal: ${gw.child.signalCode}`);
    }
    const r = await call(2, 'x');
    assert.deepEqual({ status: r.status, body: r.text() }, { status: 200, body: toolResponse(2, RESULT) });
  });

  it('SIGQUIT: a graceful shutdown, exit 0 (was: exit status 131, no line)', async () => {
    gw.child.kill('SIGQUIT');
    const code = await withTimeout(gw.exited, 30_000, 'the exit');
    const msgs = gw.logs.map((l) => l.msg);
    assert.deepEqual({ code, signal: gw.child.signalCode, last: msgs.slice(-2) }, { code: 0, signal: null, last: ['shutting down', 'stopped'] });
    assert.equal(gw.logs.at(-2)!.signal, 'SIGQUIT');
  });
});
