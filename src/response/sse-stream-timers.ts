/**
 * The SSE stage's clocks (sse-stage.ts; its module doc, Bounds, "time"): the idle timer,
 * `sse_idle_timeout_ms` without a byte from the seller while the stage waits for it ->
 * `sse_idle`, and the deadline, `sse_deadline_ms` over the whole stream (from its first start,
 * across resumes) -> `sse_deadline`; either one running out while the stage waits for the host
 * to drain its response ({@link SseStreamTimers.waitingForHost}) -> `host_not_reading`. What a
 * timeout does to the stream is the stage's (`onTimeout`, given to the constructor: the error
 * answer, or a plain end). Times in ms: performance.now() for the idle time, Date.now() for the
 * deadline (the stream's `startedAt` is wall-clock, from its resume token).
 *
 * Per stream: no timer until the stage first waits ({@link SseStreamTimers.start}), then one
 * idle timer per idle period (not one per chunk: {@link SseStreamTimers.armIdle} only notes
 * the time) and at most one deadline timer. Nothing per event.
 *
 * Reported failures: a host that stopped reading was logged and counted as the seller's
 * `sse_idle` (test/regressions/sse-host-stops-reading-not-seller-idle.test.ts); an idle timer
 * that came due during an event-loop stall blamed a seller that kept sending
 * (test/regressions/sse-idle-after-event-loop-stall.test.ts).
 *
 * The idle time runs only while the seller is the one waited for: not while the gateway waits
 * (for buffer or decoder room: {@link SseStreamTimers.pauseIdle}), and not while the seller
 * waits for the host, a server-to-client request it sent on the stream (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`, ...) awaiting the host's answer
 * ({@link SseStreamTimers.awaitHostAnswer}, routing/host-answer-waits.ts): from the host's
 * answer it runs again from zero. The deadline runs throughout. Hostile trial 57, F3: a tool
 * that asked its host for approval got `sse_idle` when the host took longer than the limit to
 * answer (test/regressions/elicitation-wait-hits-sse-idle.test.ts).
 */
import type { ServerResponse } from 'node:http';
import { observedMs } from '../errors/elapsed.js';
import { boundWhenAwaited } from '../errors/earlier-answers.js';
import type { LocalErrorInput } from '../errors/local-reply.js';
import type { Exchange } from '../exchange.js';

export class SseStreamTimers {
  /**
   * The stage waits for the host to drain its response (the seller is not read meanwhile):
   * idle time then is the host's, not the seller's (`host_not_reading`).
   */
  waitingForHost = false;
  private idleTimer: NodeJS.Timeout | undefined = undefined;
  /**
   * When the stream last made progress (performance.now ms): a byte from the seller, the host
   * draining its response, or the start of a wait for the host. `observed_ms` of sse_idle and
   * of an idle host_not_reading.
   */
  private lastByteAt = performance.now();
  private idleRecheck = false;
  private deadlineTimer: NodeJS.Timeout | undefined = undefined;
  /** {@link start} ran: the timers are made. */
  private on = false;
  /** The gateway waits (for buffer or decoder room) between {@link pauseIdle} and the next {@link armIdle}: no idle time runs. */
  private gatewayWaits = false;
  /** A server-to-client request sent on the stream awaits the host's answer ({@link awaitHostAnswer}): the seller's silence is no idle time. */
  private hostAnswerAwaited = false;
  private readonly limits: Exchange['limits'];

  /**
   * `bounded`: the stream has the deadline from its start (exchange.ts hasCumulativeBound);
   * the others get it only once an answer pipelined behind them waits (`start`).
   * `onTimeout`: what a timeout does to the stream (called at most once per timer firing).
   */
  constructor(
    private readonly exchange: Exchange,
    private readonly raw: ServerResponse,
    private readonly bounded: boolean,
    private readonly onTimeout: (input: LocalErrorInput) => void,
  ) {
    this.limits = exchange.limits;
  }

  /** {@link start} ran. */
  get started(): boolean {
    return this.on;
  }

  /** A byte came, or the host drained, or the gateway's wait ended: the idle time restarts from now (the running timer finds out when it fires). */
  armIdle(): void {
    this.gatewayWaits = false;
    this.restartIdle();
  }

  /** The gateway waits (for buffer or decoder room), not the seller: no idle time runs meanwhile ({@link armIdle} after). */
  pauseIdle(): void {
    this.gatewayWaits = true;
    this.stopIdleTimer();
  }

  /**
   * The seller sent a server-to-client request on the stream and waits for the host's answer:
   * no idle time runs until {@link hostAnswered} (but while the stage waits for the host to
   * drain its response, when the idle time is the host's: `host_not_reading`). Bytes from the
   * seller meanwhile (progress, logging) do not restart it. The deadline runs on.
   */
  awaitHostAnswer(): void {
    this.hostAnswerAwaited = true;
    if (!this.waitingForHost) this.stopIdleTimer();
  }

  /** The host answered every server-to-client request awaited ({@link awaitHostAnswer}): the idle time runs again, from now. */
  hostAnswered(): void {
    this.hostAnswerAwaited = false;
    this.restartIdle();
  }

