/**
 * The open SSE streams during a graceful shutdown (src/cli.ts installShutdown), in two phases:
 *
 * 1. While `shutdown_grace_ms` runs: at the signal, and every {@link SHUTDOWN_SWEEP_MS} after
 *    (a stream that started meanwhile, or became resumable), the streams that can be resumed
 *    elsewhere (a configured resume secret and an event id sent) and those that answer no
 *    request (the standalone GET stream, a long-lived one, a POSTed notification's) end at
 *    once, as before. A request's (a batch's) stream that cannot be resumed is left running:
 *    if the seller's answer comes, the host gets it as usual, and the process exits once
 *    nothing is in flight (`endStreams(false)`: response/pipeline.ts SseShutdownEnd).
 * 2. {@link shutdownAnswerMarginMs} before the grace runs out, every stream still open ends
 *    (`endStreams(true)`): such a request's stream with one final event, `gateway_shutdown`
 *    for its id, and one line, `shutdown_grace_ms nearly over: ...`, says how many. A stream
 *    that starts after that is ended by the next sweep the same way.
 *
 * Why the margin, min(1000 ms, half the grace): the final event has to be written to the
 * host's socket, its `exchange` line logged and its connection closed before the forced exit
 * (which cuts whatever is still open, with no answer). On an idle machine that takes
 * milliseconds; 1 s covers an event loop held back by a busy machine, a collection, or many
 * streams answered in one turn, and a host reading its last bytes; a short grace keeps half of
 * itself for the seller to answer. A grace of 1 ms (the smallest) ends them all at the signal.
 *
 * Reported failure (a hostile trial 47, F1): every request's stream that could not be resumed
 * was answered `gateway_shutdown` at the signal, although its seller would have answered
 * within the grace, as a JSON answer does
 * (test/regressions/shutdown-answers-unresumable-sse-call-at-once.test.ts).
 */
import type { Logger } from 'pino';
import type { GatewayControl } from './app.js';

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
  /** Streams left to finish within the grace (requests' streams that cannot be resumed). */
  readonly finishing: number;
  /** Ends every stream still open now (before a forced exit); returns how many. */
  endAll(): number;
  /** Stops the sweep and the timer (the close is over, or the process exits). */
  stop(): void;
}

/** Starts the two phases (module doc) for a shutdown with `graceMs`. */
export function endStreamsForShutdown(gateway: Pick<GatewayControl, 'openStreams' | 'endStreams'>, logger: Logger, graceMs: number): ShutdownStreams {
  const marginMs = shutdownAnswerMarginMs(graceMs);
  const answerInMs = graceMs - marginMs;
  let final = answerInMs <= 0;
  const open = gateway.openStreams;
  const ended = gateway.endStreams(final);
  const sweep = setInterval(() => gateway.endStreams(final), SHUTDOWN_SWEEP_MS);
  sweep.unref();
  const answer = final
    ? undefined
    : setTimeout(() => {
        final = true;
        const n = gateway.endStreams(true);
        if (n > 0) logger.info({ grace_ms: graceMs, margin_ms: marginMs, sse_streams_ended: n }, 'shutdown_grace_ms nearly over: answering the calls still streaming with gateway_shutdown');
      }, answerInMs);
  answer?.unref();
  return {
    ended,
    finishing: open - ended,
    endAll() {
      final = true;
      return gateway.endStreams(true);
    },
    stop() {
      clearInterval(sweep);
      clearTimeout(answer);
    },
  };
}
