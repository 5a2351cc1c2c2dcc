/**
 * The open SSE streams during a graceful shutdown (src/cli.ts installShutdown). The gateway is
 * usually a sidecar restarted on the same port: until the old process exits there is nowhere
 * for a host's client to reconnect to (a reconnect meets 503 `draining`, or a refused
 * connection), so no stream is ended while the process still has to wait for something else:
 *
 * 1. While `shutdown_grace_ms` runs and a request (or a batch) is in flight, every stream is
 *    left running (`endStreams('grace')`): a request's stream, resumable or not, so the
 *    seller's answer reaches the host on this process, as a JSON answer does; a stream
 *    answering no request (the standalone GET stream, a long-lived one, a POSTed
 *    notification's), so its client does not reconnect into `draining`.
 * 2. Once no request is in flight (`requestsInFlight` 0: at the signal, when the last one
 *    ends, or at a sweep), the streams answering no request end plainly
 *    (`endStreams('no_requests')`), so the process exits and the client's reconnect goes to
 *    the successor; ended after the signal, one line, `nothing in flight: ending the SSE
 *    streams that answer no request`, says how many. With only such streams open at the
 *    signal, the process exits at once, as before.
 * 3. {@link shutdownAnswerMarginMs} before the grace runs out, every stream still open ends
 *    (`endStreams('final')`): a request's stream that can be resumed (a configured secret, an
 *    event id sent) plainly (outcome `resumable_end`: its client resumes on the successor with
 *    its token), one that cannot with one final event, `gateway_shutdown` for its id, the
 *    others plainly; one line, `shutdown_grace_ms nearly over: ending the SSE streams still
 *    open`, says how many. A stream that starts after that is ended by the next sweep.
 *
 * Every stream ended plainly gets a `retry:` field just before its end, the config's
 * `shutdown_sse_retry_ms` (app.ts `endStreams`, response/shutdown-retry.ts): its client waits
 * that long before it reconnects, to the successor. And each call's stream ended for its client
 * to resume (outcome `resumable_end`) is listed at warn, `shutdown: SSE calls ended for their
 * clients to resume on a successor` (`calls`: agent, tool,
 * rpc_id: the fields of its `exchange` line; `retry_ms`): from then on the call is its client's
 * to resume, which this process cannot see; the successor's `exchange` line for the resume (a
 * GET, the same rpc_id) says it came. Before, nothing in the old log said a call had been
 * handed over, and a client that gave up before the successor listened lost it without a trace
 * (a hostile operator's trial 53, F1:
 * test/regressions/slow-restart-leaves-resumable-sse-call-hanging.test.ts).
 *
 * The streams are looked at again every {@link SHUTDOWN_SWEEP_MS} (streams that started after
 * the signal) and just after each exchange ends.
 * A stream that starts after the signal knows the shutdown from its start all the same
 * (routing/draining.ts DrainState.tokensOutlive, set by the first `endStreams`): a seller
 * that sends its head, an event id and its end in one packet ends it before any sweep, and
 * without a configured secret its request is then answered `gateway_shutdown`, never ended
 * plainly into a token no process verifies (review 34, item 1:
 * test/regressions/stream-started-after-signal-ends-into-dead-token.test.ts).
 *
 * Why the margin, min(1000 ms, half the grace): the final event has to be written to the
 * host's socket, its `exchange` line logged and its connection closed before the forced exit
 * (which cuts whatever is still open, with no answer). On an idle machine that takes
 * milliseconds; 1 s covers an event loop held back by a busy machine, a collection, or many
 * streams answered in one turn, and a host reading its last bytes; a short grace keeps half of
 * itself for the seller to answer. A grace of 1 ms (the smallest) ends them all at the signal.
 *
 * Reported failures: a hostile trial 47, F1 (every request's stream that could not be resumed
 * was answered `gateway_shutdown` at the signal, although its seller would have answered
 * within the grace: test/regressions/shutdown-answers-unresumable-sse-call-at-once.test.ts); a
 * hostile operator's trial 49, finding 1 (with a configured secret, a request's stream that
 * had sent an event id ended at the signal; the SDK client's resume met `draining`, then a
 * refused connection, and it gave up, the call unanswered though the seller answered 0.7 s
 * after the signal: test/regressions/restart-with-secret-loses-answered-sse-call.test.ts) and
 * finding 2 (the standalone GET stream ended at the signal; its client reconnected into
 * `draining` and gave up for good:
 * test/regressions/drain-ends-get-stream-into-draining-refusals.test.ts).
 */