  /** The idle time counts now: the seller is waited for (or the host, draining), not the gateway's room nor the host's answer. */
  private idleRuns(): boolean {
    return !this.gatewayWaits && (this.waitingForHost || !this.hostAnswerAwaited);
  }

  private restartIdle(): void {
    this.lastByteAt = performance.now();
    if (this.on && this.idleTimer === undefined && this.idleRuns()) this.idleTimer = this.setIdleTimer(this.limits.sse_idle_timeout_ms);
  }

  private stopIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * The timers, made when the stage first waits (for the seller, a drain, the agent guard):
   * they can fire only while it waits, and a one-event answer that arrived whole is over
   * before that, so it makes none (issue 5). The idle timer (from then on restarted at every
   * chunk, as the bytes arrive), and the deadline, at the same instant as if set at the start.
   * Once per stream (the caller checks {@link started}).
   */
  start(): void {
    this.on = true;
    const limits = this.limits;
    const exchange = this.exchange;
    // The idle time still runs from the last byte (or the start): not restarted here. None
    // while a server request awaits the host's answer (awaitHostAnswer: it is set then).
    if (this.idleRuns()) this.idleTimer = this.setIdleTimer(Math.max(0, Math.ceil(limits.sse_idle_timeout_ms - (performance.now() - this.lastByteAt))));
    // sse_deadline_ms runs from the stream's first start, across resumes. Only a bounded
    // stream has a deadline (a request's, a notification's: the cap paired with a deadline):
    // the standalone GET stream and long-lived streams have no natural end (ARCHITECTURE §5);
    // the idle timeout bounds the seller's silence on them. But one that holds an answer
    // pipelined behind it on its connection (a refusal, a call's answer) gets the deadline
    // too, once that answer waits (errors/earlier-answers.ts boundWhenAwaited): at it the
    // stream ends plainly (`onTimeout`), then the answer behind it goes out.
    if (this.bounded) this.deadlineTimer = setTimeout(this.onDeadline, Math.max(0, exchange.stream.startedAt + limits.sse_deadline_ms - Date.now()));
    else {
      boundWhenAwaited(this.raw, () => {
        if (exchange.finished || this.deadlineTimer !== undefined) return;
        this.deadlineTimer = setTimeout(this.onDeadline, Math.max(0, exchange.stream.startedAt + limits.sse_deadline_ms - Date.now()));
      });
    }
  }

  /** The stream is over: no timer fires any more. */
  clear(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
  }

  /**
   * One timer per idle period, not one per chunk: when it fires it answers if the stream made
   * no progress for sse_idle_timeout_ms, else it waits again for what is left of that time.
   * The answer blames the side waited for: `sse_idle` (the seller sent nothing) or
   * `host_not_reading` (the host took nothing of what was written: a standalone GET stream,
   * which has no deadline, is bounded by this alone).
   *
   * Time found up, it looks once more after one turn of the event loop (`idleRecheck`), whose
   * poll phase reads what the sockets hold: a timer that came due while the gateway's event
   * loop was busy (another answer's rewrite) runs before the bytes that arrived meanwhile are
   * read, and blamed a seller that had sent an event every 500 ms with a 3,000 ms
   * sse_idle_timeout_ms (a hostile new-user trial 16, H1:
   * test/regressions/sse-idle-after-event-loop-stall.test.ts).
   */
  private setIdleTimer(ms: number): NodeJS.Timeout {
    this.idleRecheck = false;
    return setTimeout(this.onIdleTimer, ms);
  }

  private readonly onIdleTimer = (): void => {
    // Set while the stage waited for the host to drain, and the seller awaits the host's answer
    // now: no idle time (hostAnswered sets the timer again).
    if (!this.idleRuns()) {
      this.idleTimer = undefined;
      return;
    }
    const limits = this.limits;
    const idleMs = performance.now() - this.lastByteAt;
    if (idleMs < limits.sse_idle_timeout_ms) {
      this.idleTimer = this.setIdleTimer(Math.ceil(limits.sse_idle_timeout_ms - idleMs));
      return;
    }
    if (!this.idleRecheck) {
      // Not due before the next timers phase, so after a poll phase (libuv's loop order).
      this.idleTimer = setTimeout(this.onIdleTimer, 1);
      this.idleRecheck = true;
      return;
    }
    this.idleTimer = undefined;
    this.onTimeout({ reason: this.waitingForHost ? 'host_not_reading' : 'sse_idle', limitMs: limits.sse_idle_timeout_ms, observedMs: observedMs(idleMs, limits.sse_idle_timeout_ms) });
  };

  private readonly onDeadline = (): void => {
    const limits = this.limits;
    const observed = observedMs(Date.now() - this.exchange.stream.startedAt, limits.sse_deadline_ms);
    this.onTimeout({ reason: this.waitingForHost ? 'host_not_reading' : 'sse_deadline', limitMs: limits.sse_deadline_ms, observedMs: observed });
  };
}
