/**
 * Regression: `adcp-buyer-gateway --version` (and `--help`, a usage error, `--check-config`)
 * loaded the serving stack: ~198 CommonJS modules, prom-client and @opentelemetry/api, pino,
 * zod and yaml, ~0.65 s of CPU where bare Node takes ~0.12 s (a CI-time finding: ~93 CLI runs
 * in the tests, and every user's `--help`).
 *
 * Failure: src/cli.ts imported, statically, src/shutdown-streams.ts (serving only), which
 * imports the logger (pino) and through it the metrics (prom-client, which requires
 * @opentelemetry/api); and src/config/table.ts (`--check-config` only), whose
 * src/config/display-url.ts imported the logger for one string (`REDACTED`); and the config
 * loader (zod, yaml), needed only once a command reads the config.
 *
 * Now: the config loader and the check's tables are imported by the command that reads the
 * config, the shutdown's streams with the gateway (`serve`), and `REDACTED` lives in
 * src/observability/redacted.ts. `--version`, `--help` and a usage error load none of it;
 * `--check-config` loads the config's validation (zod, yaml) but not the logger, metrics or server.
 *
 * Input: the real CLI (`node dist/main.js`, test/helpers/process.ts) run with
 * test/support/loaded-modules.mjs, which records each module the process loads. Expected: the
 * command's usual output and exit code, and no module of the list below among those loaded.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runCli, type CliRun } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

/** The recorder (`node --import`): test/support/loaded-modules.mjs. */
const RECORDER = join(REPO, 'test/support/loaded-modules.mjs');

/** The serving stack's packages: none is loaded by a command that does not serve or probe. */
const SERVING_PACKAGES = ['prom-client', '@opentelemetry/api', 'pino', 'fastify', 'undici', '@modelcontextprotocol/sdk'];
/** The config's validation: loaded only by a command that reads the config. */
const CONFIG_PACKAGES = ['zod', 'yaml'];
/** The gateway's own serving modules (dist/*.js, or src/*.ts through tsx). */
const SERVING_MODULES = ['observability/metrics', 'observability/logger', 'shutdown-streams', 'app', 'exchange'];

let dir: string;
let runs = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-loads-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with `args`, and the modules it loaded (one URL or path a line). */
async function runRecorded(args: readonly string[]): Promise<{ run: CliRun; loaded: string[] }> {
  runs += 1;
  const file = join(dir, `loaded-${runs}.txt`);
  const run = await runCli(args, { nodeArgs: ['--import', RECORDER], env: { LOADED_MODULES_FILE: file } });
  const loaded = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
  return { run, loaded };
}

/** Which of `packages` (names under node_modules/) the process loaded. */
function packagesLoaded(loaded: readonly string[], packages: readonly string[]): string[] {
  return packages.filter((name) => loaded.some((line) => line.includes(`/node_modules/${name}/`)));
}

/** Which of the gateway's own `modules` (paths under dist/ or src/, without the extension) the process loaded. */
function ownModulesLoaded(loaded: readonly string[], modules: readonly string[]): string[] {
  return modules.filter((name) => loaded.some((line) => new RegExp(`/(?:dist|src)/${name}\\.[jt]s$`).test(line)));
}

describe('a CLI command loads only what it runs', { concurrency: true }, () => {
  test('`--version`: the version, exit 0, no serving stack and no config validation loaded (was: prom-client, @opentelemetry/api, pino, zod, yaml)', OPTIONS, async () => {
    const { run, loaded } = await runRecorded(['--version']);
    assert.deepEqual(run, { code: 0, stdout: '0.1.0\n', stderr: '' });
    assert.deepEqual(packagesLoaded(loaded, [...SERVING_PACKAGES, ...CONFIG_PACKAGES]), []);
    assert.deepEqual(ownModulesLoaded(loaded, [...SERVING_MODULES, 'config/load', 'config/table']), []);
    // Control: the recorder sees what the CLI does load (commander: an ES module wrapper, then CommonJS).
    assert.deepEqual(packagesLoaded(loaded, ['commander']), ['commander']);
    assert.ok(loaded.some((line) => line.endsWith('/node_modules/commander/lib/command.js')), 'commander/lib/command.js (required from CommonJS) recorded');
  });

  test('`--help`: the help, exit 0, no serving stack and no config validation loaded', OPTIONS, async () => {
    const { run, loaded } = await runRecorded(['--help']);
    assert.deepEqual([run.code, run.stderr, run.stdout.split('\n')[0]], [0, '', 'Usage: adcp-buyer-gateway [options] [command]']);
    assert.deepEqual(packagesLoaded(loaded, [...SERVING_PACKAGES, ...CONFIG_PACKAGES]), []);
    assert.deepEqual(ownModulesLoaded(loaded, [...SERVING_MODULES, 'config/load', 'config/table']), []);
  });

  test('a usage error (`--bogus`): exit 2, no serving stack and no config validation loaded', OPTIONS, async () => {
    const { run, loaded } = await runRecorded(['--bogus']);
    assert.deepEqual([run.code, run.stdout, run.stderr.split('\n')[0]], [2, '', "error: unknown option '--bogus'"]);
    assert.deepEqual(packagesLoaded(loaded, [...SERVING_PACKAGES, ...CONFIG_PACKAGES]), []);
    assert.deepEqual(ownModulesLoaded(loaded, [...SERVING_MODULES, 'config/load', 'config/table']), []);
  });

  test('`--check-config`: valid, exit 0, the config validation loaded but not the logger, metrics or server (was: all of them)', OPTIONS, async () => {
    const { run, loaded } = await runRecorded(['--check-config', '--config', 'config/gateway.yaml']);
    assert.deepEqual([run.code, run.stderr, run.stdout.split('\n')[0]], [0, '', 'config/gateway.yaml: valid']);
    assert.deepEqual(packagesLoaded(loaded, SERVING_PACKAGES), []);
    assert.deepEqual(ownModulesLoaded(loaded, SERVING_MODULES), []);
    // Control: what the check needs is loaded, and recorded.
    assert.deepEqual(packagesLoaded(loaded, CONFIG_PACKAGES), CONFIG_PACKAGES);
    assert.deepEqual(ownModulesLoaded(loaded, ['config/load', 'config/table']), ['config/load', 'config/table']);
  });
});