import type { Logger } from 'pino';
import type { GatewayControl } from './app.js';
import { isRequestStream, type Exchange } from './exchange.js';
import { MAX_LISTED_NAMES } from './observability/listed-names.js';
import { exchangeLogFields } from './observability/logger.js';
import type { SseShutdownPhase } from './response/pipeline.js';
import { shutdownRetryMs } from './response/shutdown-retry.js';

/** How often open SSE streams are looked at again while shutting down (streams that started after the signal, or became resumable). */
export const SHUTDOWN_SWEEP_MS = 50;

/** The longest margin before the grace's end at which the streams still open are answered (module doc). */
export const SHUTDOWN_ANSWER_MARGIN_MAX_MS = 1_000;

/** How long before `graceMs` runs out the streams still open are ended: min(1000 ms, half the grace, rounded up). */
export function shutdownAnswerMarginMs(graceMs: number): number {
  return Math.min(SHUTDOWN_ANSWER_MARGIN_MAX_MS, Math.ceil(graceMs / 2));
}

export interface ShutdownStreams {
  /** Streams ended at the signal. */
  readonly ended: number;
  /** Streams left open at the signal (all of them while a request is in flight). */
  readonly finishing: number;
  /** Ends every stream still open now (before a forced exit); returns how many. */
  endAll(): number;
  /** Stops the sweep and the timer (the close is over, or the process exits). */
  stop(): void;
}

/** Starts the phases (module doc) for a shutdown with `graceMs`. */
export function endStreamsForShutdown(
  gateway: Pick<GatewayControl, 'openStreams' | 'endStreams' | 'requestsInFlight' | 'onExchangeEnd'>,
  logger: Logger,
  graceMs: number,
): ShutdownStreams {
  const marginMs = shutdownAnswerMarginMs(graceMs);
  const answerInMs = graceMs - marginMs;
  let final = answerInMs <= 0;
  let stopped = false;
  const phase = (): SseShutdownPhase => (final ? 'final' : gateway.requestsInFlight === 0 ? 'no_requests' : 'grace');
  /** Ends the streams `phase` ends, then lists at warn the calls' streams it ended for their clients to resume (module doc). */
  const endStreams = (now: SseShutdownPhase): number => {
    const resumable: Exchange[] = [];
    let retryMs = 0;
    const n = gateway.endStreams(now, (exchange, configuredMs) => {
      if (exchange.outcome !== 'resumable_end' || !isRequestStream(exchange.rpc)) return;
      resumable.push(exchange);
      retryMs = shutdownRetryMs(configuredMs, exchange.sseRetryMaxMs) ?? 0;
    });
    if (resumable.length > 0) {
      const calls = resumable.slice(0, MAX_LISTED_NAMES).map((exchange) => {
        const { agent, tool, rpc_id } = exchangeLogFields(exchange, null, 'POST');
        return { agent, tool, rpc_id };
      });
      const more = resumable.length > MAX_LISTED_NAMES ? { calls_more: resumable.length - MAX_LISTED_NAMES } : {};
      logger.warn({ calls, ...more, retry_ms: retryMs }, 'shutdown: SSE calls ended for their clients to resume on a successor');
    }
    return n;
  };
  /** A later look (a sweep, an exchange's end): streams ended then are logged. */
  const look = (): void => {
    if (stopped) return;
    const now = phase();
    const n = endStreams(now);
    if (n > 0 && now === 'no_requests') logger.info({ sse_streams_ended: n }, 'nothing in flight: ending the SSE streams that answer no request');
  };
  const open = gateway.openStreams;
  const ended = endStreams(phase());
  const sweep = setInterval(look, SHUTDOWN_SWEEP_MS);
  sweep.unref();
  // The last request's end: its streams answering no request end at once, not at the next sweep.
  gateway.onExchangeEnd(() => {
    if (!stopped) setImmediate(look);
  });
  const answer = final
    ? undefined
    : setTimeout(() => {
        final = true;
        const n = endStreams('final');
        if (n > 0) logger.info({ grace_ms: graceMs, margin_ms: marginMs, sse_streams_ended: n }, 'shutdown_grace_ms nearly over: ending the SSE streams still open');
      }, answerInMs);
  answer?.unref();
  return {
    ended,
    finishing: open - ended,
    endAll() {
      final = true;
      return endStreams('final');
    },
    stop() {
      stopped = true;
      clearInterval(sweep);
      clearTimeout(answer);
    },
  };
}
