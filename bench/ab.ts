/**
 * `npm run bench:ab`: the gateway of the working tree against the gateway of another git
 * revision, side by side in one run on 127.0.0.1, in CPU time per request: the instrument for
 * a change worth a few percent of a 1 KiB request, which the full bench's req/s ratios cannot
 * show (bench/README.md, "A/B of two versions").
 *
 *   npm run bench:ab -- [--base REV] [--cases a,b,c] [--size BYTES] [--runs N] [--rounds N] [--requests N] [--quick]
 *
 * Processes (compiled as the full bench compiles them: compile.ts): one seller and, for each
 * of `--runs` runs (default 3), a fresh pass-through, the gateway of `--base` (default HEAD:
 * the last commit, so the comparison is what the uncommitted changes do) and the gateway of
 * the working tree. `--base` is checked out into a temporary git worktree, removed at the end.
 * Every case is the full bench's JSON case of that variant (cases.ts) at `--size` (default 1 KiB;
 * any of the full bench's JSON sizes, with its connection count). In each run,
 * after a warm-up (~20 s: every target and case in turn), each of `--rounds` rounds (default
 * 12) sends each case `--requests` requests (default 4,000) to every target in turn (the two
 * gateways' order alternating by round), and reads each process's CPU time around its load.
 *
 * Why runs with fresh processes: the same two versions measured three times, 16 rounds
 * each, gave head ÷ base medians of 0.87-0.90×, then 0.94-0.97×, then 0.97-1.01× (the
 * reply.then change, d936c5f): a process's speed differs by a few percent from one start to
 * the next (its JIT decisions, where its memory lies), and every round of a run shares it,
 * so the run, not the round, is the independent unit.
 *
 * Output (Markdown, stdout): per case the CPU µs per response of each target (median over
 * all rounds), each gateway ÷ the pass-through, head ÷ base per run (geometric mean of its
 * paired rounds) and over all runs (± two standard errors between runs), and in how many
 * rounds head was the cheaper. Progress on stderr.
 *
 * Bounded: every load stops at its request count or after 60 s; the run's watchdog (5 min
 * plus twice the loads' time at 1,000 requests/s; 2 min with --quick) ends it and every
 * child; SIGINT/SIGTERM end the children too.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_DIR, guardRun, killAllChildren, startChild, useCompiled, type BenchChild } from './children.js';
import { compileSnapshot, type CompiledSnapshot } from './compile.js';
import { JSON_SIZES, KiB, MiB, REQUEST_BODY, REQUEST_HEADERS, gatewayYaml } from './cases.js';
import { runLoad } from './load.js';
import { median } from './stats.js';

const USAGE = `Usage: npm run bench:ab -- [--base REV] [--cases a,b,c] [--size BYTES] [--runs N] [--rounds N] [--requests N] [--quick]

Compares the gateway of the working tree (head) with the gateway of git revision REV
(base; default HEAD), beside a pass-through, in CPU time per request.

  --base REV      git revision to compare with (default HEAD)
  --cases LIST    JSON cases, of a (nothing to rewrite), b (deduped), c (lifted); default a,b,c
  --size BYTES    result size, one of ${JSON_SIZES.map((s) => s.bytes).join(', ')} (default 1024); 8 connections
                  per load, 4 at 1 MiB, 2 at 4 MiB (as in the full bench)
  --runs N        runs, each with fresh pass-through and gateway processes, 1 to 10 (default 3)
  --rounds N      rounds per run, 1 to 100 (default 12)
  --requests N    requests per load, 100 to 100000 (default 4000)
  --quick         1 run of 1 round of 200 requests after a short warm-up (the CI smoke test; figures meaningless)
  --help          this text
`;

interface Options {
  base: string;
  variants: string[];
  /** Result size in bytes (one of JSON_SIZES) and its label. */
  size: { bytes: number; label: string };
  runs: number;
  rounds: number;
  requests: number;
  warmupMs: number;
  quick: boolean;
}

