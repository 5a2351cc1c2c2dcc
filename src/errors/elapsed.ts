/**
 * `observed_ms` of a time bound that fired (deadline_exceeded, sse_deadline, sse_idle,
 * host_not_reading): the elapsed milliseconds, rounded, never reported under `limitMs`. A
 * Node timer fires on the event loop's cached clock, which can lag `performance.now()` and
 * `Date.now()` by up to a millisecond: measured, an sse_idle of 200 ms read 199.x.
 */
export function observedMs(elapsed: number, limitMs: number): number {
  return Math.max(limitMs, Math.round(elapsed));
}
