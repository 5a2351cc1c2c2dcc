/**
 * How busy the machine was with work that is not the bench's: the whole machine's busy CPU
 * time (/proc/stat) minus the CPU of the bench's own processes (this process, its live
 * children, and the children it already reaped: /proc/<pid>/stat utime, stime, cutime,
 * cstime). Another process eating CPU during a run skews every figure; this says whether it
 * happened. Linux only; elsewhere every figure is NaN.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function ticks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { timeout: 5_000, encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU-seconds the whole machine spent busy since boot. */
function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0);
    return busy / ticks();
  } catch {
    return NaN;
  }
}

/** CPU-seconds of a process and of the children it has reaped. */
function processCpuSeconds(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    // Fields from `state` (3rd): utime is the 14th field overall -> index 11 here.
    return (f[11]! + f[12]! + f[13]! + f[14]!) / ticks();
  } catch {
    return 0;
  }
}

export interface CpuMark {
  wallS: number;
  machineS: number;
  benchS: number;
  /** Processes whose CPU is in `benchS` (this one and the live children read). */
  processes: number;
}

/** A reading now; `livePids` are the bench's children still running. */
export function cpuMark(livePids: readonly number[]): CpuMark {
  let bench = processCpuSeconds('self');
  for (const pid of livePids) bench += processCpuSeconds(pid);
  return { wallS: performance.now() / 1000, machineS: machineBusySeconds(), benchS: bench, processes: 1 + livePids.length };
}

/**
 * Clock ticks of error in one difference of readings: the machine's busy time and each
 * process's CPU time are counted in whole ticks (`CLK_TCK`, 10 ms here), each field on its
 * own, so machine minus processes between two readings can be off by a few ticks per counter
 * read: {@link MACHINE_ERROR_TICKS} for /proc/stat, {@link PROCESS_ERROR_TICKS} for each process.
 */
const MACHINE_ERROR_TICKS = 2;
const PROCESS_ERROR_TICKS = 2;

/**
 * Average number of cores other processes kept busy between two readings, at least: the
 * difference less what the tick counters' rounding can make of nothing ({@link
 * MACHINE_ERROR_TICKS}, {@link PROCESS_ERROR_TICKS}). Why: with seven processes read, a
 * 50 ms run (one round of the SSE flood) could read 0.3-0.7 cores of other load on a quiet
 * machine, and every flood round of a full run was run again for it (50 re-runs, every flood
 * row flagged disturbed, in the full run of 2026-12-04). On a run of several seconds the
 * allowance is a few hundredths of a core.
 */
export function foreignCores(a: CpuMark, b: CpuMark): number {
  const wall = b.wallS - a.wallS;
  if (!(wall > 0)) return NaN;
  const errorS = (MACHINE_ERROR_TICKS + PROCESS_ERROR_TICKS * Math.max(a.processes, b.processes)) / ticks();
  return Math.max(0, b.machineS - a.machineS - (b.benchS - a.benchS) - errorS) / wall;
}