function intOption(name: string, raw: string | undefined, fallback: number, lo: number, hi: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < lo || n > hi) throw new Error(`--${name} must be an integer from ${lo} to ${hi}, got "${raw}"`);
  return n;
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      base: { type: 'string' },
      cases: { type: 'string' },
      size: { type: 'string' },
      runs: { type: 'string' },
      rounds: { type: 'string' },
      requests: { type: 'string' },
      quick: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const variants = [...new Set((values.cases ?? 'a,b,c').split(',').map((v) => v.trim()))];
  for (const v of variants) if (v !== 'a' && v !== 'b' && v !== 'c') throw new Error(`--cases takes a, b and c, got "${v}"`);
  const quick = values.quick === true;
  const size = JSON_SIZES.find((s) => String(s.bytes) === (values.size ?? '1024'));
  if (size === undefined) throw new Error(`--size takes one of ${JSON_SIZES.map((s) => s.bytes).join(', ')}, got "${values.size}"`);
  return {
    base: values.base ?? 'HEAD',
    variants,
    size,
    runs: intOption('runs', values.runs, quick ? 1 : 3, 1, 10),
    rounds: intOption('rounds', values.rounds, quick ? 1 : 12, 1, 100),
    requests: intOption('requests', values.requests, quick ? 200 : 4000, 100, 100_000),
    warmupMs: quick ? 0 : 20_000,
    quick,
  };
}

let opts: Options | undefined;
try {
  opts = parseOptions(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exit(2);
}
if (opts === undefined) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const options: Options = opts;

/** `--base` as a short commit id; a name git cannot resolve is a usage error (exit 2), not a git stack trace (found by a new user). */
function resolveBase(base: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--quiet', '--short', `${base}^{commit}`], { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    process.stderr.write(`--base "${base}" is not a commit of this repository (git rev-parse found none)\n${USAGE}`);
    process.exit(2);
  }
}
const baseRev = resolveBase(options.base);

