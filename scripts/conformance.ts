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
 *   package (`node-<platform>-<arch>`) into `.cache/node22` (gitignored; scripts/node-binary.ts
 *   pins the version and installs it). The client and the gateway keep running on this Node:
 *   the product supports Node >= 20.18.1.
 *
 * - One server scenario runs too, with the gateway as the server under test (an MCP SDK 1.x
 *   seller, test/support/sdk1/seller.ts, behind it): `dns-rebinding-protection` (an
 *   `initialize` with Host and Origin `evil.example.com` must get a 4xx, one with
 *   `localhost:<port>` a 2xx; test/regressions/conformance-dns-rebinding-localhost-origin.test.ts
 *   runs the same two requests in the test suite). It has no direct grade to compare with (the
 *   SDK seller does not validate Host or Origin): every one of its checks must pass. The
 *   suite's other server scenarios are not run: they need the suite's own test server
 *   behind the gateway (tools, prompts, resources it defines), which no test seller provides.
 *
 * Options: `--scenario <name>` (repeatable) to run a subset (client or server scenarios), `--verbose` to show the runner's
 * output, `--print-node` to print the path of the runner's Node >= 22 (installing it as above
 * when needed; progress on stderr) and exit: .ci/run runs the SSE tests on it. Environment:
 * `CONFORMANCE_NODE=/path/to/node22` to use a Node 22 you already have.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { agentsYaml, startGateway } from '../test/helpers/gateway.js';
import { startSdk1Seller } from '../test/support/sdk1/seller.js';
import { nodeVersionOf, pinnedNode } from './node-binary.js';

/** The Node major the runner needs at least; an older Node runs it on the pinned one (scripts/node-binary.ts). */
const RUNNER_NODE_MAJOR = 22;
/** Scenarios left out: they need OAuth discovery at the seller's origin. */
const EXCLUDED_PREFIXES = ['auth/'];
/** Server scenarios run with the gateway as the server (see the header). */
export const SERVER_SCENARIOS: readonly string[] = ['dns-rebinding-protection'];
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

/**
 * A Node >= 22 for the runner: CONFORMANCE_NODE, this Node, or the pinned Node 22 in
 * .cache/node22 (scripts/node-binary.ts `pinnedNode`: installed on first use, its progress on
 * stderr, so `--print-node` prints the path alone on stdout).
 */
