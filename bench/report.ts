/**
 * The bench's results model and its Markdown rendering. Every figure is a median over
 * repetitions with its min–max; every ratio is the median of per-repetition ratios (each
 * taken against the pass-through, or the floor, measured in the same repetition).
 */
import type { FloorFigure, HeapFigure } from './micro.js';
import type { Variant } from './cases.js';
import { differences, median, ratios, spread, verdict, type Spread } from './stats.js';

export type Target = 'direct' | 'pass' | 'gateway';
export const TARGETS: readonly Target[] = ['direct', 'pass', 'gateway'];
export const TARGET_LABEL: Readonly<Record<Target, string>> = { direct: 'seller direct', pass: 'pass-through', gateway: 'gateway' };

/** One load run (one case, one target, one repetition). */
export interface RunSample {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Child CPU (user + system) per 2xx response, µs: pass-through and gateway only. */
  cpuUsPerReq?: number;
  /** Child peak RSS during the run, bytes: pass-through and gateway only. */
  peakRssBytes?: number;
  /** Mark-compacts (V8 major GCs) the child made during the run (child-stats.ts majorGcs): pass-through and gateway only. */
  majorGcs?: number;
  /**
   * The seller's CPU (user + system) per 2xx response of this target's load, µs: every target
   * (throughput cases). Why: on 2 cores the seller and the load generator share the CPU with
   * the proxy, and after the larger cases the seller's cost per 1 KiB response rose ~20%
   * (bench/README.md, "Seller CPU").
   */
  sellerCpuUsPerReq?: number;
  /** Cores other processes kept busy during the run (machine.ts). */
  foreignCores?: number;
}

export interface ThroughputCase {
  id: string;
  group: 'json' | 'sse1';
  variant: Variant;
  sizeLabel: string;
  /** The seller's message (JSON) or event data (SSE), bytes. */
  messageBytes: number;
  /** Bytes the host received from the gateway in the check request (rewritten results are smaller). */
  gatewayBytes?: number;
  connections: number;
  /** Per target, one sample per repetition (index = repetition). */
  samples: Record<Target, (RunSample | undefined)[]>;
}

export interface DelaySample {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  events: number;
  foreignCores?: number;
}

export interface FloodSample {
  eventsPerS: number;
  events: number;
  cpuUsPerEvent?: number;
  /** Mark-compacts the process made during the repetition's rounds (child-stats.ts majorGcs). */
  majorGcs?: number;
  foreignCores?: number;
}

export interface MemorySample {
  peakRssBytes: number;
  baseRssBytes: number;
  heapGrowthBytes: number;
  peakArrayBuffersBytes: number;
  timeP50Ms: number;
  timeMaxMs: number;
  outcomes: string;
  exactPeak: boolean;
}

export interface MemoryRow {
  id: string;
  label: string;
  target: Target;
  samples: (MemorySample | undefined)[];
}

export interface FairnessSample {
  baseP50Ms: number;
  baseP99Ms: number;
  attackP50Ms: number;
  attackP99Ms: number;
  attacksPerS: number;
  attackReasons: string;
  baseOk: number;
  attackOk: number;
  foreignCores?: number;
}

export interface BenchMeta {
  date: string;
  command: string;
  repetitions: number;
  /** Slices per target per repetition of a throughput case (targets take turns slice by slice). */
  throughputSlices: number;
  quick: boolean;
  machine: string;
  os: string;
  node: string;
  versions: Record<string, string>;
  git: string;
  /** Hash of the sources (src/ and the bench children) compiled once for every child process of the run (compile.ts). */
  sourceSnapshot: string;
  wallSeconds?: number;
  exactPeaks: boolean;
  /** 1-minute load average when the run started. */
  loadAvgAtStart: number;
  /** Average cores kept busy by processes outside the bench: whole run and per repetition. */
  foreignCores: { whole: number; perRep: number[] };
  /** Runs done again because other processes disturbed them, and the threshold (cores). */
  reruns: number;
  rerunLimitCores: number;
  /** Seconds spent waiting for other processes to calm down (before repetitions and re-runs). */
  quietWaitSeconds: number;
}

