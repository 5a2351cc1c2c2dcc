/**
 * Exiting once the log lines already written are out, so they reach stdout in the order
 * they were written.
 *
 * The stdout destination writes asynchronously (sonic-boom: log-destination.ts). At
 * `process.exit` its exit flush writes what is still queued synchronously, but not a write
 * already in flight on libuv's thread pool: sonic-boom 5's `flushSync` leaves that one ("only
 * the queued buffers can be written; ordering relative to the in-flight chunk is not
 * guaranteed"), and it may land after the queued lines. A shutdown's forced exit writes the
 * `shutdown_cut` exchange lines, then its own line, in one tick: the first cut line started
 * an async write, the others and the exit's line were queued, and the exit's line was seen
 * before it on stdout, its timestamp later (a new user's trial, on a second signal:
 * test/regressions/shutdown-grace-cut-exchange-logged.test.ts).
 *
 * So the serving gateway exits through `exitAfterLogFlush`: `logger.flush` (the destination
 * writes its queue out, in order, after the write in flight), then `process.exit`. Normally
 * that takes well under a millisecond. A reader that stopped reading could hold it for good,
 * so it waits `EXIT_LOG_FLUSH_WAIT_MS` at most, then exits anyway (the exit flush then
 * retries a stuck reader ~2 s at most, and a write in flight at that moment may still land
 * out of order). A reader that is gone does not hold it: the destination stopped writing and
 * its flush returns at once.
 */
import type { Logger } from 'pino';

/** The longest an exit waits for the log lines already written to be out: 500 ms. */
export const EXIT_LOG_FLUSH_WAIT_MS = 500;

/**
 * Resolves once `logger`'s destination has written out every line written so far (or its
 * flush failed or threw), or after `waitMs` (default `EXIT_LOG_FLUSH_WAIT_MS`), whichever
 * comes first; never rejects, and never before the caller's tick ends (a destination with
 * nothing to flush calls back at once). Its timer is cleared once the flush is done, so it
 * holds the process no longer than the flush.
 *
 * Also what makes a failed start's two lines come in one order (src/cli.ts `serve`): the
 * `could not start` log line on stdout, then the human line on stderr. Before, the stderr
 * line was written while the log line's asynchronous write raced it: first on EADDRINUSE,
 * second with a listen host that does not resolve (a new user's trial, 2026-12-03:
 * test/regressions/startup-failure-lines-order-varies.test.ts).
 */
export function logFlushed(logger: Logger, waitMs: number = EXIT_LOG_FLUSH_WAIT_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    // Not unref'd: a wait cut short by the loop emptying would skip the flush it waits for.
    const timer = setTimeout(resolve, waitMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    try {
      // An error (the destination failed or was destroyed) ends the wait too: the lines are lost either way.
      logger.flush(() => done());
    } catch {
      done();
    }
  });
}

/**
 * Calls `process.exit(code)` once `logger`'s destination has written out every line written
 * so far (or its flush failed), or after `waitMs` (default `EXIT_LOG_FLUSH_WAIT_MS`),
 * whichever comes first ({@link logFlushed}); once. Returns before exiting: the caller must
 * not exit (nor log what should come last) meanwhile.
 */
export function exitAfterLogFlush(logger: Logger, code: number, waitMs: number = EXIT_LOG_FLUSH_WAIT_MS): void {
  void logFlushed(logger, waitMs).then(() => process.exit(code));
}