function runnerNode(): string {
  const fromEnv = process.env.CONFORMANCE_NODE;
  if (fromEnv) {
    if (major(nodeVersionOf(fromEnv)) < RUNNER_NODE_MAJOR) throw new Error(`CONFORMANCE_NODE=${fromEnv} is not Node >= ${RUNNER_NODE_MAJOR}`);
    return fromEnv;
  }
  if (major(process.version) >= RUNNER_NODE_MAJOR) return process.execPath;
  try {
    return pinnedNode(RUNNER_NODE_MAJOR);
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}: set CONFORMANCE_NODE to a Node >= ${RUNNER_NODE_MAJOR}`);
  }
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
  // The runner splits --command on spaces and appends the server URL.
  const command = [process.execPath, '--import', 'tsx', 'test/conformance/client.ts', '--mode', mode].join(' ');
  return runGraded(node, (outDir) => [runner, 'client', '--command', command, '--scenario', scenario, '--timeout', String(SCENARIO_TIMEOUT_MS), '-o', outDir], verbose);
}

/** Runs the conformance runner (`node` with `argsFor(outDir)`) into a temporary directory, then its grade ({@link gradeOf}); the directory is removed. */
async function runGraded(node: string, argsFor: (outDir: string) => string[], verbose: boolean): Promise<Grade> {
  const outDir = mkdtempSync(join(tmpdir(), 'adcp-conformance-'));
  try {
    const output: Buffer[] = [];
    await new Promise<void>((done) => {
      const child = spawn(node, argsFor(outDir), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
      child.stdout.on('data', (c: Buffer) => output.push(c));
      child.stderr.on('data', (c: Buffer) => output.push(c));
      child.on('close', () => done());
      child.on('error', () => done());
    });
    return gradeOf(outDir, output, verbose);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The grade the runner saved in `outDir` (its `checks.json`); prints the runner's output when verbose or ungraded. */
function gradeOf(outDir: string, output: Buffer[], verbose: boolean): Grade {
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
}

/** Runs one server scenario against `url` (the gateway's MCP endpoint); its grade. */
async function runServerScenario(node: string, runner: string, scenario: string, url: string, verbose: boolean): Promise<Grade> {
  return runGraded(node, (outDir) => [runner, 'server', '--url', url, '--scenario', scenario, '-o', outDir], verbose);
}

/** The server scenarios' grades, with the gateway (on 127.0.0.1, an SDK 1.x seller behind it) as the server. */
async function runServerScenarios(node: string, runner: string, scenarios: readonly string[], verbose: boolean): Promise<{ scenario: string; grade: Grade }[]> {
  if (scenarios.length === 0) return [];
  const seller = await startSdk1Seller();
  const gateway = await startGateway(agentsYaml({ conformance: seller.url }, ['log_level: silent']));
  try {
    const rows: { scenario: string; grade: Grade }[] = [];
    for (const scenario of scenarios) rows.push({ scenario, grade: await runServerScenario(node, runner, scenario, gateway.agentUrl('conformance'), verbose) });
    return rows;
  } finally {
    await gateway.close();
    await seller.close();
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
  const scenarios = values.scenario?.length ? values.scenario.filter((name) => !SERVER_SCENARIOS.includes(name)) : all;
  const serverScenarios = values.scenario?.length ? values.scenario.filter((name) => SERVER_SCENARIOS.includes(name)) : SERVER_SCENARIOS;
  log(`MCP conformance suite ${suiteVersion}: client scenarios, @modelcontextprotocol/sdk ${packageVersion('@modelcontextprotocol/sdk')} client; server scenarios ${SERVER_SCENARIOS.join(', ')} against the gateway`);
  log(`runner on Node ${nodeVersionOf(node)}; client and gateway on Node ${process.version}; excluded: ${EXCLUDED_PREFIXES.map((p) => `${p}*`).join(', ')}`);
  log();

  const rows: { scenario: string; direct: Grade; gateway: Grade }[] = [];
  for (const scenario of scenarios) {
    const direct = await runScenario(node, runner, scenario, 'direct', values.verbose);
    const gateway = await runScenario(node, runner, scenario, 'gateway', values.verbose);
    rows.push({ scenario, direct, gateway });
  }

  const width = Math.max(20, ...rows.map((r) => r.scenario.length), ...serverScenarios.map((name) => name.length));
  const line = (a: string, b: string, c: string, d: string): void => log(`${a.padEnd(width)}  ${b.padEnd(16)}  ${c.padEnd(16)}  ${d}`);
  let mismatches = 0;
  if (rows.length > 0) {
    line('scenario', 'direct', 'through gateway', '');
    line('-'.repeat(width), '-'.repeat(16), '-'.repeat(16), '-'.repeat(4));
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
  }

  // Server scenarios: the gateway is the server under test; every check must pass.
  const serverRows = await runServerScenarios(node, runner, serverScenarios, values.verbose);
  let serverFailures = 0;
  if (serverRows.length > 0) {
    if (rows.length > 0) log();
    line('server scenario', 'the gateway', '', '');
    line('-'.repeat(width), '-'.repeat(16), '', '');
    for (const { scenario, grade } of serverRows) {
      const passes = grade.graded && grade.total > 0 && grade.passed === grade.total;
      if (!passes) serverFailures++;
      line(scenario, cell(grade), '', passes ? 'pass' : 'FAILS');
      for (const f of grade.failures) log(`  ${scenario}: ${f}`);
    }
  }

  log();
  if (mismatches > 0) {
    log(`conformance: ${mismatches} scenario(s) grade differently through the gateway`);
    process.exitCode = 1;
  } else if (rows.length > 0) {
    log('conformance: every scenario grades the same through the gateway as direct');
  }
  if (serverFailures > 0) {
    log(`conformance: ${serverFailures} server scenario(s) fail against the gateway`);
    process.exitCode = 1;
  } else if (serverRows.length > 0) {
    log('conformance: every server scenario passes against the gateway');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
