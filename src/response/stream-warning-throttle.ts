/**
 * The throttle of one kind of warning on one SSE stream, whatever it warns about (the events
 * dropped from a stream that answers no request: sse-drop-log.ts; the event ids that could not
 * become resume tokens: sse-id-token-log.ts):
 *
 * - the stream's first occurrence is written at once (`first`);
 * - every later one is only counted, by key; {@link WARNING_SUMMARY_INTERVAL_MS} after the
 *   first one not yet written, one summary says how many came since the previous line
 *   (`summary`, `streamEnded` false);
 * - when the stream ends ({@link StreamWarningThrottle.end}), those not yet written get a last
 *   summary (`streamEnded` true); none when every one was written already.
 *
 * So a stream writes at most 2 such lines plus one per interval, however many times its
 * seller makes the warning due, and the sum of the summaries' counts plus one is the number
 * of occurrences. The caller keeps the exact totals (on the exchange, for its line).
 *
 * Reported failures: one warning line per event, unthrottled, filled the 16 MiB log buffer
 * (observability/log-destination.ts) and lost lines, the stream's own exchange line among
 * them, and other agents' (a new user's trial 9, F5: the drop warnings,
 * test/regressions/get-stream-drop-warnings-flood-log.test.ts; a hostile new user's trial 10,
 * F2: the warning for an event id that cannot become a token,
 * test/regressions/untokenizable-id-warning-flood-log.test.ts).
 */

/** At most one summary line per stream per this many ms (the first occurrence's line and the end's aside). */
export const WARNING_SUMMARY_INTERVAL_MS = 10_000;

/** Counts by key (snake_case: a drop reason, or one fixed key). */
export type WarningCounts = Record<string, number>;

/** How one kind of warning is written. */
export interface ThrottledWarningLines {
  /** The stream's first occurrence: its key and its observed bytes when known. */
  first(key: string, observedBytes: number | undefined): void;
  /**
   * The occurrences since the previous line: `counts` by key (at least one), the largest
   * observed bytes among them (`null` when none had any), and whether the stream is over.
   */
  summary(counts: WarningCounts, maxObservedBytes: number | null, streamEnded: boolean): void;
}

/** One stream's throttle of one kind of warning (module doc). Made at the stream's first occurrence. */
export class StreamWarningThrottle {
  /** Occurrences not yet in a line, by key; undefined when there are none. */
  private pending: WarningCounts | undefined;
  /** The largest observed bytes among the pending occurrences (-1: none had any). */
  private pendingMaxBytes = -1;
  private timer: NodeJS.Timeout | undefined;
  private written = false;

  constructor(
    private readonly lines: ThrottledWarningLines,
    private readonly intervalMs: number = WARNING_SUMMARY_INTERVAL_MS,
  ) {}

  /** Counts one occurrence (its key, its observed bytes when known); writes it if it is the stream's first. */
  count(key: string, observedBytes: number | undefined): void {
    if (!this.written) {
      this.written = true;
      this.lines.first(key, observedBytes);
      return;
    }
    const pending = (this.pending ??= {});
    pending[key] = (pending[key] ?? 0) + 1;
    if (observedBytes !== undefined && observedBytes > this.pendingMaxBytes) this.pendingMaxBytes = observedBytes;
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.summarize(false);
      }, this.intervalMs);
      // A pending summary never holds the process open; the stream's end writes it anyway.
      this.timer.unref();
    }
  }

  /** The stream is over: the occurrences not yet written get their summary now. Idempotent. */
  end(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.summarize(true);
  }

  private summarize(streamEnded: boolean): void {
    const counts = this.pending;
    if (counts === undefined) return;
    const maxBytes = this.pendingMaxBytes;
    this.pending = undefined;
    this.pendingMaxBytes = -1;
    this.lines.summary(counts, maxBytes < 0 ? null : maxBytes, streamEnded);
  }
}
