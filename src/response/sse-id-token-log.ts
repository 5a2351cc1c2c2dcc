/**
 * The warnings for the seller event ids of one SSE stream that could not be turned into resume
 * tokens (sse-event-ids.ts `hostEventId`: an id a Last-Event-ID header cannot carry back, such as
 * `\x01` or a non-ASCII one, or a token that would be over 4096 characters), throttled per
 * stream as the drop warnings are (stream-warning-throttle.ts, the same throttle):
 *
 * - the stream's first such id is logged at once, as before: `warn`,
 *   `SSE event id could not be turned into a resume token: <what>` (`forwarded without an id`,
 *   or `id-only block dropped` for a pending id at the stream's end), `{ agent }`;
 * - every later one is only counted; {@link WARNING_SUMMARY_INTERVAL_MS} after the first one
 *   not yet logged, one summary: `warn`, {@link IDS_NOT_TOKENIZED_SUMMARY_MSG},
 *   `{ agent, not_tokenized, not_tokenized_total, stream_ended: false }` (`not_tokenized`:
 *   how many since the previous line; `not_tokenized_total`: over the stream so far, the first
 *   included);
 * - when the stream ends ({@link SseIdTokenLog.end}), those not yet logged get a last summary,
 *   `stream_ended: true`; none when every one was logged already.
 *
 * The exact total goes on the exchange (`Exchange.eventIdsNotTokenized`: the exchange line's
 * `event_ids_not_tokenized`); the metric `adcp_gateway_sse_event_ids_not_tokenized_total{agent}`
 * counts every one as it comes (the caller's hook).
 *
 * Reported failure (a hostile new user's trial 10, F2): one warning line per such event,
 * unthrottled: a seller's 11-byte events (`id:\x01`, `data`, a blank line) on the standalone
 * GET stream each made a 176-byte line; 300,000 of them filled the 16 MiB log buffer
 * (observability/log-destination.ts) and lines were lost, that stream's exchange line and 8 of
 * another agent's 10 among them
 * (test/regressions/untokenizable-id-warning-flood-log.test.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Exchange } from '../exchange.js';
import { StreamWarningThrottle, WARNING_SUMMARY_INTERVAL_MS } from './stream-warning-throttle.js';

/** The first line's message, before what happened to the event (`forwarded without an id`...). */
export const FIRST_ID_NOT_TOKENIZED_MSG = 'SSE event id could not be turned into a resume token: ';
/** A summary line of the ids not turned into tokens since the previous line. */
export const IDS_NOT_TOKENIZED_SUMMARY_MSG = 'SSE event ids could not be turned into resume tokens';

/** The untokenizable-id warnings of one stream (module doc). Made at the stream's first such id. */
export class SseIdTokenLog {
  private readonly throttle: StreamWarningThrottle;

  constructor(
    private readonly exchange: Exchange,
    log: FastifyBaseLogger,
    intervalMs: number = WARNING_SUMMARY_INTERVAL_MS,
  ) {
    const agent = exchange.agent.name;
    this.throttle = new StreamWarningThrottle(
      {
        first: (what) => log.warn({ agent }, FIRST_ID_NOT_TOKENIZED_MSG + what),
        summary: (counts, _maxObservedBytes, streamEnded) => {
          let since = 0;
          for (const n of Object.values(counts)) since += n;
          log.warn({ agent, not_tokenized: since, not_tokenized_total: exchange.eventIdsNotTokenized, stream_ended: streamEnded }, IDS_NOT_TOKENIZED_SUMMARY_MSG);
        },
      },
      intervalMs,
    );
  }

  /** Counts one seller id not turned into a token (`what`: what happened to its event); logs it if it is the stream's first. */
  notTokenized(what: string): void {
    this.exchange.eventIdsNotTokenized = (this.exchange.eventIdsNotTokenized ?? 0) + 1;
    this.throttle.count(what, undefined);
  }

  /** The stream is over: the ids not yet logged get their summary now. Idempotent. */
  end(): void {
    this.throttle.end();
  }
}
