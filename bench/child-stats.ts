/**
 * The child side of the bench's IPC: every server child (seller, pass-through, gateway)
 * calls `serveChild` once it listens. It then
 * - reports `{ type: 'ready', port }` to the parent;
 * - answers `{ type: 'stats', seq, reset }` with its CPU time (`process.cpuUsage()`), its
 *   current and peak RSS, JS heap and Buffer memory since the last reset (sampled every
 *   10 ms; the RSS peak also from the kernel's VmHWM, reset through /proc/self/clear_refs
 *   where the kernel allows it, so a peak between two samples is not missed);
 * - on `{ type: 'shutdown' }` runs `close`, then exits 0 (so `--cpu-prof` writes its profile).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';

export interface ChildStats {
  type: 'stats';
  seq: number;
  /** Microseconds of CPU (user + system) since the process started. */
  cpuUs: number;
  rssBytes: number;
  /** Peak RSS since the last reset (max of the 10 ms samples and VmHWM when resettable). */
  peakRssBytes: number;
  /** Whether VmHWM could be reset, i.e. the peak is the kernel's exact high-water mark. */
  exactPeak: boolean;
  heapUsedBytes: number;
  peakHeapUsedBytes: number;
  arrayBuffersBytes: number;
  peakArrayBuffersBytes: number;
  /**
   * Mark-compacts (V8 major GCs, `perf_hooks` gc entries of kind major) since the process
   * started. Why (2026-12-01, `--trace-gc` on the SSE flood): V8 starts them on external
   * memory pressure (the ArrayBuffers of socket reads), and whether a process falls into that
   * regime varies from run to run: in two consecutive flood runs the pass-through made 4 and
   * then 24 of them, the gateway 1 and 1, and events/s moved from 0.82x to 1.06x with it.
   */
  majorGcs: number;
}

export type ParentMessage = { type: 'stats'; seq: number; reset: boolean } | { type: 'shutdown' };
export type ChildMessage = { type: 'ready'; port: number } | ChildStats | { type: 'error'; message: string };

const SAMPLE_MS = 10;

/**
 * Env var naming the directory a server child writes its allocation profile to
 * (`ALLOC.<pid>.heapprofile`, bench/run.ts `--alloc-prof`): V8's sampling heap profiler with
 * the objects minor and major GCs collected included, so the profile says where the process
 * allocated, not only what it still holds at the end. Summarize it with
 * `node --import tsx bench/profile-summary.ts FILE.heapprofile`; Chrome DevTools (Memory tab)
 * opens it too.
 */
export const ALLOC_PROFILE_DIR_ENV = 'BENCH_ALLOC_PROFILE_DIR';
/** Mean bytes between two samples (V8's default is 32 KiB: too coarse for a 1 KiB request). */
const ALLOC_SAMPLING_INTERVAL_BYTES = 4096;

/** Starts sampling allocations when the env asks; returns what writes the profile (at shutdown). */
function startAllocationProfile(): (() => Promise<void>) | undefined {
  const dir = process.env[ALLOC_PROFILE_DIR_ENV];
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params: object = {}): Promise<T> =>
    new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))));
  const started = post('HeapProfiler.enable').then(() =>
    post('HeapProfiler.startSampling', { samplingInterval: ALLOC_SAMPLING_INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
  );
  return async () => {
    await started;
    const { profile } = await post<{ profile: unknown }>('HeapProfiler.stopSampling');
    writeFileSync(join(dir, `ALLOC.${process.pid}.heapprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

function readVmHwmBytes(): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resets VmHWM to the current RSS ("5" in clear_refs, Linux >= 4.0); false where not allowed. */
function resetVmHwm(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

export function serveChild(port: number, close: () => Promise<void>): void {
  if (!process.send) throw new Error('bench child started without an IPC channel');
  let peakRss = 0;
  let peakHeap = 0;
  let peakAb = 0;
  let exact = resetVmHwm();
  const sample = (): NodeJS.MemoryUsage => {
    const m = process.memoryUsage();
    if (m.rss > peakRss) peakRss = m.rss;
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    if (m.arrayBuffers > peakAb) peakAb = m.arrayBuffers;
    return m;
  };
  const writeAllocationProfile = startAllocationProfile();
  let majorGcs = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) majorGcs++;
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();

  process.on('message', (raw: unknown) => {
    const msg = raw as ParentMessage;
    if (msg.type === 'stats') {
      // No forced GC between windows: measured, a `gc()` here made the next run's requests
      // ~3x as costly in CPU (the forced GC evidently discards compiled code), in both the
      // pass-through and the gateway.
      const m = sample();
      const cpu = process.cpuUsage();
      const hwm = exact ? readVmHwmBytes() : undefined;
      const stats: ChildStats = {
        type: 'stats',
        seq: msg.seq,
        cpuUs: cpu.user + cpu.system,
        rssBytes: m.rss,
        peakRssBytes: Math.max(peakRss, hwm ?? 0),
        exactPeak: hwm !== undefined,
        heapUsedBytes: m.heapUsed,
        peakHeapUsedBytes: peakHeap,
        arrayBuffersBytes: m.arrayBuffers,
        peakArrayBuffersBytes: peakAb,
        majorGcs,
      };
      if (msg.reset) {
        exact = resetVmHwm();
        const now = process.memoryUsage();
        peakRss = now.rss;
        peakHeap = now.heapUsed;
        peakAb = now.arrayBuffers;
      }
      process.send!(stats);
    } else if (msg.type === 'shutdown') {
      clearInterval(timer);
      gcObserver.disconnect();
      const exitSoon = setTimeout(() => process.exit(0), 3_000);
      exitSoon.unref();
      const profiled = writeAllocationProfile?.().catch((err: unknown) => process.stderr.write(`allocation profile not written: ${String(err)}\n`));
      Promise.resolve(profiled)
        .then(close)
        .then(
          () => process.exit(0),
          () => process.exit(0),
        );
    }
  });
  // The parent went away: don't linger.
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port } satisfies ChildMessage);
}