const started = performance.now();
const log = (msg: string): void => void process.stderr.write(`[ab ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);

const temporary: string[] = [];
let worktree: string | undefined;
function cleanUp(): void {
  killAllChildren();
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  if (worktree !== undefined) {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: REPO_DIR, stdio: 'ignore' });
    } catch {
      rmSync(worktree, { recursive: true, force: true });
    }
  }
}

// 5 minutes (compiles, start, warm-up) plus twice the loads' time at 1,000 requests/s (1 KiB; a
// 1 MiB result 250/s, 4 MiB 62.5/s), each at most its 60 s bound.
const LOADS = options.runs * options.rounds * options.variants.length * 3;
const MS_PER_REQUEST = Math.max(1, options.size.bytes / (256 * KiB));
const WATCHDOG_MS = options.quick ? 120_000 : 5 * 60_000 + options.runs * 60_000 + 2 * LOADS * Math.min(60_000, options.requests * MS_PER_REQUEST);
/** Connections per load: the full bench's for the size (run.ts loadShape). */
const CONNECTIONS = options.size.bytes <= 64 * KiB ? 8 : options.size.bytes <= MiB ? 4 : 2;
const watchdog = guardRun(WATCHDOG_MS, log, cleanUp);

interface Target {
  label: 'pass-through' | 'base' | 'head';
  child: BenchChild;
}

/** CPU µs per response of `target` for one load of `requests` requests to the `--size` case of `variant`. */
async function measure(target: Target, variant: string, requests: number): Promise<number> {
  const before = await target.child.stats(false);
  const r = await runLoad({
    url: `${target.child.baseUrl}/agents/json-${variant}-${options.size.bytes}/mcp`,
    body: REQUEST_BODY,
    headers: REQUEST_HEADERS,
    connections: CONNECTIONS,
    amount: requests,
    durationMs: 60_000,
  });
  const after = await target.child.stats(false);
  if (r.non2xx > 0 || r.errors > 0 || r.ok === 0) throw new Error(`${target.label}, case ${variant}: ${r.ok} answers, ${r.non2xx} not 2xx, ${r.errors} errors`);
  return (after.cpuUs - before.cpuUs) / r.ok;
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** CPU µs per response of each target, per round, for one case: one array per run. */
type CaseSamples = Record<Target['label'], number[][]>;

function geomean(values: readonly number[]): number {
  return Math.exp(values.reduce((a, v) => a + Math.log(v), 0) / values.length);
}

/** Two standard errors of the mean of `logs`, as a factor (0 for a single value). */
function twoSe(logs: readonly number[]): number {
  if (logs.length < 2) return 0;
  const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
  const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (logs.length - 1));
  return (2 * sd) / Math.sqrt(logs.length);
}

function report(samples: Map<string, CaseSamples>, baseRev: string): string {
  const lines = [
    `# Gateway A/B: working tree (head) against ${options.base} (base, ${baseRev})`,
    '',
    `- ${options.runs} run(s) of ${options.rounds} round(s), ${options.requests} requests per load, ${CONNECTIONS} connections, ${options.size.label} JSON cases; Node ${process.version}`,
    '- CPU µs/req: user + system CPU time of the process per response, median over all rounds. head ÷ base: per round, paired; "per run" is the geometric mean of one run\'s rounds (each run has its own processes, whose speed differs by a few percent from start to start); "all runs" is the geometric mean of those, ± two standard errors between runs; "head cheaper" counts rounds.',
    '',
    '| case | pass-through µs/req | base µs/req | head µs/req | base ÷ pass | head ÷ pass | head ÷ base per run | head ÷ base, all runs | head cheaper |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [variant, s] of samples) {
    const all = (label: Target['label']): number[] => s[label].flat();
    const per = (a: number[], b: number[]): number[] => a.map((x, i) => x / b[i]!);
    const perRun = s.head.map((head, r) => geomean(per(head, s.base[r]!)));
    const allRounds = per(all('head'), all('base'));
    const g = geomean(perRun);
    const se = twoSe(perRun.map(Math.log));
    const spread = options.runs > 1 ? ` (${fmt(g * Math.exp(-se), 3)}–${fmt(g * Math.exp(se), 3)})` : '';
    lines.push(
      `| ${options.size.label} (${variant}) | ${fmt(median(all('pass-through')))} | ${fmt(median(all('base')))} | ${fmt(median(all('head')))} | ${fmt(median(per(all('base'), all('pass-through'))), 3)}× | ${fmt(median(per(all('head'), all('pass-through'))), 3)}× | ${perRun.map((r) => `${fmt(r, 3)}×`).join(', ')} | ${fmt(g, 3)}×${spread} | ${allRounds.filter((r) => r < 1).length} of ${allRounds.length} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const parent = mkdtempSync(join(os.tmpdir(), 'adcp-bench-ab-'));
  temporary.push(parent);
  worktree = join(parent, 'base');
  execFileSync('git', ['worktree', 'add', '--detach', worktree, baseRev], { cwd: REPO_DIR, stdio: 'ignore' });
  log(`base ${options.base} (${baseRev}) checked out in ${worktree}; compiling base and head`);
  // Each directory is listed for clean-up as soon as it exists: an interrupted head compile
  // left the finished base snapshot behind (found by a new user).
  const base = compileSnapshot(worktree);
  temporary.push(base.dir);
  const head = compileSnapshot();
  temporary.push(head.dir);
  log(`base ${base.cached ? 'taken from the compile cache' : 'compiled'} (sources sha256 ${base.hash}…), head ${head.cached ? 'taken from the compile cache' : 'compiled'} (sources sha256 ${head.hash}…)`);
  const snapshots: Record<'base' | 'head', CompiledSnapshot> = { base, head };
  for (const side of ['base', 'head'] as const) if (snapshots[side].diagnostics) log(`${side}: tsc reported type errors (it still emitted):\n${snapshots[side].diagnostics}`);

  useCompiled(snapshots.head.out);
  const seller = await startChild('seller', { module: 'seller.ts', args: ['good'] });
  const yaml = gatewayYaml({ good: seller.baseUrl, attack: seller.baseUrl });
  const samples = new Map<string, CaseSamples>(options.variants.map((v) => [v, { 'pass-through': [], base: [], head: [] }]));
  for (let run = 0; run < options.runs; run++) {
    useCompiled(snapshots.head.out);
    const targets: Target[] = [{ label: 'pass-through', child: await startChild('pass-through', { module: 'passthrough.ts', env: { BENCH_SELLER_GOOD: seller.baseUrl } }) }];
    for (const side of ['base', 'head'] as const) {
      useCompiled(snapshots[side].out);
      targets.push({ label: side, child: await startChild(`gateway ${side}`, { module: 'gateway-child.ts', env: { BENCH_GATEWAY_YAML: yaml } }) });
    }
    log(`run ${run + 1} of ${options.runs}: ${targets.map((t) => `${t.label} pid ${t.child.pid}`).join(', ')}`);

    const warmEnd = performance.now() + options.warmupMs;
    for (let round = 0; round < 10 && (round === 0 || performance.now() < warmEnd); round++) {
      for (const t of targets) for (const v of options.variants) await measure(t, v, Math.min(2000, options.requests));
    }
    for (const s of samples.values()) for (const t of targets) s[t.label].push([]);
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? targets : [targets[0]!, targets[2]!, targets[1]!];
      for (const v of options.variants) for (const t of order) samples.get(v)![t.label][run]!.push(await measure(t, v, options.requests));
    }
    log(`run ${run + 1} of ${options.runs}: ${options.rounds} round(s) done`);
    for (const t of targets) await t.child.close();
  }
  process.stdout.write(report(samples, baseRev));
  await seller.close();
}

main().then(
  () => {
    cleanUp();
    clearTimeout(watchdog);
    process.exit(0);
  },
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    cleanUp();
    process.exit(1);
  },
);
