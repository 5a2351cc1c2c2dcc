/**
 * Regression (bench, 2026-12-05, Node 20, `npm run bench:ab -- --base main --cases a --size
 * 1048576`): the gateway spent 3,510 µs of CPU per 1 MiB JSON (a) answer against the
 * pass-through's 2,676, and 17,955 against 6,050 at 4 MiB. Two process defaults, both driven by
 * the upstream socket reads' 64 KiB buffers (src/ops/process-memory.ts):
 *
 * - glibc handed the freed top of its heap back to the kernel after every batch of read buffers
 *   V8 freed (`M_TRIM_THRESHOLD` 128 KiB), and the next reads faulted every page in again
 *   (`strace -e brk`: 265 MiB regrown in 20 s, against 29 MiB for the pass-through);
 * - V8's speed-based heap growing factor (1.5 under that load) left the old generation less
 *   headroom than the read buffers' 32 MiB swing, so a mark-compact of the gateway's whole heap
 *   ran about every 32 MiB of answers.
 *
 * Now `serve` (and the bench's gateway child) applies `tuneProcessMemory` at start: one dropped
 * 31 MiB block raises glibc's thresholds (its dynamic mmap threshold), and V8's
 * `--heap-growing-percent` is pinned at 300 (factor 4). Same A/B after: 1,036 µs at 1 MiB
 * (0.305× the base), 4,950 at 4 MiB (0.287×), 1 KiB unchanged.
 *
 * Input: test/support/process-memory-child.ts, `tuned` and `untuned` (the process as before:
 * the control that shows what each assertion detects). Expected, `tuned`: 16 MiB of
 * read-buffer-sized Buffers freed at once leave glibc's heap where it was (`trimmed_mib=0`;
 * Linux with glibc only), and every old-generation limit V8 sets uses factor 4.0. `untuned`:
 * glibc trims the freed 16 MiB (measured 16; at least 8 asserted, as a long-lived allocation
 * above them would pin part), and V8 picks a factor under 4 (measured 1.2-1.4).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runScript, type CliRun } from '../helpers/process.js';

const SCRIPT = join(REPO, 'test/support/process-memory-child.ts');
/** Child processes the untuned control may take to see glibc trim a batch (see that test). */
const UNTUNED_TRIES = 6;
const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };

/** Whether glibc is this process's C library (Node's report names its version then). */
const GLIBC = process.platform === 'linux' && typeof (process.report.getReport() as { header?: { glibcVersionRuntime?: unknown } }).header?.glibcVersionRuntime === 'string';

interface ChildFigures {
  /** MiB of glibc's `[heap]` handed back after the batch was freed. */
  trimmedMiB: number;
  /** The factor of each `[HeapController] Limit` line V8 printed, as printed (`4.0`). */
  factors: string[];
}

/**
 * The factor V8 used for each `[HeapController] Limit` line of `stdout`, as printed (`4.0`):
 * the `(F)` ending the line on Node 20 and 22; on Node 24 (V8 13.6), which ends it after the
 * new limit, the `[HeapController] factor F based on …` line just before it (there the factor
 * after `--heap-growing-percent`; on Node 20 and 22 the speed-based one before it, so not read
 * where the Limit line has its own). `unprinted` for a Limit line with neither.
 * Reported failure (CI's first run on Node 24.22.3, 2026-12-05): only the `(F)` form was read,
 * so both tests below failed there with `factors: []` although V8 used 4.0 (tuned) and 1.1-1.3
 * (untuned).
 */
function limitFactors(stdout: string): string[] {
  const factors: string[] = [];
  let announced: string | undefined;
  for (const line of stdout.split('\n')) {
    const factor = /\[HeapController\] factor (\d+\.\d) based on /.exec(line);
    const limit = /\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB(?: \((\d+\.\d)\))?\s*$/.exec(line);
    if (factor) announced = factor[1];
    if (limit) {
      factors.push(limit[1] ?? announced ?? 'unprinted');
      announced = undefined;
    }
  }
  return factors;
}

function figures(run: CliRun): ChildFigures {
  assert.equal(run.code, 0, `child failed: ${run.stderr}`);
  const trimmed = /^trimmed_mib=(-?\d+)$/m.exec(run.stdout);
  assert.ok(trimmed, `no trimmed_mib line in: ${run.stdout}`);
  return { trimmedMiB: Number(trimmed[1]), factors: limitFactors(run.stdout) };
}

