/**
 * Regression (carried from an earlier review): a SIGTERM or SIGINT in roughly the first half
 * second of the gateway process, before its shutdown hook was installed (after it listened),
 * killed it the default way: exit status 143 (130), no log line, though docs/configuration.md
 * ("Errors and exit codes", `shutdown_grace_ms`) promises a graceful stop. Now (src/main.ts,
 * src/stop-signals.ts) the bin installs its own handlers at its first statement, before it
 * loads the rest of the gateway, and a stop signal during startup ends the process at once
 * with exit 0 and one log line, `stopped during startup` (its `signal`); one that arrives
 * while it binds its ports is taken by the graceful shutdown once they are bound.
 *
 * Input: the real CLI (node dist/main.js) on a config without a resume secret
 * (listen on 127.0.0.1 port 0); the signal sent once its first stdout line is read (the
 * `starting` line, written when the config is loaded, before the app's modules are; before
 * the fix the first line was the resume-secret warning, logged while the app was built).
 * Expected: exit code 0, no signal; the last line `stopped during startup` with the signal,
 * and no `gateway started` (if the machine was so slow that the gateway had started before
 * the signal came, its `shutting down` and `stopped` lines instead: the assertion follows
 * the log, never a clock).
 *
 * SIGHUP (the config reload) likewise: during startup it had the default action (exit status
 * 129, no line); now it is held and the reload runs once the gateway listens.
 *
 * Not covered, and cannot be: a signal that arrives before Node has run the gateway's first
 * statement (Node's own start-up) ends it the default way. The last case
 * shows that window: a SIGTERM right after spawn ends it either that way, before any output,
 * or as above.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UNCHANGED_MSG } from '../../src/reload.js';
import { PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, spawnCli, type ChildProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';

let dir: string;
let config: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-startup-signal-'));
  config = join(dir, 'gateway.yaml');
  await writeFile(config, 'listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: LogEntry[];
  stderr: string;
}

/** Spawns the CLI on the config; `signalWhen` says when `signal` is sent: right after spawn, or once the first stdout line is read. */
async function run(signal: NodeJS.Signals, signalWhen: 'spawned' | 'first-line'): Promise<Run> {
  const child: ChildProcess = spawnCli(['--config', config]);
  const lines: LogEntry[] = [];
  let stderr = '';
  let buffered = '';
  let sent = false;
  const send = (): void => {
    if (sent) return;
    sent = true;
    child.kill(signal);
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffered.slice(0, nl)) as LogEntry);
      buffered = buffered.slice(nl + 1);
      if (signalWhen === 'first-line') send();
    }
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig })));
  if (signalWhen === 'spawned') send();
  try {
    const { code, signal: by } = await withTimeout(exited, PROCESS_TIMEOUT_MS, `the gateway's exit; stderr: ${stderr}`);
    return { code, signal: by, lines, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** The stop the log says happened: during startup (one line), or the graceful shutdown of a started gateway. */
function assertStoppedCleanly(r: Run, signal: NodeJS.Signals): void {
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, `stdout: ${JSON.stringify(r.lines)}\nstderr: ${r.stderr}`);
  assert.equal(r.stderr, '');
  const msgs = r.lines.map((l) => l.msg);
  const last = r.lines.at(-1)!;
  if (!msgs.includes('gateway started')) {
    assert.deepEqual({ msg: last.msg, signal: last.signal, level: last.level }, { msg: 'stopped during startup', signal, level: 30 });
    assert.equal(msgs.filter((m) => m === 'stopped during startup').length, 1, msgs.join(', '));
  } else {
    assert.deepEqual(msgs.slice(-2), ['shutting down', 'stopped'], msgs.join(', '));
    assert.equal(r.lines.at(-2)!.signal, signal);
  }
}

describe('a stop signal during startup', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} once the first stdout line is out: exit 0, "stopped during startup"`, async () => {
      const r = await run(signal, 'first-line');
      assertStoppedCleanly(r, signal);
      assert.equal(r.lines[0]!.msg, 'starting');
    });
  }

  it('SIGHUP once the first stdout line is out: held, the config reloaded (unchanged) once the gateway listens (was: exit status 129, no line)', async () => {
    const child: ChildProcess = spawnCli(['--config', config]);
    const lines: LogEntry[] = [];
    let stderr = '';
    let buffered = '';
    let hungUp = false;
    let stopped = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, nl)) as LogEntry;
        lines.push(line);
        buffered = buffered.slice(nl + 1);
        if (!hungUp) {
          hungUp = true;
          child.kill('SIGHUP');
        } else if (line.msg === UNCHANGED_MSG && !stopped) {
          stopped = true;
          child.kill('SIGTERM');
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig })));
    try {
      const { code, signal } = await withTimeout(exited, PROCESS_TIMEOUT_MS, `the gateway's exit; stderr: ${stderr}`);
      const msgs = lines.map((l) => l.msg);
      assert.deepEqual({ code, signal, stderr }, { code: 0, signal: null, stderr: '' }, msgs.join(', '));
      assert.equal(msgs[0], 'starting');
      // The held SIGHUP runs once the reload is wired, after the gateway listens: one reload
      // (of the file the gateway started with: unchanged, nothing applied).
      const started = msgs.indexOf('gateway started');
      assert.ok(started > 0, msgs.join(', '));
      assert.deepEqual(msgs.slice(started + 1), ['reloading the config', UNCHANGED_MSG, 'shutting down', 'stopped']);
      assert.equal(lines.at(-1 - 1 - 1)!.trigger, 'sighup');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('SIGTERM right after spawn: Node\'s own start-up may still take it the default way (before any output), else as above', async () => {
    const r = await run('SIGTERM', 'spawned');
    if (r.signal === 'SIGTERM') assert.deepEqual({ code: r.code, lines: r.lines, stderr: r.stderr }, { code: null, lines: [], stderr: '' });
    else assertStoppedCleanly(r, 'SIGTERM');
  });
});
