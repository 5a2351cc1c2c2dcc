/**
 * `observed_ms` of a time bound that fired (deadline_exceeded, sse_idle): the milliseconds
 * since `from` (a `performance.now()` reading), never reported under `limitMs`. A Node timer
 * fires on the event loop's cached clock, which can lag `performance.now()` by up to a
 * millisecond: measured, an sse_idle of 200 ms read 199.x.
 */
export function elapsedMs(from: number, limitMs: number): number {
  return Math.max(limitMs, Math.round(performance.now() - from));
}
