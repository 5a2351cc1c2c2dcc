/**
 * Regression (a new user's trial, 2026-12-03, F10): a start-up failure writes two lines, the
 * `could not start` log line (JSON on stdout, level 60, with the error and its stack) and a
 * human line on stderr, `adcp-buyer-gateway: could not start: <message>`. On EADDRINUSE the
 * stderr line came first; with a listen host that does not resolve, the log line did: the
 * stderr line was written at once while the log line's asynchronous write (sonic-boom,
 * observability/log-destination.ts) raced it. Now the stderr line waits until the log line is
 * out (src/cli.ts `serve`, observability/exit-after-log.ts `logFlushed`): one order, whatever
 * failed.
 *
 * Input: the real CLI (`node dist/main.js --config <file>`), with `listen` on
 * a port of 127.0.0.1 another socket holds, and on `no-such-host.invalid` (RFC 6761: the
 * `.invalid` name never resolves; the lookup fails locally, nothing leaves the machine). Each
 * runs twice: stdout and stderr on their own pipes (which line goes where), and both on one
 * file (the order they were written in, as a terminal or `2>&1` shows them).
 * Expected, in both cases: exit code 1; stdout's first line the `starting` log line and its
 * last the `could not start` line; stderr exactly the human line; on the shared file the
 * human line last, after the `could not start` line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { withTakenPort } from '../helpers/ports.js';
import { cliArgv, PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, REPO, runCli } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'startup-failure-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI with stdout and stderr both on one file; resolves with its exit code and the file's lines. */
async function runShared(config: string): Promise<{ code: number | null; lines: string[] }> {
  const out = join(dir, 'shared.txt');
  const fd = openSync(out, 'w');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, cliArgv(['--config', config]), {
        cwd: REPO,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        stdio: ['ignore', fd, fd],
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the CLI ran over ${PROCESS_TIMEOUT_MS} ms`));
      }, PROCESS_TIMEOUT_MS);
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    return { code, lines: readFileSync(out, 'utf8').split('\n').filter((l) => l !== '') };
  } finally {
    closeSync(fd);
  }
}

/** The JSON log line's `msg`, or the line itself when it is not JSON (the human line). */
const shape = (line: string): string => (line.startsWith('{') ? `log: ${(JSON.parse(line) as { msg: string }).msg}` : line);

async function expectOneOrder(listen: string, message: string): Promise<void> {
  const config = join(dir, 'gateway.yaml');
  await writeFile(config, `listen: ${listen}\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n`);
  const human = `adcp-buyer-gateway: could not start: ${message}`;

  const apart = await runCli(['--config', config]);
  assert.equal(apart.code, 1);
  assert.equal(apart.stderr, `${human}\n`);
  const logs = apart.stdout.split('\n').filter((l) => l !== '');
  assert.ok(logs.every((l) => l.startsWith('{')), `stdout holds log lines only: ${apart.stdout}`);
  const first = JSON.parse(logs[0]!) as { level: number; msg: string };
  const last = JSON.parse(logs.at(-1)!) as { level: number; msg: string; err: { message: string; stack: string } };
  assert.deepEqual({ level: first.level, msg: first.msg }, { level: 30, msg: 'starting' });
  assert.deepEqual({ level: last.level, msg: last.msg, err: last.err.message }, { level: 60, msg: 'could not start', err: message });
  assert.match(last.err.stack, /^Error: /);

  const shared = await runShared(config);
  assert.equal(shared.code, 1);
  const order = shared.lines.map(shape);
  assert.equal(order[0], 'log: starting');
  assert.deepEqual(order.slice(-2), ['log: could not start', human], `one order: ${order.join(' | ')}`);
}

describe('a failed start writes its log line, then its stderr line, whatever failed', () => {
  test('the port is taken (EADDRINUSE)', OPTIONS, async () => {
    await withTakenPort((port) => expectOneOrder(`{ host: 127.0.0.1, port: ${port} }`, `listen EADDRINUSE: address already in use 127.0.0.1:${port}`));
  });

  test('the listen host does not resolve (ENOTFOUND)', OPTIONS, async () => {
    await expectOneOrder('{ host: no-such-host.invalid, port: 0 }', 'getaddrinfo ENOTFOUND no-such-host.invalid');
  });
});
