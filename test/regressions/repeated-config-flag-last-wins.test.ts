/**
 * Regression (a hostile new user's trial 12, L8b, Low): `--config a.yaml --config b.yaml`
 * silently used b.yaml (commander keeps the last value of a repeated option): a wrapper
 * script adding its own `--config` to the user's arguments checked, served or probed another
 * file than the one the user named, with no word. A second `--config` (either spelling, before
 * or after `probe`) or a second `probe --timeout-ms` is now a usage error naming the option,
 * exit 2 (src/cli.ts `once`), before any file is read. A flag without a value may still repeat.
 *
 * Input: two valid config files with different agents; the CLI run with `--config` twice in
 * several spellings, `--timeout-ms` twice, and `--check-config` twice.
 * Expected: exit 2, stdout empty, stderr exactly the one line naming the option (no value
 * echoed); `--check-config --check-config` exit 0 as once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';

const REPEATED_CONFIG = "error: option '-c, --config <file>' was given more than once: give it once\n";
const REPEATED_TIMEOUT = "error: option '--timeout-ms <ms>' was given more than once: give it once\n";

let dir: string;
let a: string;
let b: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-repeated-config-'));
  a = join(dir, 'a.yaml');
  b = join(dir, 'b.yaml');
  // Port 9 (discard): nothing is contacted; `probe` would report the agent unreachable.
  await writeFile(a, 'agents:\n  a:\n    url: http://127.0.0.1:9/a\n');
  await writeFile(b, 'agents:\n  b:\n    url: http://127.0.0.1:9/b\n');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a repeated option that takes a value is a usage error', { timeout: PROCESS_TEST_TIMEOUT_MS, concurrency: true }, () => {
  const refused = (args: () => string[], stderr: string) => async () => {
    const run = await runCli(args());
    assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 2, stdout: '', stderr });
  };

  it('--config a --config b --check-config (was: b.yaml: valid, exit 0)', refused(() => ['--config', a, '--config', b, '--check-config'], REPEATED_CONFIG));
  it('-c a --config=b --check-config', refused(() => ['-c', a, `--config=${b}`, '--check-config'], REPEATED_CONFIG));
  it('--config a probe b --config b (was: probed b)', refused(() => ['--config', a, 'probe', 'b', '--config', b], REPEATED_CONFIG));
  it('probe a --config a --timeout-ms 5 --timeout-ms 6000 (was: 6000 used)', refused(() => ['probe', 'a', '--config', a, '--timeout-ms', '5', '--timeout-ms', '6000'], REPEATED_TIMEOUT));

  it('--check-config twice is --check-config once', async () => {
    const run = await runCli(['--config', a, '--check-config', '--check-config']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.split('\n')[0], `${a}: valid`);
    assert.equal(run.stderr, '');
  });
});
