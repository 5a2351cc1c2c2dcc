/**
 * `npm run bench` (full) and `npm run bench:smoke` (`--quick`): one interleaved run on
 * 127.0.0.1 of the same load against the seller directly, a plain Fastify +
 * @fastify/reply-from pass-through, and the gateway; prints Markdown tables of medians over
 * repetitions with ratios to the pass-through measured in the same repetition.
 *
 * Options:
 *   --quick          1 repetition, ~50 requests per case, a few cases (CI smoke; < 30 s)
 *   --reps N         repetitions (full default 5)
 *   --only LIST      comma-separated groups: json,sse,memory,fairness,micro (default: all)
 *   --filter REGEX   only the loads whose id matches: JSON/SSE one-event cases (e.g. `json-b-1048576`,
 *                    `sse1-a-1024`), `sse-progress`, `sse-flood`
 *   --out FILE       also write the Markdown to FILE (e.g. bench/RESULTS.md)
 *   --cpu-prof       start the gateway child with --cpu-prof --cpu-prof-dir bench/profiles
 *   --cpu-prof-pass  the same for the pass-through child (compare the two profiles)
 *   --alloc-prof     sample where the gateway child allocates (V8's sampling heap profiler,
 *                    objects the GC collected included) into bench/profiles/ALLOC.<pid>.heapprofile
 *   --alloc-prof-pass  the same for the pass-through child
 *   --node-flags F   extra Node flags (space-separated, each starting with --) for every
 *                    gateway and pass-through process, alike so that the comparison stays
 *                    fair: a V8 setting (`--max-semi-space-size=32`) or a diagnosis
 *                    (`--trace-gc`, `--trace-deopt`; their lines go to stdout with the pid)
 *   --no-guard       turn the gateway's agent guard off (no backoff after breaches, 1 GiB
 *                    buffered-bytes cap): the memory and fairness cases then measure the
 *                    pipeline itself under the full attack rate
 *
 * Every load is bounded in count and time, every await has a timeout, and a watchdog ends
 * the whole run (and every child it started) if it overruns. Progress goes to stderr; the
 * tables go to stdout.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import {
  FAIR_GOOD,
  FLOOD_CASE,
  FLOOD_EVENTS,
  JSON_SIZES,
  KiB,
  MEMORY_LEGIT_A,
  MEMORY_LEGIT_B,
  MiB,
  PROGRESS_CASE,
  PROGRESS_EVENTS,
  REQUEST_BODY,
  REQUEST_HEADERS,
  SSE_ONE_EVENT_SIZES,
  VARIANTS,
  allCases,
  gatewayYaml,
  jsonCaseId,
  sizedMessage,
  sse1CaseId,
  type AttackCase,
  type SizeSpec,
  type Variant,
} from './cases.js';
import { BENCH_DIR, REPO_DIR, guardRun, killAllChildren, livePids, reaped, runOnce, spawnChild, startChild, useCompiled, withTimeout, type BenchChild } from './children.js';
import { compileSnapshot } from './compile.js';
import { ALLOC_PROFILE_DIR_ENV, type ChildStats } from './child-stats.js';
import { callOnce, keepAliveAgent, pacedLoad, sseCount, sseDelays } from './http-client.js';
import { runLoad, type LoadResult } from './load.js';
import type { MicroResult } from './micro.js';
import type { AttackSummary } from './attacker.js';
import { percentile } from './stats.js';
import { cpuMark, foreignCores } from './machine.js';
import {
  renderMarkdown,
  TARGETS,
  type BenchResults,
  type FairnessSample,
  type MemoryRow,
  type MemorySample,
  type RunSample,
  type Target,
  type ThroughputCase,
} from './report.js';

// ---------------------------------------------------------------------------------------
// Options

type Group = 'json' | 'sse' | 'memory' | 'fairness' | 'micro';
const ALL_GROUPS: readonly Group[] = ['json', 'sse', 'memory', 'fairness', 'micro'];

interface Options {
  quick: boolean;
  reps: number;
  groups: Set<Group>;
  out: string | undefined;
  cpuProf: boolean;
  cpuProfPass: boolean;
  allocProf: boolean;
  allocProfPass: boolean;
  /** `--node-flags`: added to every gateway and pass-through child's Node flags. */
  nodeFlags: string[];
  filter: RegExp | undefined;
  guard: boolean;
}

/** `--node-flags` value: whitespace-separated flags, each `--name` or `--name=value`. */
function parseNodeFlags(value: string): string[] {
  const flags = value.split(/\s+/).filter((f) => f !== '');
  for (const f of flags) if (!/^--[a-z0-9][a-z0-9_-]*(=\S+)?$/i.test(f)) throw new Error(`--node-flags: "${f}" is not a Node flag (--name or --name=value)`);
  return flags;
}

