/**
 * The warnings for the events dropped from one stream that answers no request (the standalone
 * GET stream, a POSTed notification's or host response's stream, a long-lived one:
 * sse-stage.ts `drop`), throttled per stream:
 *
 * - the stream's first drop is logged at once, as before: `warn`,
 *   `SSE stream: event dropped`, `{ agent, reason, observed_bytes }`;
 * - every later drop is only counted, by reason; {@link DROP_SUMMARY_INTERVAL_MS} after the
 *   first drop not yet logged, one summary line says how many were dropped since the
 *   previous line: `warn`, `SSE stream: events dropped`,
 *   `{ agent, dropped, dropped_total, max_observed_bytes, stream_ended: false }`;
 * - when the stream ends ({@link SseDropLog.end}), the drops not yet logged get a last
 *   summary, `stream_ended: true`; none when every drop was logged already.
 *
 * An SDK's priming event replayed (data exactly `{}`, `message_without_kind`: the caller says
 * so, `quiet`) is ordinary traffic, not a seller misbehaving: its drops are throttled the same
 * way on their own, with the same lines at `debug` (a stream's first such drop has its own
 * debug line; a later drop of another kind still gets its warn line). Reported (a hostile
 * trial 47, F2): the MCP TypeScript SDK's InMemoryEventStore replays its priming event after
 * real events on a resume, and each such resume wrote a warning
 * (test/regressions/sdk-priming-event-replayed-warns.test.ts).
 *
 * `dropped`: counts by reason since the previous drop line of the stream (`{"get_stream_response":
 * 4999}`); `dropped_total`: counts by reason over the whole stream so far, the first drop
 * included; `max_observed_bytes`: the largest `observed_bytes` among the drops `dropped`
 * counts (`null` when none had one). So a stream writes at most 2 lines plus one per interval
 * however many events its seller makes it drop (at each level, when some are `quiet`: above),
 * and the sum of `dropped` over its summaries plus its first-drop lines is its drop count. The totals also go on the exchange (`Exchange.eventsDropped`:
 * the exchange line's `events_dropped`). The metric
 * `adcp_gateway_sse_events_dropped_total{agent,reason}` still counts every drop (the caller's
 * hook), so it is exact at any moment, where the log is at most one interval behind.
 *
 * Reported failure (a new user's trial 9, F5): one warning line per drop, unthrottled: a seller
 * sending 200,000 tiny responses (21 bytes each) on the GET stream made the gateway write
 * ~186 bytes of log per event (~17 MB), faster than stdout drained, so the 16 MiB log buffer
 * (observability/log-destination.ts) filled and lines were lost, the stream's own `exchange`
 * line among them; each drop cost ~45 µs, mostly its line
 * (test/regressions/get-stream-drop-warnings-flood-log.test.ts). The throttle is
 * stream-warning-throttle.ts, shared with the warnings for event ids that cannot become
 * resume tokens (sse-id-token-log.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../exchange.js';
import { StreamWarningThrottle, WARNING_SUMMARY_INTERVAL_MS, type WarningCounts } from './stream-warning-throttle.js';

/** At most one summary line per stream per this many ms (the first drop's line and the end's aside). */
export const DROP_SUMMARY_INTERVAL_MS = WARNING_SUMMARY_INTERVAL_MS;

/** The line of a stream's first drop. */
export const FIRST_DROP_MSG = 'SSE stream: event dropped';
/** A summary line of the drops since the previous line. */
export const DROP_SUMMARY_MSG = 'SSE stream: events dropped';

/** Drop counts by reason (snake_case reasons: errors/codes.ts REASONS, DROP_REASONS). */
export type DropCounts = WarningCounts;

/** The drop warnings of one stream (module doc). Made at the stream's first drop. */
export class SseDropLog {
  private readonly throttle: StreamWarningThrottle;
  /** The drops of SDK priming events (`quiet`), logged at debug; made at the first. */
  private quietThrottle: StreamWarningThrottle | undefined;

  constructor(
    private readonly exchange: Exchange,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs: number = DROP_SUMMARY_INTERVAL_MS,
  ) {
    this.throttle = this.throttleAt('warn');
  }

  /**
   * Counts one dropped event (its reason, its observed bytes when known); logs it if it is the
   * stream's first (of its level: `quiet`, an SDK's priming event, at debug; module doc).
   */
  drop(reason: string, observedBytes: number | undefined, quiet = false): void {
    const totals = (this.exchange.eventsDropped ??= {});
    totals[reason] = (totals[reason] ?? 0) + 1;
    (quiet ? (this.quietThrottle ??= this.throttleAt('debug')) : this.throttle).count(reason, observedBytes);
  }

  /** The stream is over: the drops not yet logged get their summary now. Idempotent. */
  end(): void {
    this.throttle.end();
    this.quietThrottle?.end();
  }

  private throttleAt(level: 'warn' | 'debug'): StreamWarningThrottle {
    const { exchange, log } = this;
    const agent = exchange.agent.name;
    return new StreamWarningThrottle(
      {
        first: (reason, observedBytes) => log[level]({ agent, reason, observed_bytes: observedBytes }, FIRST_DROP_MSG),
        summary: (dropped, maxObservedBytes, streamEnded) =>
          log[level](
            { agent, dropped, dropped_total: { ...exchange.eventsDropped }, max_observed_bytes: maxObservedBytes, stream_ended: streamEnded },
            DROP_SUMMARY_MSG,
          ),
      },
      this.intervalMs,
    );
  }
}