export interface BenchResults {
  meta: BenchMeta;
  throughput: ThroughputCase[];
  floor: (FloorFigure[] | undefined)[];
  heap: HeapFigure[];
  sseDelay: Record<Target, (DelaySample | undefined)[]>;
  flood: Record<Target, (FloodSample | undefined)[]>;
  floodConfig: { streams: number; eventsPerStream: number; rounds: number };
  delayConfig: { streams: number; eventsPerStream: number };
  memory: MemoryRow[];
  fairness: (FairnessSample | undefined)[];
  fairnessConfig: { attacksInFlight: number; rate: number; connections: number };
  warnings: string[];
}

// ---------------------------------------------------------------------------------------
// Formatting

const MiB = 1024 * 1024;

function num(v: number, digits: number): string {
  if (!Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
/** Integer with separators, or 3 significant figures below 100. */
function count(v: number): string {
  if (v === Infinity) return '∞';
  if (!Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 100 || Number.isInteger(v)) return num(v, 0);
  return num(v, Math.abs(v) >= 10 ? 1 : 2);
}
function ms(v: number): string {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  return num(v, a < 10 ? 2 : a < 100 ? 1 : 0);
}
function mib(v: number): string {
  return Number.isFinite(v) ? num(v / MiB, v / MiB < 10 ? 1 : 0) : '–';
}
function ratio(v: number): string {
  return Number.isFinite(v) ? `${num(v, 2)}×` : v === Infinity ? '∞' : '–';
}
function bytes(v: number): string {
  return Number.isFinite(v) ? num(v, 0) : '–';
}

/** `median (min–max)`, or the median alone with one repetition. */
function withSpread(s: Spread, f: (v: number) => string): string {
  if (Number.isNaN(s.median)) return '–';
  if (s.n <= 1 || s.min === s.max) return f(s.median);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** What the *mark-compacts* columns say, after what they count. */
const MARK_COMPACTS_WHY =
  '(V8 starts them on the external memory of socket reads, more in some runs than others, in either process: a run where one process made many more than the other says why its ratio moved; bench/README.md, "Mark-compacts").';

/** A *mark-compacts* cell: the count of each repetition, comma-separated; – when none was measured. */
function majorGcsCell(samples: readonly ({ majorGcs?: number } | undefined)[]): string {
  return field(samples, (s) => s.majorGcs).filter(Number.isFinite).join(', ') || '–';
}

function field<T>(xs: readonly (T | undefined)[], f: (x: T) => number | undefined): number[] {
  return xs.map((x) => (x === undefined ? NaN : (f(x) ?? NaN)));
}

// ---------------------------------------------------------------------------------------
// Targets

interface TargetRow {
  target: string;
  figure: string;
  measured: Spread;
  format: (v: number) => string;
  threshold: number;
  direction: 'atLeast' | 'atMost';
  thresholdText: string;
}

function gatewayToPass(c: ThroughputCase, f: (s: RunSample) => number | undefined): number[] {
  return ratios(field(c.samples.gateway, f), field(c.samples.pass, f));
}

/** Floor of the same message in the same repetition, MB/s. */
function floorMbps(r: BenchResults, c: ThroughputCase): number[] {
  return r.floor.map((figs) => figs?.find((f) => f.variant === c.variant && f.bytes === c.messageBytes)?.mbPerS ?? NaN);
}

/** Gateway MB of seller message per CPU-second: whole process, and only the CPU it adds over the pass-through. */
function gatewayMbps(c: ThroughputCase): { whole: number[]; added: number[]; wall: number[] } {
  const mb = c.messageBytes / 1e6;
  const gw = field(c.samples.gateway, (s) => s.cpuUsPerReq);
  const pass = field(c.samples.pass, (s) => s.cpuUsPerReq);
  return {
    whole: gw.map((us) => mb / (us / 1e6)),
    // No CPU added over the pass-through (the gateway spent no more): Infinity, a pass of any floor target.
    added: differences(gw, pass).map((us) => (Number.isNaN(us) ? NaN : us > 0 ? mb / (us / 1e6) : Infinity)),
    wall: field(c.samples.gateway, (s) => s.rps).map((rps) => rps * mb),
  };
}

function targetRows(r: BenchResults): TargetRow[] {
  const rows: TargetRow[] = [];
  const json = r.throughput.filter((c) => c.group === 'json');
  for (const c of json.filter((c) => c.sizeLabel === '1 KiB')) {
    rows.push({
      target: `1 KiB ${c.variant === 'a' ? '(a)' : c.variant === 'b' ? '(b)' : '(c)'} req/s`,
      figure: 'gateway ÷ pass-through',
      measured: spread(gatewayToPass(c, (s) => s.rps)),
      format: ratio,
      threshold: 0.9,
      direction: 'atLeast',
      thresholdText: '≥ 0.90×',
    });
  }
  for (const c of json.filter((c) => c.variant === 'a')) {
    rows.push({
      target: `(a) ${c.sizeLabel} throughput`,
      figure: 'gateway ÷ pass-through',
      measured: spread(gatewayToPass(c, (s) => s.rps)),
      format: ratio,
      threshold: 0.75,
      direction: 'atLeast',
      thresholdText: '≥ 0.75×',
    });
  }
  for (const c of json.filter((c) => c.variant !== 'a' && (c.sizeLabel === '1 MiB' || c.sizeLabel === '4 MiB'))) {
    rows.push({
      target: `(${c.variant}) ${c.sizeLabel} rewrite path`,
      figure: 'MB/CPU-s added over pass-through ÷ floor (∞: no CPU added)',
      measured: spread(ratios(gatewayMbps(c).added, floorMbps(r, c))),
      format: ratio,
      threshold: 1.0,
      direction: 'atLeast',
      thresholdText: '≥ 1.00×',
    });
  }
  if (r.sseDelay.gateway.some((s) => s !== undefined)) {
    rows.push({
      target: 'SSE progress: extra delay per event, p50',
      figure: 'gateway − pass-through, ms',
      measured: spread(differences(field(r.sseDelay.gateway, (s) => s.p50Ms), field(r.sseDelay.pass, (s) => s.p50Ms))),
      format: ms,
      threshold: 1.0,
      direction: 'atMost',
      thresholdText: '≤ 1 ms',
    });
  }
  if (r.flood.gateway.some((s) => s !== undefined)) {
    rows.push({
      target: `SSE events/s (${r.floodConfig.streams} streams × ${count(r.floodConfig.eventsPerStream - 1)} events)`,
      figure: 'gateway ÷ pass-through',
      measured: spread(ratios(field(r.flood.gateway, (s) => s.eventsPerS), field(r.flood.pass, (s) => s.eventsPerS))),
      format: ratio,
      threshold: 0.8,
      direction: 'atLeast',
      thresholdText: '≥ 0.80×',
    });
  }
  const legitA = r.memory.find((m) => m.id === 'legit-a' && m.target === 'gateway');
  if (legitA) {
    for (const m of r.memory.filter((m) => m.target === 'gateway' && m.id.startsWith('attack-'))) {
      rows.push({
        target: `Memory: peak RSS, ${m.label}`,
        figure: 'attack peak ÷ legitimate 3 MiB (a) peak',
        measured: spread(ratios(field(m.samples, (s) => s.peakRssBytes), field(legitA.samples, (s) => s.peakRssBytes))),
        format: ratio,
        threshold: 1.1,
        direction: 'atMost',
        thresholdText: '≤ 1.10×',
      });
    }
  }
  if (r.fairness.some((s) => s !== undefined)) {
    rows.push({
      target: `Fairness: 1 KiB p99 with ${r.fairnessConfig.attacksInFlight} attacks in flight`,
      figure: 'p99 under attack ÷ p99 without',
      measured: spread(field(r.fairness, (s) => s.attackP99Ms / s.baseP99Ms)),
      format: ratio,
      threshold: 2.0,
      direction: 'atMost',
      thresholdText: '≤ 2.00×',
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------
// Sections

function headerSection(r: BenchResults): string {
  const m = r.meta;
  const versions = Object.entries(m.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `# adcp-buyer-gateway benchmark${m.quick ? ' (quick smoke run: figures are not meaningful)' : ''}`,
    '',
    `- Date: ${m.date}${m.wallSeconds !== undefined ? `; whole run ${Math.round(m.wallSeconds)} s` : ''}`,
    `- Machine: ${m.machine}`,
    `- OS: ${m.os}; Node ${m.node}`,
    `- Packages: ${versions}`,
    `- Source: ${m.git}; every child process ran the same JavaScript, compiled with tsc at the start from a snapshot of src/ and bench/ and run under plain node (sources sha256 ${m.sourceSnapshot}…)`,
    `- Command: \`${m.command}\`; ${m.repetitions} repetition${m.repetitions === 1 ? '' : 's'}, interleaved: in a JSON or SSE one-event case the seller direct, the pass-through and the gateway take turns in ${m.throughputSlices} slice${m.throughputSlices === 1 ? "" : "s"} per repetition (each order of the three once in six slices; a target's figures for a repetition are its slices' sums); the other loads run target after target, order rotated per repetition`,
    `- Other load: processes outside the bench kept ${num(m.foreignCores.whole, 2)} cores busy on average during the run (per repetition: ${m.foreignCores.perRep.map((v) => num(v, 2)).join(', ') || '–'}); 1-minute load average at the start: ${num(m.loadAvgAtStart, 2)}. A measured run during which other processes used more than ${num(m.rerunLimitCores, 2)} cores is run again (at most 3 attempts, 10 re-runs per repetition) once the machine is quiet again: ${m.reruns} re-run${m.reruns === 1 ? '' : 's'}, ${num(m.quietWaitSeconds, 0)} s spent waiting for quiet; runs still disturbed after that are flagged ⚠ in the tables.`,
    `- Peak RSS: ${m.exactPeaks ? "the kernel's VmHWM, reset through /proc/self/clear_refs before each run (exact)" : 'sampled every 10 ms (VmHWM reset not allowed here: a peak between samples can be missed)'}`,
    '',
    'Figures are medians over repetitions, with min–max in parentheses. A ratio (×) is the median of the ratios taken within each repetition, against the pass-through (or the floor) measured in that same repetition. A verdict with `~` means the min–max of the ratio crosses the threshold: some repetitions disagree, so the result is at noise level.',
  ].join('\n');
}

function targetsSection(r: BenchResults): string {
  const rows = targetRows(r).map((t) => [t.target, t.figure, withSpread(t.measured, t.format), t.thresholdText, verdict(t.measured, t.threshold, t.direction)]);
  if (rows.length === 0) return '';
  return ['## Targets', '', table(['target', 'figure', 'measured', 'threshold', 'result'], rows)].join('\n');
}

function throughputSection(r: BenchResults, group: 'json' | 'sse1'): string {
  const cases = r.throughput.filter((c) => c.group === group);
  if (cases.length === 0) return '';
  const rows: string[][] = [];
  for (const c of cases) {
    const passRps = field(c.samples.pass, (s) => s.rps);
    for (const t of TARGETS) {
      const samples = c.samples[t];
      if (!samples.some((s) => s !== undefined)) continue;
      const rps = field(samples, (s) => s.rps);
      const cpu = field(samples, (s) => s.cpuUsPerReq);
      const passCpu = field(c.samples.pass, (s) => s.cpuUsPerReq);
      const bad = samples.reduce((n, s) => n + (s ? s.non2xx + s.errors : 0), 0);
      const disturbed = samples.filter((s) => s !== undefined && (s.foreignCores ?? 0) > r.meta.rerunLimitCores).length;
      rows.push([
        t === 'direct' ? `${c.sizeLabel} ${c.variant === 'a' ? '(a)' : `(${c.variant})`}` : '',
        t === 'direct' ? bytes(c.messageBytes) : t === 'gateway' && c.gatewayBytes !== undefined ? `→ ${bytes(c.gatewayBytes)}` : '',
        TARGET_LABEL[t],
        withSpread(spread(rps), count),
        t === 'pass' ? '1.00×' : withSpread(spread(ratios(rps, passRps)), ratio),
        ms(median(field(samples, (s) => s.p50Ms))),
        ms(median(field(samples, (s) => s.p99Ms))),
        t === 'direct' ? '–' : withSpread(spread(cpu), count),
        t === 'gateway' ? ratio(median(ratios(cpu, passCpu))) : '–',
        withSpread(spread(field(samples, (s) => s.sellerCpuUsPerReq)), count),
        t === 'direct' ? '–' : mib(median(field(samples, (s) => s.peakRssBytes))),
        t === 'direct' ? '–' : majorGcsCell(samples),
        [bad > 0 ? `⚠ ${bad} non-2xx/errors` : '', disturbed > 0 ? `⚠ ${disturbed} run${disturbed === 1 ? '' : 's'} disturbed` : ''].filter((x) => x !== '').join('; '),
      ]);
    }
  }
  const title =
    group === 'json'
      ? '## tools/call JSON results'
      : '## SSE: one-event results (`text/event-stream`, one `message` event, then the end)';
  const conns = [...new Set(cases.map((c) => `${c.sizeLabel}: ${c.connections}`))].join(', ');
  return [
    title,
    '',
    `Closed-loop load (autocannon), connections per size: ${conns}. *bytes*: the seller's message (→ what the gateway sent to the host). *CPU µs/req*: CPU time (user + system) of the pass-through or gateway process per response; *×CPU*: gateway ÷ pass-through. *seller CPU µs/req*: the seller's CPU time per response of that row's load (the seller, the load generator and the proxy share the cores, so a row's req/s depends on it too; it rises when the run has served larger results before: bench/README.md, "Seller CPU"). *peak RSS*: that process during the run. *mark-compacts*: V8 major GCs the process made during each repetition's run ${MARK_COMPACTS_WHY}`,
    '',
    table(['case', 'bytes', 'via', 'req/s', '× pass', 'p50 ms', 'p99 ms', 'CPU µs/req', '× CPU', 'seller CPU µs/req', 'peak RSS MiB', 'mark-compacts', 'notes'], rows),
  ].join('\n');
}

function floorSection(r: BenchResults): string {
  const last = r.floor.filter((f) => f !== undefined).at(-1);
  if (!last) return '';
  const steps = last.map((f) => {
    const figs = r.floor.map((rep) => rep?.find((x) => x.variant === f.variant && x.bytes === f.bytes));
    return [
      `(${f.variant}) ${mibLabel(f.bytes)}`,
      bytes(f.bytes),
      ms(median(field(figs, (x) => x.decodeMs))),
      ms(median(field(figs, (x) => x.parseMs))),
      ms(median(field(figs, (x) => x.stringifyMs))),
      ms(median(field(figs, (x) => x.encodeMs))),
      ms(median(field(figs, (x) => x.totalMs))),
      withSpread(spread(field(figs, (x) => x.mbPerS)), count),
    ];
  });
  const out = [
    '## The floor: decode + parse + stringify + encode of the whole message',
    '',
    "One core, in its own process: `buf.toString('utf8')`, `JSON.parse`, `JSON.stringify`, `Buffer.from(s, 'utf8')` of the seller's whole JSON-RPC message (median per step, ms); MB/s = 10^6 bytes of the message per second.",
    '',
    table(['message', 'bytes', 'decode ms', 'parse ms', 'stringify ms', 'encode ms', 'total ms', 'MB/s'], steps),
  ];
  const json = r.throughput.filter((c) => c.group === 'json' && (c.sizeLabel === '1 MiB' || c.sizeLabel === '4 MiB'));
  const rows: string[][] = [];
  for (const c of json) {
    const floor = floorMbps(r, c);
    if (!floor.some(Number.isFinite)) continue;
    const g = gatewayMbps(c);
    rows.push([
      `(${c.variant}) ${c.sizeLabel}`,
      withSpread(spread(floor), count),
      withSpread(spread(g.whole), count),
      ratio(median(ratios(g.whole, floor))),
      withSpread(spread(g.added), count),
      withSpread(spread(ratios(g.added, floor)), ratio),
      withSpread(spread(g.wall), count),
    ]);
  }
  if (rows.length > 0) {
    out.push(
      '',
      '### The gateway against the floor',
      '',
      "*whole*: the seller's message bytes per CPU-second of the whole gateway process (HTTP in and out included). *added*: per CPU-second the gateway spends over the pass-through on the same message (its inspection and rewrite path): the target compares this with the floor. *wall*: requests/s × message bytes under the closed-loop load (2 cores shared with the seller and the load generator).",
      '',
      table(['case', 'floor MB/s', 'gateway whole MB/CPU-s', 'whole ÷ floor', 'added MB/CPU-s', 'added ÷ floor', 'gateway wall MB/s'], rows),
    );
  }
  if (r.heap.length > 0) {
    out.push(
      '',
      'JS heap held by the parsed form of one message (`JSON.parse`, measured between full GCs): ' +
        r.heap.map((h) => `(${h.variant}) ${mibLabel(h.bytes)}: ${mib(h.parsedHeapBytes)} MiB (${ratio(h.parsedHeapBytes / h.bytes)} its size)`).join('; ') +
        '.',
    );
  }
  return out.join('\n');
}

function mibLabel(b: number): string {
  return b >= MiB ? `${num(b / MiB, b % MiB === 0 ? 0 : 1)} MiB` : `${num(b / 1024, 0)} KiB`;
}

function disturbedNote(r: BenchResults, samples: readonly ({ foreignCores?: number } | undefined)[]): string {
  const n = samples.filter((s) => s !== undefined && (s.foreignCores ?? 0) > r.meta.rerunLimitCores).length;
  return n > 0 ? `⚠ ${n} run${n === 1 ? '' : 's'} disturbed` : '';
}

function sseDelaySection(r: BenchResults): string {
  if (!TARGETS.some((t) => r.sseDelay[t].some((s) => s !== undefined))) return '';
  const pass = r.sseDelay.pass;
  const rows = TARGETS.map((t) => {
    const s = r.sseDelay[t];
    const extra = (f: (x: DelaySample) => number): string => (t === 'pass' ? '–' : withSpread(spread(differences(field(s, f), field(pass, f))), ms));
    return [
      TARGET_LABEL[t],
      count(median(field(s, (x) => x.events))),
      withSpread(spread(field(s, (x) => x.p50Ms)), ms),
      ms(median(field(s, (x) => x.p99Ms))),
      ms(median(field(s, (x) => x.maxMs))),
      extra((x) => x.p50Ms),
      extra((x) => x.p99Ms),
      extra((x) => x.maxMs),
      disturbedNote(r, s),
    ];
  });
  return [
    '## SSE: delivery delay per event',
    '',
    `${r.delayConfig.streams} streams per repetition, each ${r.delayConfig.eventsPerStream - 1} progress notifications 20 ms apart then the 1 KiB (b) result. The seller stamps every event (\`sent_at\`, \`performance.timeOrigin + performance.now()\`); the client records arrival − \`sent_at\`. *extra*: minus the pass-through's figure in the same repetition (any buffering shows here).`,
    '',
    table(['via', 'events', 'delay p50 ms', 'p99 ms', 'max ms', 'extra p50 ms', 'extra p99 ms', 'extra max ms', 'notes'], rows),
  ].join('\n');
}

function floodSection(r: BenchResults): string {
  if (!TARGETS.some((t) => r.flood[t].some((s) => s !== undefined))) return '';
  const passRate = field(r.flood.pass, (x) => x.eventsPerS);
  const passCpu = field(r.flood.pass, (x) => x.cpuUsPerEvent);
  const rows = TARGETS.map((t) => {
    const s = r.flood[t];
    const cpu = field(s, (x) => x.cpuUsPerEvent);
    return [
      TARGET_LABEL[t],
      count(median(field(s, (x) => x.events))),
      withSpread(spread(field(s, (x) => x.eventsPerS)), count),
      t === 'pass' ? '1.00×' : withSpread(spread(ratios(field(s, (x) => x.eventsPerS), passRate)), ratio),
      t === 'direct' ? '–' : ms(median(cpu)),
      t === 'gateway' ? ratio(median(ratios(cpu, passCpu))) : '–',
      t === 'direct' ? '–' : majorGcsCell(s),
      disturbedNote(r, s),
    ];
  });
  return [
    '## SSE: events per second',
    '',
    `${r.floodConfig.streams} concurrent streams of ${count(r.floodConfig.eventsPerStream - 1)} progress notifications (~190 bytes each, written 100 per write as fast as the socket takes them) then a 1 KiB result, ${r.floodConfig.rounds} rounds per repetition; events/s = all events ÷ the time until the last stream of each round ended. *CPU µs/event*: the process's CPU per event. *mark-compacts*: V8 major GCs the process made during the rounds, per repetition ${MARK_COMPACTS_WHY}`,
    '',
    table(['via', 'events', 'events/s', '× pass', 'CPU µs/event', '× CPU', 'mark-compacts', 'notes'], rows),
  ].join('\n');
}

function memorySection(r: BenchResults): string {
  if (r.memory.length === 0) return '';
  const legit = r.memory.find((m) => m.id === 'legit-a' && m.target === 'gateway');
  const rows = r.memory.map((m) => {
    const s = m.samples;
    const peaks = field(s, (x) => x.peakRssBytes);
    return [
      m.label,
      TARGET_LABEL[m.target],
      withSpread(spread(peaks.map((b) => b / MiB)), (v) => num(v, 0)),
      mib(median(field(s, (x) => x.baseRssBytes))),
      m.target === 'gateway' && legit ? withSpread(spread(ratios(peaks, field(legit.samples, (x) => x.peakRssBytes))), ratio) : '–',
      mib(median(field(s, (x) => x.heapGrowthBytes))),
      mib(median(field(s, (x) => x.peakArrayBuffersBytes))),
      ms(median(field(s, (x) => x.timeP50Ms))),
      ms(median(field(s, (x) => x.timeMaxMs))),
      s.find((x) => x !== undefined)?.outcomes ?? '–',
    ];
  });
  return [
    '## Memory under attack',
    '',
    "50 concurrent `tools/call` requests, each to a fresh process (started, warmed with 5 small calls, then measured). The attacking sellers each try to send 100 MiB: plain JSON without Content-Length, a gzip bomb (~100 KiB on the wire), one SSE event that never ends; the legitimate loads are 3 MiB results. The gateway's agents there use the default limits (4 MiB, 100,000 JSON nodes). *× legit (a)*: peak ÷ the gateway's peak under the legitimate (a) load in the same repetition. *JS heap growth*: peak `heapUsed` − idle (the parsed objects live there). *Buffers*: peak `arrayBuffers` (raw bodies). *time*: from sending to the end of each response (the error or the result). The pass-through is not run against the attacks: it has no bound and would stream 5 GiB.",
    '',
    table(['load', 'via', 'peak RSS MiB', 'idle RSS MiB', '× legit (a)', 'JS heap growth MiB', 'Buffers MiB', 'time p50 ms', 'time max ms', 'outcome (first repetition)'], rows),
    ...parsedObjectsNote(r),
  ].join('\n');
}

/** How much of the (b) peak the parsed objects explain. */
function parsedObjectsNote(r: BenchResults): string[] {
  const b = r.memory.find((m) => m.id === 'legit-b' && m.target === 'gateway');
  if (!b) return [];
  const peak = median(field(b.samples, (x) => x.peakRssBytes));
  const idle = median(field(b.samples, (x) => x.baseRssBytes));
  const heap = median(field(b.samples, (x) => x.heapGrowthBytes));
  const buffers = median(field(b.samples, (x) => x.peakArrayBuffersBytes));
  const one = r.heap.find((h) => h.variant === 'b')?.parsedHeapBytes;
  return [
    '',
    `50 concurrent 3 MiB (b) results through the gateway: peak RSS ${mib(peak)} MiB, ${mib(peak - idle)} MiB over idle; of that, the JS heap (parsed objects, decoded strings, the rewritten copy) grew by ${mib(heap)} MiB (${num((heap / (peak - idle)) * 100, 0)}% of the growth) and Buffers (raw bodies) peaked at ${mib(buffers)} MiB.` +
      (one !== undefined && Number.isFinite(one) ? ` One parsed 3 MiB (b) message alone holds ${mib(one)} MiB of heap (50 at once: ${mib(one * 50)} MiB); the 10 ms heap samples can miss the very top.` : ''),
  ];
}

function fairnessSection(r: BenchResults): string {
  const s = r.fairness;
  if (!s.some((x) => x !== undefined)) return '';
  const c = r.fairnessConfig;
  const rows = [
    ['no attack', withSpread(spread(field(s, (x) => x.baseP50Ms)), ms), withSpread(spread(field(s, (x) => x.baseP99Ms)), ms), '1.00×', count(median(field(s, (x) => x.baseOk))), '–', '–'],
    [
      `${c.attacksInFlight} attacks in flight`,
      withSpread(spread(field(s, (x) => x.attackP50Ms)), ms),
      withSpread(spread(field(s, (x) => x.attackP99Ms)), ms),
      withSpread(spread(field(s, (x) => x.attackP99Ms / x.baseP99Ms)), ratio),
      count(median(field(s, (x) => x.attackOk))),
      count(median(field(s, (x) => x.attacksPerS))),
      s.find((x) => x !== undefined)?.attackReasons ?? '–',
    ],
  ];
  const note = disturbedNote(r, s);
  return [
    '## Fairness',
    '',
    `1 KiB (a) calls to a well-behaved agent through a gateway process of its own (not the one of the JSON and SSE tables: the attacks' aftermath stays out of them), one every ${num(1000 / c.rate, 0)} ms (open loop: the pace holds while calls are slow) over up to ${c.connections} keep-alive connections, with no attack and while ${c.attacksInFlight} requests to attacking sellers are kept in flight (deep nesting, node bomb, gzip bomb, 100 MiB body; 5 each; each re-issued as soon as it ends, from a separate process). Order of the two runs alternates per repetition.`,
    '',
    table(['load', '1 KiB p50 ms', '1 KiB p99 ms', 'p99 ÷ no attack', '1 KiB calls', 'attacks/s', 'attack outcomes (first repetition)'], rows),
    ...(note ? ['', note] : []),
  ].join('\n');
}

export function renderMarkdown(r: BenchResults): string {
  const sections = [
    headerSection(r),
    targetsSection(r),
    throughputSection(r, 'json'),
    floorSection(r),
    throughputSection(r, 'sse1'),
    sseDelaySection(r),
    floodSection(r),
    memorySection(r),
    fairnessSection(r),
    r.warnings.length > 0 ? ['## Warnings', '', ...r.warnings.map((w) => `- ${w}`)].join('\n') : '',
  ];
  return sections.filter((s) => s !== '').join('\n\n') + '\n';
}