function parseOptions(argv: string[]): Options {
  const opts: Options = { quick: false, reps: 0, groups: new Set(ALL_GROUPS), out: undefined, cpuProf: false, cpuProfPass: false, allocProf: false, allocProfPass: false, nodeFlags: [], filter: undefined, guard: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--cpu-prof') opts.cpuProf = true;
    else if (a === '--cpu-prof-pass') opts.cpuProfPass = true;
    else if (a === '--alloc-prof') opts.allocProf = true;
    else if (a === '--alloc-prof-pass') opts.allocProfPass = true;
    else if (a === '--no-guard') opts.guard = false;
    else if (a === '--out') opts.out = value();
    else if (a === '--node-flags') opts.nodeFlags.push(...parseNodeFlags(value()));
    else if (a === '--filter') opts.filter = new RegExp(value());
    else if (a === '--reps') {
      opts.reps = Number(value());
      if (!Number.isInteger(opts.reps) || opts.reps < 1 || opts.reps > 50) throw new Error('--reps must be an integer from 1 to 50');
    } else if (a === '--only') {
      const list = value().split(',').map((s) => s.trim()) as Group[];
      for (const g of list) if (!ALL_GROUPS.includes(g)) throw new Error(`--only: unknown group ${g} (known: ${ALL_GROUPS.join(', ')})`);
      opts.groups = new Set(list);
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(readFileSync(new URL(import.meta.url), 'utf8').split('*/')[0]!.replace(/^\/\*\*|^ \* ?/gm, '') + '\n');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  if (opts.reps === 0) opts.reps = opts.quick ? 1 : 5;
  return opts;
}

const opts = parseOptions(process.argv.slice(2));
const started = performance.now();
const log = (msg: string): void => void process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);

// The whole run's bound: a hung step must not keep CI (or a laptop) busy forever.
const WATCHDOG_MS = opts.quick ? 120_000 : 40 * 60_000;
const watchdog = guardRun(WATCHDOG_MS, log);

// ---------------------------------------------------------------------------------------
// Load shapes

interface Shape {
  connections: number;
  amount: number;
  durationMs: number;
}

function shapeFor(bytes: number): Shape {
  if (opts.quick) return { connections: 2, amount: 50, durationMs: 2_000 };
  if (bytes <= KiB) return { connections: 8, amount: 40_000, durationMs: 1_500 };
  if (bytes <= 64 * KiB) return { connections: 8, amount: 20_000, durationMs: 1_500 };
  if (bytes <= MiB) return { connections: 4, amount: 3_000, durationMs: 2_500 };
  return { connections: 2, amount: 800, durationMs: 3_000 };
}

/** Average cores used by other processes during a repetition above which the bench warns. */
const FOREIGN_LOAD_WARNING_CORES = 0.2;
/** A measured run during which other processes used more than this many cores (on average) is run again... */
const RUN_FOREIGN_LIMIT_CORES = 0.25;
/** ...at most this many times in all... */
const MAX_ATTEMPTS = 3;
/** ...within this budget of re-runs per repetition (bounds the total time on a busy machine). */
const RERUNS_PER_REP = opts.quick ? 0 : 10;
let rerunsLeft = RERUNS_PER_REP;
/** Other load below which the machine counts as quiet, cores. */
const QUIET_CORES = 0.1;
/** Time each repetition may spend waiting for a quiet machine (before it starts and before re-runs). */
const QUIET_WAIT_PER_REP_MS = opts.quick ? 0 : 60_000;
let quietWaitLeftMs = QUIET_WAIT_PER_REP_MS;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until other processes have kept under QUIET_CORES busy for a whole second, at most
 * `maxMs` (and within the run's overall waiting budget). Returns whether it got quiet.
 */
async function awaitQuiet(maxMs: number, why: string): Promise<boolean> {
  const until = performance.now() + Math.min(maxMs, quietWaitLeftMs);
  let waited = false;
  while (true) {
    const t0 = performance.now();
    const a = cpuMark(livePids());
    await sleep(1_000);
    const foreign = foreignCores(a, cpuMark(livePids()));
    if (foreign < QUIET_CORES) {
      if (waited) log(`  quiet again (${why})`);
      return true;
    }
    quietWaitLeftMs -= performance.now() - t0;
    results.meta.quietWaitSeconds += (performance.now() - t0) / 1000;
    if (!waited) log(`  waiting for other processes to calm down (${foreign.toFixed(2)} cores busy) before ${why}`);
    waited = true;
    if (performance.now() >= until || quietWaitLeftMs <= 0) return false;
  }
}

/**
 * Runs `run`, measuring how much CPU other processes used meanwhile (machine.ts); a disturbed
 * run is done again (bounded), and the last attempt is kept whatever it measured, with its
 * figure so the report can flag it.
 */
async function undisturbed<T>(label: string, run: () => Promise<T>): Promise<{ value: T; foreign: number }> {
  for (let attempt = 1; ; attempt++) {
    const before = cpuMark(livePids());
    const value = await run();
    const foreign = foreignCores(before, cpuMark(livePids()));
    if (!(foreign > RUN_FOREIGN_LIMIT_CORES) || attempt >= MAX_ATTEMPTS || rerunsLeft <= 0) return { value, foreign };
    rerunsLeft--;
    results.meta.reruns++;
    log(`  ${label}: other processes used ${foreign.toFixed(2)} cores during the run: running it again`);
    await awaitQuiet(20_000, `re-running ${label}`);
  }
}

/**
 * Before the first repetition, per case and target, the case's own load for a while, so the
 * JIT has settled on the hot paths (measured: a process's first 1.5 s of 1 KiB calls cost it
 * 2-4x the CPU per request of later ones).
 */
function warmupFor(bytes: number): Shape {
  const shape = shapeFor(bytes);
  return opts.quick ? { ...shape, amount: 10 } : { ...shape, amount: Math.min(shape.amount, 10_000), durationMs: bytes <= 64 * KiB ? 1_500 : 1_000 };
}
/**
 * The warm-up loads (the JSON cases', the SSE loads') are run again, in rounds, until this
 * long after the servers started (at most {@link WARMUP_SETTLE_ROUNDS} rounds). Why
 * (2026-12-01, `perf record` on both children, `--only json --filter 'json-[abc]-1024$'`):
 * TurboFan was still compiling for ~20 s after the start, 20-40% of each process's CPU in its
 * first seconds of load, and the first repetition after the per-case warm-up alone cost both
 * processes up to 1.8x the CPU per request of the later ones (1 KiB (b): pass-through 559
 * then 302-311 µs, gateway 728 then 331-375). The gateway has more code to compile, so a cold
 * repetition also lowered its ratio.
 */
const WARMUP_SETTLE_MS = 20_000;
const WARMUP_SETTLE_ROUNDS = 10;
/**
 * Untimed rounds of the SSE flood per target before the first repetition. Why (2026-12-01):
 * with no warm-up the first repetition of `--only sse --filter sse-flood` was the cold one:
 * events/s of the first vs the second repetition, four runs: pass-through 620-695k vs
 * 840-951k, gateway 457-541k vs 640-857k (ratio 0.70-0.85 vs 0.73-0.97).
 */
const FLOOD_WARMUP_ROUNDS = 3;

/**
 * Slices per target per repetition of a throughput case: the three targets take turns slice
 * by slice (each order of the three once in six slices: turnOrder), each slice a `1/THROUGHPUT_SLICES` share of the case's
 * load shape, and a target's figures for the repetition are the sum of its slices. Why: on
 * the 2-core reference VM the speed of the machine drifts on the scale of seconds (seen: the
 * pass-through's own CPU per 1 KiB request 76 µs in one 1.5 s run, 190 µs in the next); run
 * back to back as whole runs, the gateway and the pass-through met different machines and a
 * 1 KiB ratio moved by ±40% between repetitions. Interleaved finely, both meet the same drift.
 */
const THROUGHPUT_SLICES = opts.quick ? 1 : 6;
const DELAY_STREAMS = opts.quick ? 1 : 4;
const DELAY_ROUNDS = opts.quick ? 1 : 3;
const FLOOD_STREAMS = 4;
/**
 * One round takes 30-60 ms per target: 20 rounds, interleaved (runFlood), make ~1 s per
 * target per repetition, so the figure is not one scheduler hiccup (with 5 the ratio ranged
 * 0.65x-1.05x across repetitions).
 */
const FLOOD_ROUNDS = opts.quick ? 1 : 20;
const MEMORY_CONCURRENCY = 50;
/** The agent guard's answers an attack may get besides RESPONSE_TOO_LARGE (src/admission/agent-guard.ts). */
const EXPECTED_GUARD_ANSWERS = new Set(['SERVICE_UNAVAILABLE (agent_backoff)', 'SERVICE_UNAVAILABLE (agent_backoff_shed)']);
/**
 * Fairness: a modest, evenly paced (open-loop) rate of 1 KiB calls over up to 50 connections,
 * so the rate holds even when each call takes 100+ ms (a closed loop would slow down exactly
 * when latency grows, and hide it).
 */
const FAIR = { attacksInFlight: 20, rate: 250, connections: 50, amount: 1_000, durationMs: 4_000 };
/** Warm-up loads of the fairness gateway before its first use, without and then with the attack ({@link fairnessStack}; ~1.5 s each). */
const FAIR_WARMUP_ROUNDS = 4;

// ---------------------------------------------------------------------------------------
// The code under test: src/ and the child modules, compiled once (compile.ts)

log('compiling a snapshot of src/ and the bench children with tsc');
const snapshot = compileSnapshot();
const removeSnapshot = (): void => rmSync(snapshot.dir, { recursive: true, force: true });
process.on('exit', removeSnapshot);
useCompiled(snapshot.out);
log(`${snapshot.cached ? 'taken from the compile cache' : 'compiled'} in ${(snapshot.ms / 1000).toFixed(1)} s (sources sha256 ${snapshot.hash}…)${snapshot.diagnostics ? ': tsc reported type errors (see Warnings)' : ''}`);

// ---------------------------------------------------------------------------------------
// Processes

interface Stack {
  good: BenchChild;
  attack: BenchChild;
  pass: BenchChild;
  gateway: BenchChild;
  yaml: string;
}

async function startPass(good: string, attack: string, profile = false, alloc = false): Promise<BenchChild> {
  return startChild('pass-through', { module: 'passthrough.ts', env: { BENCH_SELLER_GOOD: good, BENCH_SELLER_ATTACK: attack, ...allocEnv(alloc) }, nodeFlags: profileFlags(profile) });
}

async function startGateway(yaml: string, profile: boolean, alloc = false): Promise<BenchChild> {
  return startChild('gateway', { module: 'gateway-child.ts', env: { BENCH_GATEWAY_YAML: yaml, ...allocEnv(alloc) }, nodeFlags: profileFlags(profile) });
}

/** The env that makes a child sample its allocations into bench/profiles (child-stats.ts), when asked. */
function allocEnv(alloc: boolean): Record<string, string> {
  if (!alloc) return {};
  const dir = join(BENCH_DIR, 'profiles');
  mkdirSync(dir, { recursive: true });
  return { [ALLOC_PROFILE_DIR_ENV]: dir };
}

/**
 * A server child's Node flags: `--node-flags`, then `--cpu-prof --cpu-prof-dir
 * bench/profiles` when asked (the profile is written when the child exits).
 */
function profileFlags(profile: boolean): string[] {
  if (!profile) return opts.nodeFlags;
  const dir = join(BENCH_DIR, 'profiles');
  mkdirSync(dir, { recursive: true });
  return [...opts.nodeFlags, '--cpu-prof', '--cpu-prof-dir', dir];
}

function urlOf(stack: Stack, target: Target, caseId: string): string {
  if (target === 'direct') {
    const seller = caseId.startsWith('attack-') ? stack.attack : stack.good;
    return `${seller.baseUrl}/c/${caseId}/mcp`;
  }
  return `${(target === 'pass' ? stack.pass : stack.gateway).baseUrl}/agents/${caseId}/mcp`;
}

function childOf(stack: Stack, target: Target): BenchChild | undefined {
  return target === 'pass' ? stack.pass : target === 'gateway' ? stack.gateway : undefined;
}

/** Rotates the target order per repetition so drift hits all three equally. */
function orderFor(rep: number): Target[] {
  const r = rep % TARGETS.length;
  return [...TARGETS.slice(r), ...TARGETS.slice(0, r)];
}

/**
 * Every order of the three targets, for the turns within a repetition (throughput slices,
 * flood rounds). A rotation only ({@link orderFor}) kept one cycle, so the gateway always
 * ran right after the pass-through and right before the seller direct; whatever one load
 * leaves to the next (the seller's garbage, the load generator's, the kernel's socket
 * state) then fell on the same target every time. With all six orders, each target runs
 * first, second and third twice in six turns and follows each other target as often.
 */
const ALL_ORDERS: readonly (readonly Target[])[] = TARGETS.flatMap((a) =>
  TARGETS.filter((b) => b !== a).flatMap((b) => TARGETS.filter((c) => c !== a && c !== b).map((c) => [a, b, c])),
);

/** The target order of turn `turn` of repetition `rep`: each order of {@link ALL_ORDERS} once in six turns. */
function turnOrder(rep: number, turn: number): readonly Target[] {
  return ALL_ORDERS[(rep * 2 + turn) % ALL_ORDERS.length]!;
}

// ---------------------------------------------------------------------------------------
// Results

const results: BenchResults = {
  meta: {
    date: new Date().toISOString(),
    command: `node --import tsx bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    repetitions: opts.reps,
    throughputSlices: THROUGHPUT_SLICES,
    quick: opts.quick,
    machine: `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    versions: packageVersions(),
    git: gitDescription(),
    sourceSnapshot: '',
    exactPeaks: true,
    loadAvgAtStart: os.loadavg()[0] ?? NaN,
    reruns: 0,
    rerunLimitCores: RUN_FOREIGN_LIMIT_CORES,
    quietWaitSeconds: 0,
    foreignCores: { whole: NaN, perRep: [] },
  },
  throughput: [],
  floor: [],
  heap: [],
  sseDelay: { direct: [], pass: [], gateway: [] },
  flood: { direct: [], pass: [], gateway: [] },
  floodConfig: { streams: FLOOD_STREAMS, eventsPerStream: FLOOD_EVENTS + 1, rounds: FLOOD_ROUNDS },
  delayConfig: { streams: DELAY_STREAMS * DELAY_ROUNDS, eventsPerStream: PROGRESS_EVENTS + 1 },
  memory: [],
  fairness: [],
  fairnessConfig: { attacksInFlight: FAIR.attacksInFlight, rate: FAIR.rate, connections: FAIR.connections },
  warnings: [],
};

function packageVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  const own = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as { name: string; version: string };
  out[own.name] = own.version;
  for (const name of ['fastify', '@fastify/reply-from', 'undici', 'autocannon', 'tsx']) {
    try {
      out[name] = (JSON.parse(readFileSync(join(REPO_DIR, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      out[name] = 'not installed';
    }
  }
  return out;
}

function gitDescription(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_DIR, timeout: 5_000, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_DIR, timeout: 5_000, encoding: 'utf8' }).trim();
    return dirty === '' ? `git ${head}` : `git ${head} with uncommitted changes in the working tree`;
  } catch {
    return 'not a git checkout';
  }
}

function warn(msg: string): void {
  if (!results.warnings.includes(msg)) results.warnings.push(msg);
  log(`warning: ${msg}`);
}

function trackExact(s: ChildStats): void {
  if (!s.exactPeak) results.meta.exactPeaks = false;
}

// ---------------------------------------------------------------------------------------
// Throughput cases (JSON and SSE one-event)

interface ThroughputSpec {
  id: string;
  group: 'json' | 'sse1';
  variant: Variant;
  size: SizeSpec;
}

function throughputSpecs(): ThroughputSpec[] {
  const specs: ThroughputSpec[] = [];
  if (opts.groups.has('json')) {
    for (const size of JSON_SIZES) {
      for (const variant of VARIANTS) {
        if (opts.quick && (size.bytes !== KiB || variant === 'c')) continue;
        specs.push({ id: jsonCaseId(variant, size), group: 'json', variant, size });
      }
    }
  }
  if (opts.groups.has('sse')) {
    for (const size of SSE_ONE_EVENT_SIZES) {
      for (const variant of ['a', 'b'] as const) {
        if (opts.quick && (size.bytes !== KiB || variant === 'a')) continue;
        specs.push({ id: sse1CaseId(variant, size), group: 'sse1', variant, size });
      }
    }
  }
  return specs.filter((s) => selected(s.id));
}

/** Whether `--filter` (if given) selects the load with this id: a one-event case, `sse-progress` or `sse-flood`. */
function selected(id: string): boolean {
  return opts.filter === undefined || opts.filter.test(id);
}

/** One request per target before any load: the figures must be of the intended path, not of an error. */
async function checkCase(stack: Stack, spec: ThroughputSpec, tc: ThroughputCase): Promise<void> {
  const agent = keepAliveAgent(1);
  try {
    const expected = sizedMessage(spec.variant, spec.size.bytes);
    const bodies: Partial<Record<Target, Buffer>> = {};
    for (const t of TARGETS) {
      const r = await callOnce(urlOf(stack, t, spec.id), agent, 60_000);
      bodies[t] = r.body;
      if (r.status !== 200) warn(`${spec.id} via ${t}: check request answered HTTP ${r.status}`);
    }
    const text = (t: Target): string => bodies[t]?.toString('utf8') ?? '';
    const data = (t: Target): string => (spec.group === 'sse1' ? (/^data: (.*)$/m.exec(text(t))?.[1] ?? '') : text(t));
    if (data('direct') !== expected) warn(`${spec.id}: the seller did not send the expected message`);
    if (data('pass') !== expected) warn(`${spec.id}: the pass-through changed the seller's message`);
    const gw = data('gateway');
    tc.gatewayBytes = Buffer.byteLength(gw);
    if (gw.includes('"adcp_error"')) warn(`${spec.id}: the gateway answered with an error: ${gw.slice(0, 300)}`);
    else if (spec.variant === 'a' && gw !== expected) warn(`${spec.id}: the gateway changed a result with nothing to rewrite`);
    // A lifted 1 KiB result can be larger than the seller's (the summary is added); a deduped one is always smaller.
    else if (spec.variant !== 'a' && !(gw.includes('"structuredContent"') && gw.includes('Result in structuredContent') && (spec.variant === 'c' || gw.length < expected.length))) {
      warn(`${spec.id}: the gateway did not ${spec.variant === 'b' ? 'dedupe' : 'lift'} the result`);
    }
  } catch (err) {
    warn(`${spec.id}: check failed: ${(err as Error).message}`);
  } finally {
    agent.destroy();
  }
}

/** One target's sums over the slices of one repetition. */
class SliceSums {
  ok = 0;
  non2xx = 0;
  errors = 0;
  elapsedMs = 0;
  cpuUs = 0;
  cpuKnown = true;
  peakRssBytes = 0;
  majorGcs = 0;
  sellerCpuUs = 0;
  readonly latenciesMs: number[] = [];

  /** `seller`: the seller's stats before and after the slice (its CPU for this target's load). */
  add(r: LoadResult, before: ChildStats | undefined, after: ChildStats | undefined, seller: readonly [ChildStats, ChildStats]): void {
    this.ok += r.ok;
    this.non2xx += r.non2xx;
    this.errors += r.errors;
    this.elapsedMs += r.elapsedMs;
    for (const ms of r.latenciesMs) this.latenciesMs.push(ms);
    if (before && after) {
      this.cpuUs += after.cpuUs - before.cpuUs;
      this.peakRssBytes = Math.max(this.peakRssBytes, after.peakRssBytes);
      this.majorGcs += after.majorGcs - before.majorGcs;
    } else {
      this.cpuKnown = false;
    }
    this.sellerCpuUs += seller[1].cpuUs - seller[0].cpuUs;
  }

  sample(foreignCores: number): RunSample {
    return {
      rps: this.elapsedMs > 0 ? (this.ok * 1000) / this.elapsedMs : NaN,
      p50Ms: percentile(this.latenciesMs, 50),
      p99Ms: percentile(this.latenciesMs, 99),
      ok: this.ok,
      non2xx: this.non2xx,
      errors: this.errors,
      ...(this.cpuKnown && this.ok > 0 ? { cpuUsPerReq: this.cpuUs / this.ok, peakRssBytes: this.peakRssBytes, majorGcs: this.majorGcs } : {}),
      ...(this.ok > 0 ? { sellerCpuUsPerReq: this.sellerCpuUs / this.ok } : {}),
      foreignCores,
    };
  }
}

async function runThroughput(stack: Stack, spec: ThroughputSpec, tc: ThroughputCase, rep: number): Promise<void> {
  const shape = shapeFor(spec.size.bytes);
  const slice: Shape = {
    connections: shape.connections,
    amount: Math.max(shape.connections, Math.ceil(shape.amount / THROUGHPUT_SLICES)),
    durationMs: Math.ceil(shape.durationMs / THROUGHPUT_SLICES),
  };
  let sums = new Map<Target, SliceSums>();
  const { foreign } = await undisturbed(`${spec.id}`, async () => {
    sums = new Map(TARGETS.map((t) => [t, new SliceSums()]));
    for (let s = 0; s < THROUGHPUT_SLICES; s++) {
      for (const t of turnOrder(rep, s)) {
        const child = childOf(stack, t);
        // The peak RSS is reset at a target's first slice only: its peak is over the whole repetition.
        const before = child ? await child.stats(s === 0) : undefined;
        const sellerBefore = await stack.good.stats(false);
        const r = await runLoad({ url: urlOf(stack, t, spec.id), body: REQUEST_BODY, headers: REQUEST_HEADERS, ...slice });
        const sellerAfter = await stack.good.stats(false);
        const after = child ? await child.stats(false) : undefined;
        if (after) trackExact(after);
        sums.get(t)!.add(r, before, after, [sellerBefore, sellerAfter]);
      }
    }
  });
  for (const t of orderFor(rep)) {
    const sample = sums.get(t)!.sample(foreign);
    tc.samples[t][rep] = sample;
    if (sample.non2xx + sample.errors > 0) warn(`${spec.id} via ${t}, repetition ${rep + 1}: ${sample.non2xx} non-2xx, ${sample.errors} errors`);
    log(`  ${spec.id.padEnd(16)} ${t.padEnd(8)} ${sample.rps.toFixed(0).padStart(7)} req/s  p50 ${sample.p50Ms.toFixed(2)} ms  p99 ${sample.p99Ms.toFixed(2)} ms${sample.cpuUsPerReq !== undefined ? `  ${sample.cpuUsPerReq.toFixed(0)} µs CPU/req` : ''}`);
  }
}

// ---------------------------------------------------------------------------------------
// SSE: delay per event, events per second

async function runDelay(stack: Stack, rep: number): Promise<void> {
  for (const t of orderFor(rep)) {
    const agent = keepAliveAgent(DELAY_STREAMS);
    let delays: number[] = [];
    let events = 0;
    let foreign = NaN;
    try {
      ({ foreign } = await undisturbed(`sse-progress via ${t}`, async () => {
        delays = [];
        events = 0;
        for (let round = 0; round < DELAY_ROUNDS; round++) {
          const runs = await Promise.all(Array.from({ length: DELAY_STREAMS }, () => sseDelays(urlOf(stack, t, PROGRESS_CASE), agent, 15_000)));
          for (const r of runs) {
            delays.push(...r.delaysMs);
            events += r.events;
          }
        }
      }));
    } finally {
      agent.destroy();
    }
    const expected = DELAY_STREAMS * DELAY_ROUNDS * (PROGRESS_EVENTS + 1);
    if (delays.length !== expected) warn(`SSE delay via ${t}, repetition ${rep + 1}: ${delays.length} timestamped events, expected ${expected}`);
    results.sseDelay[t][rep] = { p50Ms: percentile(delays, 50), p99Ms: percentile(delays, 99), maxMs: percentile(delays, 100), events, foreignCores: foreign };
    log(`  sse-progress     ${t.padEnd(8)} delay p50 ${percentile(delays, 50).toFixed(2)} ms  p99 ${percentile(delays, 99).toFixed(2)} ms  max ${percentile(delays, 100).toFixed(2)} ms`);
  }
}

/**
 * Warm-up of the SSE loads that are selected: {@link FLOOD_WARMUP_ROUNDS} untimed flood rounds
 * and one round of progress streams per target, nothing recorded (a failure is left to the
 * measured runs to report).
 */
async function warmSse(stack: Stack): Promise<void> {
  for (const t of TARGETS) {
    const agent = keepAliveAgent(Math.max(FLOOD_STREAMS, DELAY_STREAMS));
    try {
      if (selected(PROGRESS_CASE)) await Promise.all(Array.from({ length: DELAY_STREAMS }, () => sseDelays(urlOf(stack, t, PROGRESS_CASE), agent, 15_000)));
      for (let round = 0; selected(FLOOD_CASE) && round < FLOOD_WARMUP_ROUNDS; round++) {
        await Promise.all(Array.from({ length: FLOOD_STREAMS }, () => sseCount(urlOf(stack, t, FLOOD_CASE), agent, 30_000)));
      }
    } catch (err) {
      warn(`SSE warm-up via ${t}: ${(err as Error).message}`);
    } finally {
      agent.destroy();
    }
  }
}

/** One target's flood figures summed over its rounds (runFlood). */
interface FloodSums {
  elapsed: number;
  events: number;
  cpuUs: number;
  majorGcs: number;
  foreign: number;
  failed: boolean;
}

/**
 * SSE events/s: FLOOD_ROUNDS rounds of FLOOD_STREAMS concurrent streams per target, the
 * targets taking turns round by round (each order of the three once in six rounds: turnOrder), like the slices of a
 * throughput case: run target after target, the pass-through and the gateway met different
 * machines (the ratio ranged 0.69x-1.13x within one full run at 89e07ed).
 */
async function runFlood(stack: Stack, rep: number): Promise<void> {
  const agents = new Map(TARGETS.map((t) => [t, keepAliveAgent(FLOOD_STREAMS)]));
  let sums = new Map<Target, FloodSums>();
  try {
    // Judged over the whole flood, not per round: a round is ~50 ms, shorter than the tick
    // counters can tell other load in (machine.ts foreignCores).
    const { foreign } = await undisturbed('sse-flood', async () => {
      sums = new Map(TARGETS.map((t) => [t, { elapsed: 0, events: 0, cpuUs: 0, majorGcs: 0, foreign: 0, failed: false }]));
      for (let round = 0; round < FLOOD_ROUNDS; round++) {
        for (const t of turnOrder(rep, round)) {
          const sum = sums.get(t)!;
          if (sum.failed) continue;
          const child = childOf(stack, t);
          try {
            const before = child ? await child.stats(true) : undefined;
            const start = performance.now();
            const counts = await Promise.all(Array.from({ length: FLOOD_STREAMS }, () => sseCount(urlOf(stack, t, FLOOD_CASE), agents.get(t)!, 30_000)));
            sum.elapsed += performance.now() - start;
            const after = child ? await child.stats(false) : undefined;
            sum.events += counts.reduce((a, b) => a + b, 0);
            sum.cpuUs += before && after ? after.cpuUs - before.cpuUs : 0;
            sum.majorGcs += before && after ? after.majorGcs - before.majorGcs : 0;
          } catch (err) {
            sum.failed = true;
            warn(`SSE flood via ${t}, repetition ${rep + 1}: ${(err as Error).message}`);
          }
        }
      }
    });
    for (const sum of sums.values()) sum.foreign = foreign;
  } finally {
    for (const agent of agents.values()) agent.destroy();
  }
  for (const t of TARGETS) {
    const sum = sums.get(t)!;
    if (sum.failed) continue;
    const expected = FLOOD_ROUNDS * FLOOD_STREAMS * (FLOOD_EVENTS + 1);
    if (sum.events !== expected) warn(`SSE flood via ${t}, repetition ${rep + 1}: ${sum.events} events, expected ${expected}`);
    results.flood[t][rep] = {
      eventsPerS: (sum.events * 1000) / sum.elapsed,
      events: sum.events,
      foreignCores: sum.foreign,
      ...(childOf(stack, t) ? { cpuUsPerEvent: sum.cpuUs / sum.events, majorGcs: sum.majorGcs } : {}),
    };
    log(`  sse-flood        ${t.padEnd(8)} ${((sum.events * 1000) / sum.elapsed).toFixed(0).padStart(7)} events/s`);
  }
}

// ---------------------------------------------------------------------------------------
// Memory under attack (a fresh process per load)

const MEMORY_LOADS: readonly { id: string; label: string; caseId: string; targets: Target[] }[] = [
  { id: 'legit-a', label: 'legitimate 3 MiB (a)', caseId: MEMORY_LEGIT_A, targets: ['pass', 'gateway'] },
  { id: 'legit-b', label: 'legitimate 3 MiB (b)', caseId: MEMORY_LEGIT_B, targets: ['pass', 'gateway'] },
  { id: 'attack-json100', label: '100 MiB plain JSON', caseId: 'attack-json100', targets: ['gateway'] },
  { id: 'attack-gzip100', label: 'gzip bomb (100 MiB decoded)', caseId: 'attack-gzip100', targets: ['gateway'] },
  { id: 'attack-sse100', label: '100 MiB SSE event', caseId: 'attack-sse100', targets: ['gateway'] },
];

function outcomeOf(status: number, body: Buffer): string {
  const head = body.subarray(0, 4096).toString('utf8');
  const reason = /"reason":"([a-z_]+)"/.exec(head)?.[1];
  if (head.includes('"adcp_error"')) return `${/"code":"([A-Z_]+)"/.exec(head)?.[1] ?? 'error'} (${reason ?? '?'})`;
  if (status === 200 && body.length >= MiB) return 'result';
  return `HTTP ${status}, ${body.length} bytes`;
}

async function runMemory(stack: Stack, rep: number): Promise<void> {
  for (const load of MEMORY_LOADS) {
    for (const target of load.targets) {
      let row = results.memory.find((m) => m.id === load.id && m.target === target);
      if (!row) {
        row = { id: load.id, label: load.label, target, samples: [] } satisfies MemoryRow;
        results.memory.push(row);
      }
      const warmAgent = keepAliveAgent(1);
      const agent = new http.Agent({ keepAlive: false, maxSockets: MEMORY_CONCURRENCY });
      let child: BenchChild | undefined;
      try {
        child = target === 'gateway' ? await startGateway(stack.yaml, false) : await startPass(stack.good.baseUrl, stack.attack.baseUrl);
        const base = child.baseUrl;
        for (let i = 0; i < 5; i++) await callOnce(`${base}/agents/${FAIR_GOOD}/mcp`, warmAgent, 10_000);
        warmAgent.destroy();
        await new Promise((r) => setTimeout(r, 100));
        const idle = await child.stats(true);
        const calls = await Promise.all(
          Array.from({ length: MEMORY_CONCURRENCY }, () => callOnce(`${base}/agents/${load.caseId}/mcp`, agent, 60_000).catch((err: Error) => err)),
        );
        const after = await child.stats(false);
        trackExact(after);
        const outcomes = new Map<string, number>();
        const times: number[] = [];
        for (const c of calls) {
          const o = c instanceof Error ? `client error: ${c.message.slice(0, 80)}` : outcomeOf(c.status, c.body);
          outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
          if (!(c instanceof Error)) times.push(c.elapsedMs);
        }
        const sample: MemorySample = {
          peakRssBytes: after.peakRssBytes,
          baseRssBytes: idle.rssBytes,
          heapGrowthBytes: after.peakHeapUsedBytes - idle.heapUsedBytes,
          peakArrayBuffersBytes: after.peakArrayBuffersBytes,
          timeP50Ms: percentile(times, 50),
          timeMaxMs: percentile(times, 100),
          outcomes: [...outcomes].map(([o, n]) => `${n}× ${o}`).join(', '),
          exactPeak: after.exactPeak,
        };
        row.samples[rep] = sample;
        const unexpected = load.id.startsWith('legit') ? !(outcomes.get('result') === MEMORY_CONCURRENCY) : [...outcomes.keys()].some((o) => !o.startsWith('RESPONSE_TOO_LARGE') && !EXPECTED_GUARD_ANSWERS.has(o));
        if (unexpected) warn(`memory ${load.id} via ${target}, repetition ${rep + 1}: ${sample.outcomes}`);
        log(`  memory ${load.id.padEnd(15)} ${target.padEnd(8)} peak RSS ${(after.peakRssBytes / MiB).toFixed(0)} MiB (idle ${(idle.rssBytes / MiB).toFixed(0)})  time max ${sample.timeMaxMs.toFixed(0)} ms  ${sample.outcomes}`);
      } catch (err) {
        warn(`memory ${load.id} via ${target}, repetition ${rep + 1}: ${(err as Error).message}`);
      } finally {
        warmAgent.destroy();
        agent.destroy();
        await child?.close();
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Fairness

async function startAttack(stack: Stack): Promise<{ stop(): Promise<AttackSummary> }> {
  const kinds: AttackCase[] = ['attack-deep', 'attack-nodes', 'attack-gzip100', 'attack-json100'];
  const urls = Array.from({ length: FAIR.attacksInFlight }, (_, i) => urlOf(stack, 'gateway', kinds[i % kinds.length]!));
  const child = spawnChild({ module: 'attacker.ts' });
  const result = new Promise<AttackSummary>((resolve, reject) => {
    child.on('message', (raw: unknown) => {
      const msg = raw as { type: string; result?: AttackSummary };
      if (msg.type === 'result') resolve(msg.result!);
    });
    child.once('exit', (code) => reject(new Error(`attacker exited (code ${code}) without a result`)));
  });
  result.catch(() => undefined);
  await withTimeout(
    new Promise<void>((resolve) => {
      child.on('message', (raw: unknown) => {
        if ((raw as { type: string }).type === 'started') resolve();
      });
      child.send({ type: 'start', urls, maxRequests: 200_000, maxMs: 20_000, requestTimeoutMs: 30_000 });
    }),
    15_000,
    'attacker start',
  );
  return {
    async stop() {
      if (child.connected) child.send({ type: 'stop' });
      try {
        return await withTimeout(result, 35_000, 'attacker stop');
      } finally {
        await reaped(child, 5_000);
      }
    },
  };
}

/**
 * The gateway the fairness case attacks: its own process, started and warmed at the first
 * repetition that needs it and kept for the later ones. Never the throughput cases' gateway:
 * the attacks leave garbage, a grown heap and backed-off agents behind, and that process would
 * then meet every later repetition's JSON and SSE loads with a history the pass-through (never
 * attacked) does not have (the memory loads already get fresh processes).
 */
let fairStack: Stack | undefined;

async function fairnessStack(mainStack: Stack): Promise<Stack> {
  if (fairStack === undefined) {
    const child = await startGateway(mainStack.yaml, opts.cpuProf, opts.allocProf);
    const stack = (fairStack = { ...mainStack, gateway: child });
    // The fairness figures are p99s, and a cold process's first calls are its slowest: the
    // 1 KiB path is warmed as the main gateway's is (warmupFor), a few rounds, the last ones
    // under the attack too (its error paths; a first run of `--only fairness` with the 1 KiB
    // warm-up alone: p99 25 ms without the attack and 647 ms under it, against 6 and 8 ms in
    // the next repetition). The agents' backoff is then what it is in every later repetition.
    // Profiled like the main gateway when asked (`--cpu-prof`, `--alloc-prof`: one file per pid).
    const warmRounds = async (): Promise<void> => {
      for (let round = 0; round < FAIR_WARMUP_ROUNDS; round++) {
        const r = await runLoad({ url: urlOf(stack, 'gateway', FAIR_GOOD), body: REQUEST_BODY, headers: REQUEST_HEADERS, ...warmupFor(KiB) });
        if (r.non2xx + r.errors > 0) warn(`fairness gateway warm-up: ${r.non2xx} non-2xx answers and ${r.errors} errors on the well-behaved calls`);
      }
    };
    await warmRounds();
    await underAttack(stack, warmRounds);
    log(`  fairness gateway ${child.baseUrl} (pid ${child.pid}) started and warmed`);
  }
  return fairStack;
}

/** Runs `run` while the attacker keeps the fairness attacks in flight against `stack`'s gateway (after a 300 ms ramp-up), then stops it. */
async function underAttack<T>(stack: Stack, run: () => Promise<T>): Promise<{ value: T; summary: AttackSummary }> {
  const attack = await startAttack(stack);
  let value: T;
  let summary: AttackSummary;
  try {
    await new Promise((r) => setTimeout(r, 300)); // let the attack ramp up
    value = await run();
  } finally {
    // Stopped whatever `run` did; its summary is what the fairness row reports.
    summary = await attack.stop();
  }
  return { value, summary };
}

async function runFairness(mainStack: Stack, rep: number): Promise<void> {
  const stack = await fairnessStack(mainStack);
  const url = urlOf(stack, 'gateway', FAIR_GOOD);
  const load = async (): Promise<LoadResult> => {
    const r = await pacedLoad(url, { rate: FAIR.rate, count: FAIR.amount, durationMs: FAIR.durationMs, maxSockets: FAIR.connections, timeoutMs: 30_000 });
    return {
      ok: r.ok,
      non2xx: r.failed,
      errors: 0,
      rps: NaN,
      p50Ms: percentile(r.latenciesMs, 50),
      p99Ms: percentile(r.latenciesMs, 99),
      maxMs: percentile(r.latenciesMs, 100),
      elapsedMs: NaN,
      latenciesMs: r.latenciesMs,
      minBytes: NaN,
      maxBytes: NaN,
    };
  };
  let base: LoadResult | undefined;
  let attacked: LoadResult | undefined;
  let summary: AttackSummary | undefined;
  const loadUnderAttack = async (): Promise<void> => {
    ({ value: attacked, summary } = await underAttack(stack, load));
  };
  let foreign = 0;
  const baseline = async (): Promise<void> => {
    const r = await undisturbed('fairness without attack', load);
    base = r.value;
    foreign = Math.max(foreign, r.foreign);
  };
  const attackedRun = async (): Promise<void> => {
    foreign = Math.max(foreign, (await undisturbed('fairness under attack', loadUnderAttack)).foreign);
  };
  if (rep % 2 === 0) {
    await baseline();
    await attackedRun();
  } else {
    await attackedRun();
    await baseline();
  }
  if (!base || !attacked || !summary) return;
  const sample: FairnessSample = {
    foreignCores: foreign,
    baseP50Ms: base.p50Ms,
    baseP99Ms: base.p99Ms,
    attackP50Ms: attacked.p50Ms,
    attackP99Ms: attacked.p99Ms,
    attacksPerS: (summary.completed * 1000) / summary.elapsedMs,
    attackReasons: Object.entries(summary.reasons)
      .map(([k, n]) => `${n}× ${k}`)
      .join(', '),
    baseOk: base.ok,
    attackOk: attacked.ok,
  };
  if (base.non2xx + base.errors + attacked.non2xx + attacked.errors > 0) warn(`fairness, repetition ${rep + 1}: non-2xx or errors on the well-behaved calls`);
  results.fairness[rep] = sample;
  log(`  fairness p99 ${base.p99Ms.toFixed(2)} ms -> ${attacked.p99Ms.toFixed(2)} ms under attack (${sample.attacksPerS.toFixed(0)} attacks/s)`);
}

// ---------------------------------------------------------------------------------------
// Micro-benchmark of the floor

async function runMicro(rep: number): Promise<void> {
  const messages = opts.quick
    ? [{ variant: 'b' as const, bytes: MiB }]
    : (['a', 'b', 'c'] as const).flatMap((variant) => [MiB, 4 * MiB].map((bytes) => ({ variant, bytes })));
  const heap = opts.quick || rep > 0 ? [] : [{ variant: 'a' as const, bytes: 3 * MiB }, { variant: 'b' as const, bytes: 3 * MiB }];
  const { value: result } = await undisturbed('floor micro-benchmark', () =>
    runOnce<MicroResult>('micro-benchmark', {
      module: 'micro.ts',
      nodeFlags: ['--expose-gc'],
      timeoutMs: 120_000,
      input: { type: 'run', messages, heap, maxMsPerMessage: opts.quick ? 200 : 1_000, maxIterations: opts.quick ? 3 : 40 },
    }),
  );
  results.floor[rep] = result.floor;
  if (result.heap.length > 0) results.heap = result.heap;
  log(`  floor ${result.floor.map((f) => `(${f.variant}) ${f.bytes / MiB} MiB ${f.mbPerS.toFixed(0)} MB/s`).join(', ')}`);
}

// ---------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  results.meta.sourceSnapshot = snapshot.hash;
  if (snapshot.diagnostics) warn(`tsc reported errors compiling the snapshot (the emitted JavaScript ran anyway): ${snapshot.diagnostics.split('\n').slice(0, 3).join(' | ')}`);
  const startMark = cpuMark([]);
  log(`starting (${opts.quick ? 'quick' : 'full'}, ${opts.reps} repetition(s), groups: ${[...opts.groups].join(', ')})`);
  const [good, attack] = await Promise.all([
    startChild('seller', { module: 'seller.ts', args: ['good'] }),
    startChild('attacking seller', { module: 'seller.ts', args: ['attack'], readyTimeoutMs: 60_000 }),
  ]);
  const yaml = gatewayYaml({ good: good.baseUrl, attack: attack.baseUrl }, opts.guard);
  const [pass, gateway] = await Promise.all([startPass(good.baseUrl, attack.baseUrl, opts.cpuProfPass, opts.allocProfPass), startGateway(yaml, opts.cpuProf, opts.allocProf)]);
  const stack: Stack = { good, attack, pass, gateway, yaml };
  log(`seller ${good.baseUrl}, attacking seller ${attack.baseUrl}, pass-through ${pass.baseUrl} (pid ${pass.pid}), gateway ${gateway.baseUrl} (pid ${gateway.pid})`);
  if (allCases().length === 0) throw new Error('no cases');

  try {
    const specs = throughputSpecs();
    const cases = specs.map(
      (spec): ThroughputCase => ({
        id: spec.id,
        group: spec.group,
        variant: spec.variant,
        sizeLabel: spec.size.label,
        messageBytes: spec.size.bytes,
        connections: shapeFor(spec.size.bytes).connections,
        samples: { direct: [], pass: [], gateway: [] },
      }),
    );
    results.throughput = cases;

    log('checks and warm-up');
    const serversUpAt = performance.now();
    const warmJson = async (): Promise<void> => {
      for (const spec of specs) {
        for (const t of TARGETS) await runLoad({ url: urlOf(stack, t, spec.id), body: REQUEST_BODY, headers: REQUEST_HEADERS, ...warmupFor(spec.size.bytes) });
      }
    };
    const warmSseLoads = opts.groups.has('sse') && !opts.quick && (selected(FLOOD_CASE) || selected(PROGRESS_CASE));
    const warmAll = async (): Promise<void> => {
      await warmJson();
      if (warmSseLoads) await warmSse(stack);
    };
    for (let i = 0; i < specs.length; i++) await checkCase(stack, specs[i]!, cases[i]!);
    await warmAll();
    // Until the JIT has settled (WARMUP_SETTLE_MS): the same warm-up loads again, in rounds.
    const warms = specs.length > 0 || warmSseLoads;
    for (let round = 0; !opts.quick && warms && performance.now() - serversUpAt < WARMUP_SETTLE_MS && round < WARMUP_SETTLE_ROUNDS; round++) await warmAll();
    log(`warm-up done ${((performance.now() - serversUpAt) / 1000).toFixed(1)} s after the servers started`);

    for (let rep = 0; rep < opts.reps; rep++) {
      log(`repetition ${rep + 1} of ${opts.reps}, order ${orderFor(rep).join(' -> ')}`);
      rerunsLeft = RERUNS_PER_REP;
      quietWaitLeftMs = QUIET_WAIT_PER_REP_MS;
      if (!opts.quick) await awaitQuiet(QUIET_WAIT_PER_REP_MS, `repetition ${rep + 1}`);
      const repMark = cpuMark(livePids());
      if (opts.groups.has('micro')) await runMicro(rep);
      for (let i = 0; i < specs.length; i++) await runThroughput(stack, specs[i]!, cases[i]!, rep);
      if (opts.groups.has('sse')) {
        if (selected(PROGRESS_CASE)) await runDelay(stack, rep);
        if (!opts.quick && selected(FLOOD_CASE)) await runFlood(stack, rep);
      }
      if (opts.groups.has('fairness') && !opts.quick) await runFairness(stack, rep);
      if (opts.groups.has('memory') && !opts.quick) await runMemory(stack, rep);
      const foreign = foreignCores(repMark, cpuMark(livePids()));
      results.meta.foreignCores.perRep[rep] = foreign;
      if (foreign > FOREIGN_LOAD_WARNING_CORES) {
        warn(`repetition ${rep + 1}: other processes kept ${foreign.toFixed(2)} cores busy on average: its figures are disturbed`);
      }
    }
  } finally {
    await Promise.all([pass.close(), gateway.close(), good.close(), attack.close(), fairStack?.gateway.close()]);
  }

  results.meta.wallSeconds = (performance.now() - started) / 1000;
  results.meta.foreignCores.whole = foreignCores(startMark, cpuMark(livePids()));
  const md = renderMarkdown(results);
  process.stdout.write(md);
  if (opts.out) {
    writeFileSync(opts.out, md);
    log(`wrote ${opts.out}`);
  }
  if (opts.cpuProf || opts.cpuProfPass) log(`CPU profile(s) in ${join(BENCH_DIR, 'profiles')} (file names carry the pid)`);
  if (opts.allocProf || opts.allocProfPass) log(`allocation profile(s) in ${join(BENCH_DIR, 'profiles')} (ALLOC.<pid>.heapprofile)`);
  log('done');
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  (err: unknown) => {
    log(`failed: ${(err as Error).stack ?? String(err)}`);
    killAllChildren();
    process.exit(1);
  },
);
