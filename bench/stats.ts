/**
 * Small statistics helpers for the bench: medians, percentiles, spreads, per-repetition
 * ratios. Pure functions, no I/O.
 */

/**
 * Sorted copy (ascending), NaN (a missing figure) dropped. ±Infinity is kept: a rewrite path
 * that adds no CPU over the pass-through measures Infinity MB per CPU-second added
 * (report.ts gatewayMbps), a pass, which dropping it turned into `n/a` (bench/RESULTS.md at
 * a927eed and the full run at b3856ad: every (b)/(c) 1 and 4 MiB row read `–`, `n/a`).
 */
export function sorted(values: readonly number[]): number[] {
  return values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
}

/**
 * Percentile by linear interpolation between closest ranks (`p` in 0..100), or NaN for an
 * empty list. `percentile(xs, 50)` is the median.
 */
export function percentile(values: readonly number[], p: number): number {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  if (s.length === 1) return s[0]!;
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  // Equal neighbours (Infinity and Infinity included: their difference is NaN) need no interpolation.
  if (s[lo] === s[hi]) return s[lo]!;
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function max(values: readonly number[]): number {
  const s = sorted(values);
  return s.length === 0 ? NaN : s[s.length - 1]!;
}

export function min(values: readonly number[]): number {
  const s = sorted(values);
  return s.length === 0 ? NaN : s[0]!;
}

/** A figure over repetitions: median and min–max. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Number of finite samples. */
  n: number;
}

export function spread(values: readonly number[]): Spread {
  const s = sorted(values);
  return { median: median(s), min: min(s), max: max(s), n: s.length };
}

/** Element-wise ratio a[i] / b[i] (the same repetition), NaN where either is missing or b is 0. */
export function ratios(a: readonly (number | undefined)[], b: readonly (number | undefined)[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    // x may be Infinity (report.ts gatewayMbps: no CPU added), giving Infinity.
    out.push(x === undefined || y === undefined || Number.isNaN(x) || !Number.isFinite(y) || y === 0 ? NaN : x / y);
  }
  return out;
}

/** Element-wise difference a[i] - b[i]. */
export function differences(a: readonly (number | undefined)[], b: readonly (number | undefined)[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    out.push(x === undefined || y === undefined ? NaN : x - y);
  }
  return out;
}

/**
 * Verdict of a target over repetitions. `PASS` / `FAIL` is decided on the median; a `~`
 * suffix says the min–max spread crosses the threshold (some repetitions disagree: treat
 * the verdict as noise-level).
 */
export function verdict(s: Spread, threshold: number, direction: 'atLeast' | 'atMost'): string {
  if (Number.isNaN(s.median)) return 'n/a';
  const ok = (v: number): boolean => (direction === 'atLeast' ? v >= threshold : v <= threshold);
  const base = ok(s.median) ? 'PASS' : 'FAIL';
  const crosses = ok(s.min) !== ok(s.max);
  return crosses ? `${base}~` : base;
}
