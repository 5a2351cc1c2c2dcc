/**
 * Guards so no test can hang: every e2e test passes `{ timeout: TEST_TIMEOUT_MS }` to node:test,
 * and every await on a network operation that could stall goes through `withTimeout`.
 */

/** Per-test budget. Each e2e test finishes in well under a second or two; this is the backstop. */
export const TEST_TIMEOUT_MS = 20_000;

/** Budget for one network operation inside a test (connect, one call, one close). */
export const STEP_TIMEOUT_MS = 10_000;

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * Resolves or rejects like `promise`, or rejects with a `TimeoutError` naming `label` after `ms`.
 * The timer is cleared either way, so it never holds the event loop open.
 */
export async function withTimeout<T>(promise: PromiseLike<T>, ms: number = STEP_TIMEOUT_MS, label = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${label} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
