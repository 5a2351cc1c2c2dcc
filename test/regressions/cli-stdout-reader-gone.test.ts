/**
 * Regression from a new user's trial (2026-12-02): "the CLI crashes with an unhandled EPIPE
 * (exit 1) when its stdout reader closes early": `--help | grep -q Usage` 3 runs in 10,
 * `--check-config` of a 600-agent config piped to `head -3` 5 in 5. src/ops/closed-output.ts
 * now drops the rest of the text and keeps the command's own exit code.
 *
 * Deterministic reproduction: the read end of the child's stdout is closed right after the
 * spawn, long before the child (Node start-up, ~0.35 s; ~1 s through tsx) writes, so every
 * write meets EPIPE.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { withTimeout } from '../helpers/timeout.js';
import { cliArgv, PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, REPO, runCli } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

describe('the CLI whose stdout reader has gone (a closed pipe: EPIPE)', () => {
  let dir = '';
  let big = '';
  let bad = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'adcp-cli-epipe-'));
    big = join(dir, 'big.yaml');
    bad = join(dir, 'bad.yaml');
    // 600 agents: a --check-config report far larger than a pipe's 64 KiB buffer.
    const agents = Array.from({ length: 600 }, (_, i) => `  agent-${i}:\n    url: http://127.0.0.1:${3000 + (i % 100)}/mcp\n`).join('');
    await writeFile(big, `agents:\n${agents}`);
    await writeFile(bad, 'agents:\n  acme:\n    url: 42\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('--help piped to a reader that left (`| grep -q Usage`) exits 0 with nothing on stderr (it crashed: exit 1, EPIPE stack)', OPTIONS, async () => {
    const r = await runCli(['--help'], { stdout: 'closed' });
    assert.deepEqual({ code: r.code, stderr: r.stderr }, { code: 0, stderr: '' });
  });

  it('--check-config of a 600-agent config piped to a reader that left (`| head -3`) exits 0, the config being valid', OPTIONS, async () => {
    const r = await runCli(['--check-config', '--config', big], { stdout: 'closed' });
    assert.deepEqual({ code: r.code, stderr: r.stderr }, { code: 0, stderr: '' });
  });

  it('--check-config of an invalid config still exits 2 with its whole report on stderr', OPTIONS, async () => {
    const r = await runCli(['--check-config', '--config', bad], { stdout: 'closed' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^.*bad\.yaml: 1 problem\n {2}agents\.acme\.url/);
  });

  it('the same run with a live reader gets the whole report (the text the closed pipe dropped)', OPTIONS, async () => {
    const r = await runCli(['--check-config', '--config', big]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.length > 64 * 1024, `the report is ${r.stdout.length} bytes`);
    assert.match(r.stdout, /agent-599/);
  });

  // Another write error than EPIPE loses the text with no reader having asked for less: exit 1.
  it('stdout on /dev/full (ENOSPC): exit 1 and one line on stderr saying why', { ...OPTIONS, skip: existsSync('/dev/full') ? false : 'no /dev/full' }, async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, cliArgv(['--help']), {
        cwd: REPO,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        stdio: ['ignore', full, 'pipe'],
      });
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      const code = await withTimeout(
        new Promise<number | null>((resolve) => child.on('close', resolve)),
        PROCESS_TIMEOUT_MS,
        'the CLI with stdout on /dev/full',
      ).finally(() => child.kill('SIGKILL'));
      assert.deepEqual({ code, stderr }, { code: 1, stderr: 'adcp-buyer-gateway: could not write to stdout: ENOSPC\n' });
    } finally {
      closeSync(full);
    }
  });
});
