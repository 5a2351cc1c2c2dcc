/**
 * A `Last-Event-ID` resume of a stream whose `sse_deadline_ms` has already run out: answered
 * `sse_deadline` at once (routing/handler.ts), the seller not contacted.
 *
 * The deadline runs from the stream's first start, across resumes (the start rides in the
 * token: resume/token.ts `streamStartedAt`), and only the SSE stage checked it
 * (response/sse-stream-timers.ts), once a seller's answer to the resume had started: a resume
 * past it sent the seller a GET with `Last-Event-ID`, and only then did the host get
 * `sse_deadline` (review 35, F3:
 * test/regressions/resume-past-deadline-contacts-seller.test.ts). Only a stream with the
 * deadline from its start is concerned (a request's, a batch's, a POSTed notification's or
 * response's: exchange.ts hasCumulativeBound); the standalone GET stream and long-lived
 * streams have none, and their resumes are sent as before.
 *
 * The error is the one the stage's timer makes (`limit_ms`, `observed_ms` from the same
 * clock, Date.now(), and rounding, errors/elapsed.ts), written as any local error before
 * anything was sent on a resume (errors/local-reply.ts answerWithLocalError: HTTP 200 and one
 * SSE event for the request's id, one per request a batch's token still awaits; HTTP 504, id
 * null, where none is awaited).
 */
import { observedMs } from '../errors/elapsed.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import { hasCumulativeBound, type Exchange } from '../exchange.js';

/**
 * The `sse_deadline` error for `exchange`, a resumed stream (its `stream.resumeFrom` set)
 * whose deadline has run out at `now` (Unix ms); undefined for any other exchange.
 * Run out: at or past `startedAt + sse_deadline_ms`, when the stage's timer would fire at once.
 */
export function resumedPastDeadline(exchange: Exchange, now: number = Date.now()): LocalErrorInput | undefined {
  if (exchange.stream.resumeFrom === undefined || !hasCumulativeBound(exchange.rpc)) return undefined;
  const limitMs = exchange.limits.sse_deadline_ms;
  const elapsed = now - exchange.stream.startedAt;
  if (elapsed < limitMs) return undefined;
  return { reason: 'sse_deadline', limitMs, observedMs: observedMs(elapsed, limitMs) };
}
