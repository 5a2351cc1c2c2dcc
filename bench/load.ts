/**
 * Closed-loop HTTP load with autocannon, bounded in count (`amount`) AND time (`durationMs`:
 * the bench stops autocannon itself, since autocannon ignores `duration` when `amount` is
 * set). Latencies are taken from autocannon's per-response event (floating-point ms from
 * hrtime), not its integer-ms histogram, so sub-millisecond p50s stay readable.
 */
import autocannon from 'autocannon';
import { withTimeout } from './children.js';
import { percentile } from './stats.js';

export interface LoadOptions {
  url: string;
  body: string;
  headers: Readonly<Record<string, string>>;
  connections: number;
  /** Upper bound on requests. */
  amount: number;
  /** Upper bound on time. */
  durationMs: number;
  /** Requests per second over all connections (open-ish loop for latency runs); unset: as fast as possible. */
  overallRate?: number;
}

export interface LoadResult {
  /** 2xx responses. */
  ok: number;
  non2xx: number;
  errors: number;
  /** 2xx responses per second, over the time from the start to the last response. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  elapsedMs: number;
  /** Every 2xx response's latency, ms (in arrival order): slices of one run are merged before taking percentiles. */
  latenciesMs: number[];
  /** Smallest and largest response (headers + body) seen, bytes: a local error shows up as a size change. */
  minBytes: number;
  maxBytes: number;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let minBytes = Infinity;
  let maxBytes = 0;
  let last = 0;
  const amount = Math.max(opts.amount, opts.connections);
  const start = performance.now();
  const instance = autocannon({
    url: opts.url,
    method: 'POST',
    headers: { ...opts.headers },
    body: opts.body,
    connections: opts.connections,
    amount,
    timeout: 30,
    sampleInt: 25,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  instance.on('response', (_client, status, resBytes, responseTime) => {
    last = performance.now();
    if (status >= 200 && status < 300) {
      ok++;
      latencies.push(responseTime);
    } else {
      non2xx++;
    }
    if (resBytes < minBytes) minBytes = resBytes;
    if (resBytes > maxBytes) maxBytes = resBytes;
  });
  instance.on('reqError', () => {
    errors++;
  });
  const stopTimer = setTimeout(() => instance.stop(), opts.durationMs);
  try {
    await withTimeout(new Promise<void>((resolve) => instance.on('done', () => resolve())), opts.durationMs + 35_000, `load ${opts.url}`);
  } catch (err) {
    instance.stop();
    throw err;
  } finally {
    clearTimeout(stopTimer);
  }
  const elapsedMs = (last || performance.now()) - start;
  return {
    ok,
    non2xx,
    errors,
    rps: elapsedMs > 0 ? (ok * 1000) / elapsedMs : NaN,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    elapsedMs,
    latenciesMs: latencies,
    minBytes: minBytes === Infinity ? 0 : minBytes,
    maxBytes,
  };
}
