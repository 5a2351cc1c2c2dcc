/**
 * `npm run conformance`: the MCP conformance suite's client scenarios, run twice with the same
 * MCP SDK client: once connecting directly to each scenario's test server, once through the
 * gateway (test/conformance/client.ts starts it with one agent pointing at that server).
 * Prints both grades side by side and exits non-zero when a scenario's pass count through the
 * gateway differs from its direct pass count (or a scenario could not be graded at all).
 *
 * - The suite is `@modelcontextprotocol/conformance`, pinned in package.json (devDependencies).
 * - Every client scenario outside authorization runs (`auth/*` needs OAuth discovery at the
 *   seller's origin, which a path-prefixed gateway does not serve: out of scope for now).
 * - The runner needs Node >= 22 (it imports `globSync` from node:fs). When this Node is older,
 *   the script installs Node 22 for this run only from the npm registry's platform binary
 *   package (`node-<platform>-<arch>`) into `.cache/node22` (gitignored). The client and the
 *   gateway keep running on this Node: the product supports Node >= 20.18.1.
 *
 * Options: `--scenario <name>` (repeatable) to run a subset, `--verbose` to show the runner's
 * output, `--print-node` to print the path of the runner's Node >= 22 (installing it as above
 * when needed; progress on stderr) and exit: .ci/run runs the SSE tests on it. Environment:
 * `CONFORMANCE_NODE=/path/to/node22` to use a Node 22 you already have.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The Node 22 the runner uses when this Node is older (exact: the same binary on every machine). */
export const RUNNER_NODE_VERSION = '22.23.5';
const RUNNER_NODE_MAJOR = 22;
/** Scenarios left out: they need OAuth discovery at the seller's origin. */
const EXCLUDED_PREFIXES = ['auth/'];
/** The runner's per-scenario limit for the client command (ms). */
const SCENARIO_TIMEOUT_MS = 30_000;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

interface Grade {
  passed: number;
  failed: number;
  warnings: number;
  /** SUCCESS + FAILURE, the runner's denominator. */
  total: number;
  /** The client command's exit code, when the runner recorded it. */
  graded: boolean;
  failures: string[];
}

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function major(version: string): number {
  return Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
}

function versionOf(nodeBin: string): string {
  const out = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : '';
}

/**
 * A Node >= 22 for the runner: CONFORMANCE_NODE, this Node, or the pinned binary package in
 * .cache/node22 (installed on first use; its progress goes to stderr, so `--print-node`
 * prints the path alone on stdout).
 */