it('reads the factor of each limit as V8 prints it on Node 20 and 22, and on Node 24', () => {
  // Captured from process-memory-child.ts `tuned` (Node 20.20.2, 22.23.5) and `untuned` (24.22.3).
  const node20 = [
    '[17534:0x322b3d60]     1103 ms: [HeapController] factor 1.2 based on mu=0.970, speed_ratio=165 (gc=574669, mutator=3480)',
    '[17534:0x322b3d60]     1103 ms: [HeapController] Limit: old size: 5458 KB, new limit: 23847 KB (4.0)',
    '[17534:0x322b3d60]     1103 ms: [GlobalMemoryController] Limit: old size: 5458 KB, new limit: 23847 KB (4.0)',
  ];
  const node22 = [
    '[29083:0x2683f000]      744 ms: [HeapController] factor 2.2 based on mu=0.970, speed_ratio=60 (gc=683153, mutator=11462)',
    '[29083:0x2683f000]      744 ms: [HeapController] Limit: old size: 6796 KB, new limit: 29232 KB (4.0)',
    '[29083:0x2683f000]     1059 ms: [HeapController] factor 1.6 based on mu=0.970, speed_ratio=86 (gc=678449, mutator=7868)',
    '[29083:0x2683f000]     1059 ms: [HeapController] Limit: old size: 6796 KB, new limit: 29232 KB (4.0)',
  ];
  const node24 = [
    '[29123:0x349da000:0]      756 ms: [HeapController] factor 1.3 based on mu=0.970, speed_ratio=159 (gc=292867, mutator=1841)',
    '[29123:0x349da000:0]      756 ms: [GlobalMemoryController] factor 4.0 based on mu=0.970, speed_ratio=22 (gc=1984, mutator=90)',
    '[29123:0x349da000:0]      756 ms: [HeapController] Limit: old size: 7219 KB, new limit: 17459 KB',
    '[29123:0x349da000:0]      756 ms: [GlobalMemoryController] Limit: old size: 7219 KB, new limit: 30924 KB',
    '[29123:0x349da000:0]     1066 ms: [HeapController] factor 1.1 based on mu=0.970, speed_ratio=1381 (gc=337980, mutator=245)',
    '[29123:0x349da000:0]     1066 ms: [HeapController] Limit: old size: 7219 KB, new limit: 16435 KB',
  ];
  assert.deepEqual(
    [node20, node22, node24, [node24[2]!]].map((lines) => limitFactors(`trimmed_mib=0\n${lines.join('\n')}\n`)),
    [['4.0'], ['4.0', '4.0'], ['1.3', '1.1'], ['unprinted']],
  );
});

describe('the serving process keeps its read buffers\' pages and a heap growing factor of 4', () => {
  it('tuned (tuneProcessMemory, as serve applies it): nothing trimmed, factor 4.0 at every limit', OPTIONS, async () => {
    const f = figures(await runScript(SCRIPT, ['tuned']));
    // Elsewhere than glibc the trim is not this gateway's to set: only the factor is checked.
    assert.deepEqual({ trimmedMiB: GLIBC ? f.trimmedMiB : 0, factors: f.factors }, { trimmedMiB: 0, factors: ['4.0', '4.0'] });
  });

  it('untuned (the process before): glibc trims the freed batch and V8 picks a factor under 4', OPTIONS, async () => {
    // Untuned, glibc trims most batches, not all: in some processes another block sits at the
    // heap's top above every batch (the child's three batches trimmed nothing in ~1 process in
    // 12 on Node 20, 4 in 12 on Node 24.22.3), so the control takes up to UNTUNED_TRIES
    // processes to see the trim (all failing: under 0.1% on Node 24). The tuned case, the
    // fix's own check, needs no try: no batch in any process may be trimmed.
    let f = figures(await runScript(SCRIPT, ['untuned']));
    for (let tries = 1; GLIBC && f.trimmedMiB < 8 && tries < UNTUNED_TRIES; tries++) f = figures(await runScript(SCRIPT, ['untuned']));
    if (GLIBC) assert.ok(f.trimmedMiB >= 8, `trimmed ${f.trimmedMiB} MiB in ${UNTUNED_TRIES} processes`);
    assert.equal(f.factors.length, 2);
    for (const factor of f.factors) assert.ok(Number(factor) < 4, `factor ${factor}`);
  });
});
