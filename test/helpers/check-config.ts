/**
 * `--check-config` run in the test's own process, for the tests of what the check says of a
 * config (its problems, its table): the CLI's own code from the command line on, src/cli.ts
 * `main` (what the bin, src/main.ts, runs after installing its signal listeners), with the
 * environment, output and exit code a spawned CLI has (./process.ts `runCli`). A spawned check
 * took ~0.6 s of CPU, nearly all of it loading the CLI's modules, which this process loads once
 * (~0.45 s; then a few ms a check): 137 of the 261 CLI runs of the suite were such checks.
 *
 * What only a real process shows keeps its spawn through ./process.ts: the exit status of a
 * refused or valid config and the stream each report goes to (test/integration/cli.test.ts),
 * `ADCP_GATEWAY_CONFIG` and the other environment variables read at start, relative paths and
 * the working directory, every flag and usage error, a closed stdout, signals.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { main } from '../../src/cli.js';
import { cliEnv, type CliRun } from './process.js';

/**
 * What `adcp-buyer-gateway --config <path> --check-config` (with `env` added to the clean
 * environment: ./process.ts `cliEnv`) exits with and writes, as `runCli` resolves it: `main`'s
 * exit code (the bin's exit status) and stdout and stderr as the text a pipe carries, each write
 * encoded to UTF-8 as Node's streams encode it (a lone surrogate becomes U+FFFD) and the bytes
 * decoded again. `path` must be absolute: the CLI runs in the repo, this process wherever the
 * test runner was started.
 */
export async function checkConfigRun(path: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  assert.ok(isAbsolute(path), `checkConfigRun needs an absolute path: ${path}`);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const code = await main(['node', 'adcp-buyer-gateway', '--config', path, '--check-config'], {
    env: cliEnv(env),
    stdout: (text) => out.push(Buffer.from(text, 'utf8')),
    stderr: (text) => err.push(Buffer.from(text, 'utf8')),
  });
  assert.notEqual(code, undefined, '--check-config returned no exit code (it serves?)');
  return { code: code ?? null, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

/**
 * Asserts `--check-config` (`checkConfigRun`, with `env`) refuses the config file `path` with
 * exactly `problems` (each a line after the `<path>: N problem(s)` head): exit 2, nothing on
 * stdout.
 */
export async function assertCheckConfigProblems(path: string, problems: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const run = await checkConfigRun(path, env);
  const head = `${path}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  assert.deepEqual(run, { code: 2, stdout: '', stderr: `${[head, ...problems].join('\n')}\n` });
}

/**
 * Writes `text` to a config file in a fresh temporary directory and asserts, as
 * `assertCheckConfigProblems` does, that `--check-config` (with `env`) refuses it with exactly
 * `problems`; the directory is removed after, also when the assertion fails.
 */
export async function assertCheckConfigTextProblems(text: string, problems: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-check-config-'));
  try {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, text);
    await assertCheckConfigProblems(file, problems, env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
