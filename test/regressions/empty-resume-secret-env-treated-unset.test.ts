/**
 * Regression (a hostile new user's trial 12, L8c, Low): `ADCP_GATEWAY_RESUME_SECRET=` (set but
 * empty, as when a deployment writes `ADCP_GATEWAY_RESUME_SECRET=$SECRET` and `SECRET` is
 * unset) counted as unset: `--check-config` said `valid` and the gateway served with a random
 * per-process secret, its resume tokens dying with the process and refused by every other
 * replica, with only a warning. One under 32 characters was already an error. It is now a
 * config problem at `resume.secret` naming the variable, never its value (src/config/load.ts),
 * when the file has no `resume.secret` of its own (which wins, as over any value).
 *
 * Input: a valid config without `resume.secret`; `--check-config`, `probe` and serving (port 0)
 * with `ADCP_GATEWAY_RESUME_SECRET` set to the empty string; the same file with a
 * `resume.secret`.
 * Expected: exit 2, stdout empty, stderr exactly the problem report (no `gateway started`);
 * with the file's secret, `valid` and `resume secret  configured`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { captureOutput, PROCESS_TEST_TIMEOUT_MS, PROCESS_TIMEOUT_MS, runCli, spawnCli } from '../helpers/process.js';

const EMPTY = { ADCP_GATEWAY_RESUME_SECRET: '' };
const PROBLEM =
  '  resume.secret: the environment variable ADCP_GATEWAY_RESUME_SECRET is set but empty: set it to at least 32 characters, or unset it for a random per-process secret';

let dir: string;
let file: string;
let withSecret: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-empty-resume-secret-'));
  file = join(dir, 'gateway.yaml');
  withSecret = join(dir, 'with-secret.yaml');
  const agents = 'agents:\n  a:\n    url: http://127.0.0.1:9/mcp\n';
  await writeFile(file, `listen: { port: 0 }\n${agents}`);
  await writeFile(withSecret, `listen: { port: 0 }\nresume: { secret: "${'s'.repeat(40)}" }\n${agents}`);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The report of the refused file on stderr. */
const report = (path: string): string => `${path}: 1 problem\n${PROBLEM}\n`;

describe('ADCP_GATEWAY_RESUME_SECRET set but empty', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('--check-config: a problem naming the variable, exit 2 (was: valid, random per process, exit 0)', async () => {
    const run = await checkConfigRun(file, EMPTY);
    assert.deepEqual(run, { code: 2, stdout: '', stderr: report(file) });
  });

  it('probe: the same report, exit 2', async () => {
    const run = await runCli(['probe', 'a', '--config', file], { env: EMPTY });
    assert.deepEqual(run, { code: 2, stdout: '', stderr: report(file) });
  });

  it('serving: refused before it listens, exit 2 (was: served)', async () => {
    const child = spawnCli(['--config', file], { env: EMPTY });
    const out = captureOutput(child);
    try {
      // Ends at the process's exit, at a `gateway started` line (the failure), or after PROCESS_TIMEOUT_MS.
      const code = await new Promise<number | null | 'started' | 'timeout'>((resolve) => {
        const timer = setTimeout(() => resolve('timeout'), PROCESS_TIMEOUT_MS);
        child.stdout.on('data', () => {
          if (out.stdout.includes('"gateway started"')) resolve('started');
        });
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      assert.equal(code, 2, out.stdout);
      assert.equal(out.stderr, report(file));
      assert.equal(out.stdout, '');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it("the file's resume.secret wins over it: valid, configured", async () => {
    const run = await checkConfigRun(withSecret, EMPTY);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}resume secret {10}configured$/m);
  });
});
