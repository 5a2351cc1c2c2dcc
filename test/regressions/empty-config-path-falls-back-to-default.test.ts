/**
 * Regression: an empty `--config` (or `ADCP_GATEWAY_CONFIG`) fell back to
 * `config/gateway.yaml` in the current directory.
 *
 * Reported failure (a new user's trial, 2026-12-03, F4): `--config ""`, `--config=` and
 * `ADCP_GATEWAY_CONFIG=""` were skipped as if absent, so the gateway checked, served or
 * probed whatever `config/gateway.yaml` the working directory held (in a clone, the demo
 * config on 8787). docs/configuration.md, "Which file": "The first of these that is given is
 * used": an empty value is given, and a script running `--config "$CFG"` with `CFG` unset
 * must not serve another file. Now an empty value is a usage error, exit 2, nothing on
 * stdout, one line on stderr naming the flag (commander's wording for an invalid option
 * argument) or the variable. A `--config` that names a file still wins over an empty
 * `ADCP_GATEWAY_CONFIG` (it is given first).
 *
 * Input: a working directory whose `config/gateway.yaml` is valid (agent `cwd-agent`, seller
 * on a closed port); the real CLI with `--check-config`, and `probe cwd-agent`, given the
 * empty values above.
 * Expected: exit 2 and exactly the stderr lines below; the cwd's file is never read.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const EMPTY_FLAG = "error: option '-c, --config <file>' argument '' is invalid. expected a file path, got an empty value (an unset variable?)\n";
const EMPTY_ENV = 'error: the environment variable ADCP_GATEWAY_CONFIG is empty: expected a file path (an unset variable?); unset it to use config/gateway.yaml\n';

let cwd: string;

before(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'gw-empty-config-'));
  await mkdir(join(cwd, 'config'));
  await writeFile(join(cwd, 'config/gateway.yaml'), 'agents:\n  cwd-agent:\n    url: http://127.0.0.1:9/mcp\n');
  await writeFile(join(cwd, 'named.yaml'), 'agents:\n  named-agent:\n    url: http://127.0.0.1:9/mcp\n');
});

after(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('an empty config path is a usage error, not config/gateway.yaml', { concurrency: true }, () => {
  for (const [label, args, env, stderr] of [
    ['--config "" --check-config', ['--config', '', '--check-config'], {}, EMPTY_FLAG],
    ['--config= --check-config', ['--config=', '--check-config'], {}, EMPTY_FLAG],
    ['-c "" --check-config', ['-c', '', '--check-config'], {}, EMPTY_FLAG],
    ['probe cwd-agent --config ""', ['probe', 'cwd-agent', '--config', ''], {}, EMPTY_FLAG],
    ['ADCP_GATEWAY_CONFIG="" --check-config', ['--check-config'], { ADCP_GATEWAY_CONFIG: '' }, EMPTY_ENV],
    ['ADCP_GATEWAY_CONFIG="" probe cwd-agent', ['probe', 'cwd-agent'], { ADCP_GATEWAY_CONFIG: '' }, EMPTY_ENV],
  ] as const) {
    test(`${label}: exit 2, the empty value named on stderr (was: config/gateway.yaml used)`, OPTIONS, async () => {
      const run = await runCli(args, { cwd, env });
      assert.deepEqual(run, { code: 2, stdout: '', stderr });
    });
  }

  test('--config naming a file still wins over an empty ADCP_GATEWAY_CONFIG', OPTIONS, async () => {
    const run = await runCli(['--config', 'named.yaml', '--check-config'], { cwd, env: { ADCP_GATEWAY_CONFIG: '' } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^named\.yaml: valid\n/);
    assert.match(run.stdout, /^named-agent {2,}/m);
  });
});
