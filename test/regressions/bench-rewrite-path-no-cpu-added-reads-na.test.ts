// Reported failure (bench/RESULTS.md at a927eed, and the full run at b3856ad, 2026-12-05):
// the gateway spent no more CPU per (b)/(c) 1 MiB and 4 MiB answer than the pass-through in
// every repetition, so its "MB per CPU-second added" was Infinity, a pass of any floor target;
// yet every rewrite-path row of the targets table read `–` and `n/a`: the spread's sort
// dropped every non-finite value, Infinity with NaN (a3aec1a had fixed only the ratio).
// The report is built here from hand-made results, no process started.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderMarkdown, type BenchResults, type RunSample, type Target } from '../../bench/report.js';
import { spread, verdict } from '../../bench/stats.js';

const MiB = 1024 * 1024;

function sample(cpuUsPerReq: number): RunSample {
  return { rps: 500, p50Ms: 5, p99Ms: 9, ok: 1000, non2xx: 0, errors: 0, cpuUsPerReq, peakRssBytes: 200 * MiB, majorGcs: 0, sellerCpuUsPerReq: 250 };
}

/** Results of one (b) 1 MiB case over three repetitions: the gateway's CPU per answer, then the pass-through's. */
function results(gateway: number[], pass: number[]): BenchResults {
  const none = (): Record<Target, undefined[]> => ({ direct: [], pass: [], gateway: [] });
  return {
    meta: {
      date: '2026-12-05T00:00:00.000Z', command: 'test', repetitions: 3, throughputSlices: 6, quick: false, machine: 'test', os: 'test', node: 'v20',
      versions: {}, git: 'test', sourceSnapshot: 'test', exactPeaks: true, loadAvgAtStart: 0, foreignCores: { whole: 0, perRep: [0, 0, 0] }, reruns: 0, rerunLimitCores: 0.25, quietWaitSeconds: 0,
    },
    throughput: [
      {
        id: 'json-b-1048576', group: 'json', variant: 'b', sizeLabel: '1 MiB', messageBytes: MiB, gatewayBytes: 500_000, connections: 4,
        samples: { direct: [sample(0), sample(0), sample(0)], pass: pass.map(sample), gateway: gateway.map(sample) },
      },
    ],
    floor: [0, 1, 2].map(() => [{ variant: 'b' as const, bytes: MiB, iterations: 10, decodeMs: 3, parseMs: 2, stringifyMs: 1, encodeMs: 3, totalMs: 9, mbPerS: 100 }]),
    heap: [],
    sseDelay: none(),
    flood: none(),
    floodConfig: { streams: 4, eventsPerStream: 10_000, rounds: 3 },
    delayConfig: { streams: 4, eventsPerStream: 20 },
    memory: [],
    fairness: [],
    fairnessConfig: { attacksInFlight: 20, rate: 250, connections: 1 },
    warnings: [],
  };
}

function targetRow(md: string): string {
  const row = md.split('\n').find((line) => line.startsWith('| (b) 1 MiB rewrite path |'));
  assert.ok(row, md);
  return row;
}

describe('bench report: a rewrite path that adds no CPU over the pass-through', () => {
  it('reads ∞ and PASS in the targets table, not – and n/a', () => {
    // The gateway below the pass-through in every repetition (RESULTS.md at a927eed: 1 MiB (b) 1,200 against 3,000 µs).
    const row = targetRow(renderMarkdown(results([1200, 1300, 1250], [3000, 3100, 2900])));
    assert.equal(row, '| (b) 1 MiB rewrite path | MB/CPU-s added over pass-through ÷ floor (∞: no CPU added) | ∞ | ≥ 1.00× | PASS |');
  });

  it('gives the median and spread when only some repetitions add no CPU', () => {
    // Added CPU 27,000 µs per 1 MiB answer in one repetition (38.8 MB/CPU-s ÷ the floor's 100 MB/s = 0.39×), none in two: median ∞.
    const row = targetRow(renderMarkdown(results([30000, 1300, 1250], [3000, 3100, 2900])));
    assert.equal(row, '| (b) 1 MiB rewrite path | MB/CPU-s added over pass-through ÷ floor (∞: no CPU added) | ∞ (0.39×–∞) | ≥ 1.00× | PASS~ |');
  });

  it('still reads – and n/a when the figure is missing', () => {
    assert.equal(verdict(spread([NaN, NaN]), 1, 'atLeast'), 'n/a');
    assert.deepEqual(spread([Infinity, NaN, Infinity]), { median: Infinity, min: Infinity, max: Infinity, n: 2 });
    assert.equal(spread([1, Infinity]).median, Infinity);
    assert.equal(spread([1, 3, Infinity]).median, 3);
  });
});
