/**
 * The `retry:` field a graceful shutdown writes just before each SSE stream it ends plainly
 * (response/sse-stage.ts `endForShutdown`, errors/local-reply.ts `answerStreamOver`): the
 * config's `shutdown_sse_retry_ms` (default 5000; 0: none), at most the exchange's ceiling for a
 * `retry:` (`sseRetryMaxMs`: half of `resume.ttl_ms`, sse-encode.ts sseRetryCeilingMs), so the
 * host's client resumes with a token that still verifies.
 *
 * Why: a plainly ended stream is the host's client's to reconnect, and at a shutdown there is
 * nothing to reconnect to until the successor listens (a sidecar restarted on the same port
 * listens only after the old process has exited, plus its own start). The MCP TypeScript SDK
 * client (1.x, `StreamableHTTPClientTransport`) reconnects after its backoff, 1000 ms then
 * 1500 ms (`initialReconnectionDelay`, `reconnectionDelayGrowFactor`), and gives up after
 * `maxRetries` (2) failed attempts: a successor listening more than ~2.5 s after the stream's
 * end never got the resume, and the call hung until the client's own timeout (a hostile
 * operator's trial 53, F1: test/regressions/slow-restart-leaves-resumable-sse-call-hanging.test.ts).
 * The SDK client takes a server's `retry:` (eventsource-parser's `onRetry`, SEP-1699) as the
 * delay of every reconnect it makes from then on, so its 2 attempts come `retry` and 2 x `retry`
 * after the end: with 5000, a successor that listens within ~10 s. A browser EventSource waits
 * `retry` before each reconnect too (WHATWG HTML §9.2).
 *
 * The frame is the gateway's own: not charged to the stream's cumulative bound (nothing is
 * read after it; the stream's last token was minted before it), counted in `bytes_to_host`.
 * The config's range for the setting (config/defaults.ts BOUNDS.sseRetry) is the forwarded
 * `retry:` range (sse-encode.ts SSE_RETRY_MIN_MS .. SSE_RETRY_MAX_MS): test/unit/shutdown-retry.test.ts.
 */
import { clampSseRetryMs, encodeSseRetry } from './sse-encode.js';

/**
 * The `retry:` value, in ms, written before a stream a shutdown ends plainly: `configuredMs`
 * (`shutdown_sse_retry_ms`) clamped to [SSE_RETRY_MIN_MS, `maxMs`]; undefined when none is
 * written (`configuredMs` 0 or undefined: not a shutdown's end, a reload's say).
 */
export function shutdownRetryMs(configuredMs: number | undefined, maxMs: number): number | undefined {
  return configuredMs === undefined || configuredMs === 0 ? undefined : clampSseRetryMs(configuredMs, maxMs);
}

/** The frame `retry: <ms>` and its blank line for {@link shutdownRetryMs}; '' when none is written. */
export function shutdownRetryFrame(configuredMs: number | undefined, maxMs: number): string {
  const ms = shutdownRetryMs(configuredMs, maxMs);
  return ms === undefined ? '' : encodeSseRetry(ms);
}