function runnerNode(): string {
  const fromEnv = process.env.CONFORMANCE_NODE;
  if (fromEnv) {
    if (major(versionOf(fromEnv)) < RUNNER_NODE_MAJOR) throw new Error(`CONFORMANCE_NODE=${fromEnv} is not Node >= ${RUNNER_NODE_MAJOR}`);
    return fromEnv;
  }
  if (major(process.version) >= RUNNER_NODE_MAJOR) return process.execPath;
  if (process.platform !== 'linux' && process.platform !== 'darwin') {
    throw new Error(`no Node ${RUNNER_NODE_MAJOR} binary package for ${process.platform}: set CONFORMANCE_NODE to a Node >= ${RUNNER_NODE_MAJOR}`);
  }
  const pkg = `node-${process.platform}-${process.arch}`;
  const cache = join(root, '.cache', 'node22');
  const bin = join(cache, 'node_modules', pkg, 'bin', 'node');
  if (versionOf(bin) !== `v${RUNNER_NODE_VERSION}`) {
    process.stderr.write(`installing Node ${RUNNER_NODE_VERSION} for the conformance runner (${pkg}) into .cache/node22 ...\n`);
    mkdirSync(cache, { recursive: true });
    // Its own project root, so npm never touches the repository's package.json or lockfile.
    writeFileSync(join(cache, 'package.json'), `${JSON.stringify({ name: 'conformance-node22', private: true }, null, 2)}\n`);
    const npmCli = process.env.npm_execpath;
    const [cmd, args] = npmCli && /npm-cli\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', [] as string[]];
    const install = spawnSync(
      cmd,
      [...args, 'install', '--prefix', cache, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${RUNNER_NODE_VERSION}`],
      { stdio: ['ignore', process.stderr, process.stderr] },
    );
    if (install.status !== 0) throw new Error(`npm install ${pkg}@${RUNNER_NODE_VERSION} failed`);
    if (versionOf(bin) !== `v${RUNNER_NODE_VERSION}`) throw new Error(`${bin} is not Node ${RUNNER_NODE_VERSION} after install`);
  }
  return bin;
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The runner's client scenarios, minus the excluded ones. */
function clientScenarios(node: string, runner: string): string[] {
  const out = spawnSync(node, [runner, 'list', '--client'], { encoding: 'utf8', cwd: root });
  if (out.status !== 0) throw new Error(`conformance list failed: ${out.stderr}`);
  return out.stdout
    .split('\n')
    .map((line) => /^\s+-\s+(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && !EXCLUDED_PREFIXES.some((p) => name.startsWith(p)));
}

async function runScenario(node: string, runner: string, scenario: string, mode: 'direct' | 'gateway', verbose: boolean): Promise<Grade> {
  const outDir = mkdtempSync(join(tmpdir(), 'adcp-conformance-'));
  try {
    // The runner splits --command on spaces and appends the server URL.
    const command = [process.execPath, '--import', 'tsx', 'test/conformance/client.ts', '--mode', mode].join(' ');
    const args = [runner, 'client', '--command', command, '--scenario', scenario, '--timeout', String(SCENARIO_TIMEOUT_MS), '-o', outDir];
    const output: Buffer[] = [];
    await new Promise<void>((done) => {
      const child = spawn(node, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
      child.stdout.on('data', (c: Buffer) => output.push(c));
      child.stderr.on('data', (c: Buffer) => output.push(c));
      child.on('close', () => done());
      child.on('error', () => done());
    });
    const runDir = readdirSync(outDir).map((d) => join(outDir, d)).find((d) => existsSync(join(d, 'checks.json')));
    const checks = runDir ? (JSON.parse(readFileSync(join(runDir, 'checks.json'), 'utf8')) as { status: string; name: string; errorMessage?: string }[]) : [];
    const grade: Grade = {
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failed: checks.filter((c) => c.status === 'FAILURE').length,
      warnings: checks.filter((c) => c.status === 'WARNING').length,
      total: checks.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE').length,
      graded: runDir !== undefined,
      failures: checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => `${c.status} ${c.name}${c.errorMessage ? `: ${c.errorMessage}` : ''}`),
    };
    if (verbose || !grade.graded) log(Buffer.concat(output).toString('utf8').replace(ANSI_COLOR, ''));
    return grade;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** ANSI color sequences in the runner's output (it colors even when piped). */
const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const cell = (g: Grade): string => (g.graded ? `${g.passed}/${g.total}${g.warnings ? ` (${g.warnings} warn)` : ''}` : 'not graded');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scenario: { type: 'string', multiple: true }, verbose: { type: 'boolean', default: false }, 'print-node': { type: 'boolean', default: false } },
  });
  const node = runnerNode();
  if (values['print-node']) {
    process.stdout.write(`${node}\n`);
    return;
  }
  const runner = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
  const suiteVersion = packageVersion('@modelcontextprotocol/conformance');
  const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[
    '@modelcontextprotocol/conformance'
  ];
  if (pinned !== suiteVersion) throw new Error(`package.json pins @modelcontextprotocol/conformance ${pinned}, node_modules has ${suiteVersion}: run npm ci`);

  const all = clientScenarios(node, runner);
  const scenarios = values.scenario?.length ? values.scenario : all;
  log(`MCP conformance suite ${suiteVersion}: client scenarios, @modelcontextprotocol/sdk ${packageVersion('@modelcontextprotocol/sdk')} client`);
  log(`runner on Node ${versionOf(node)}; client and gateway on Node ${process.version}; excluded: ${EXCLUDED_PREFIXES.map((p) => `${p}*`).join(', ')}`);
  log();

  const rows: { scenario: string; direct: Grade; gateway: Grade }[] = [];
  for (const scenario of scenarios) {
    const direct = await runScenario(node, runner, scenario, 'direct', values.verbose);
    const gateway = await runScenario(node, runner, scenario, 'gateway', values.verbose);
    rows.push({ scenario, direct, gateway });
  }

  const width = Math.max(20, ...rows.map((r) => r.scenario.length));
  const line = (a: string, b: string, c: string, d: string): void => log(`${a.padEnd(width)}  ${b.padEnd(16)}  ${c.padEnd(16)}  ${d}`);
  line('scenario', 'direct', 'through gateway', '');
  line('-'.repeat(width), '-'.repeat(16), '-'.repeat(16), '-'.repeat(4));
  let mismatches = 0;
  for (const { scenario, direct, gateway } of rows) {
    const same = direct.graded && gateway.graded && direct.passed === gateway.passed && direct.total === gateway.total;
    if (!same) mismatches++;
    line(scenario, cell(direct), cell(gateway), same ? 'same' : 'DIFFERS');
  }
  const sum = (pick: (r: (typeof rows)[number]) => Grade): Grade =>
    rows.reduce<Grade>(
      (acc, r) => ({
        passed: acc.passed + pick(r).passed,
        failed: acc.failed + pick(r).failed,
        warnings: acc.warnings + pick(r).warnings,
        total: acc.total + pick(r).total,
        graded: acc.graded && pick(r).graded,
        failures: [],
      }),
      { passed: 0, failed: 0, warnings: 0, total: 0, graded: true, failures: [] },
    );
  line('-'.repeat(width), '-'.repeat(16), '-'.repeat(16), '-'.repeat(4));
  line(`checks (${rows.length} scenarios)`, cell(sum((r) => r.direct)), cell(sum((r) => r.gateway)), mismatches === 0 ? 'same' : `${mismatches} DIFFER`);

  for (const { scenario, direct, gateway } of rows) {
    for (const [label, grade] of [['direct', direct], ['through gateway', gateway]] as const) {
      for (const f of grade.failures) log(`  ${scenario} (${label}): ${f}`);
    }
  }
  log();
  if (mismatches > 0) {
    log(`conformance: ${mismatches} scenario(s) grade differently through the gateway`);
    process.exitCode = 1;
  } else {
    log('conformance: every scenario grades the same through the gateway as direct');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
