/**
 * The one rule for `host_not_reading` by idleness (docs/errors.md): while the gateway waits for
 * a host to take what it wrote to it (an SSE stream held back until its host drains it:
 * sse-stage.ts; an SSE stream the gateway has ended, not yet all taken: routing/handler.ts),
 * the host's connection is reset only once the host took no byte of it for the idle limit
 * (`sse_idle_timeout_ms`). A JSON answer has no idle limit: its `response_deadline_ms` alone
 * bounds it (routing/handler.ts), as `sse_deadline_ms` bounds a bounded SSE stream's waits
 * (sse-stream-timers.ts); those deadlines are no idleness and are not decided here.
 *
 * What counts as the host taking bytes: Node's own signal (the wait ends: a 'drain', the
 * answer's 'finish'), or, between those, the kernel's send queue of the connection changing
 * (kernel-send-queue.ts: bytes the host's TCP stack acknowledged; it rises only when libuv hands
 * the kernel more, which it does only once acknowledgements freed room). Node's signal alone
 * comes only after the host took about a third of the socket's send buffer (~1 MB on
 * loopback), so a host reading ~117 KB/s was reset 3 s into a 3 s limit, `bytes_from_seller`
 * short of the answer, having read ~390 KB (hostile trial 55, F3:
 * test/regressions/slow-reading-host-reset-as-not-reading.test.ts).
 *
 * When it looks (times in ms, performance.now()): the wait's start counts as progress. A wait
 * that Node's signal ends within min(limit / 4, {@link FIRST_LOOK_MAX_MS}) costs one timer and
 * no look. Past that, a first look at the kernel's queue, whose moment counts as progress too
 * (what the host took before it cannot be told), then a look every limit / 2, each one that finds
 * the queue changed counting as progress at its moment; at a look that finds none for the
 * limit, the reset (`onStall`, with the milliseconds since the last progress). So a host is
 * never reset sooner than the limit after its last byte taken, and a host that reads nothing is
 * reset min(limit / 4, 1 s) later than at the limit (plus up to one shared read's wait per look,
 * kernel-send-queue.ts MIN_TABLE_READ_INTERVAL_MS). Without the kernel's queue (not Linux, the connection not
 * in the table) the rule falls back to Node's signal: the reset at the limit from the wait's
 * start, after one more turn of the event loop (a drain read in that turn's poll phase ends the
 * wait first: an event-loop stall must not blame a host that took its bytes meanwhile).
 */
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { kernelQueuesReadable, lookSendQueue, sendQueueKey, type SendQueueKey } from './kernel-send-queue.js';

/** The latest first look at the kernel's queue after a wait starts (ms; sooner for limits under 4 s: limit / 4). */
export const FIRST_LOOK_MAX_MS = 1000;

/**
 * Watches one wait for a host (module doc) until {@link stop} or `onStall`. `limitMs`: the idle
 * limit; `onStall(idleMs)`: the host took nothing for `idleMs` (>= `limitMs`); called at most
 * once, never after {@link stop}.
 */
export class HostTakeWatch {
  private timer: NodeJS.Timeout | undefined = undefined;
  private stopped = false;
  private readonly startedAt = performance.now();
  /** When the host last took bytes, as far as can be told (module doc). */
  private progressAt = this.startedAt;
  /** The kernel's queue at the previous look; undefined before the first. */
  private queued: number | undefined = undefined;
  /** The host's TCP socket, when the kernel's queue can be read; its table key is made at the first look (none for a short wait). */
  private readonly socket: Socket | undefined;
  private key: SendQueueKey | undefined = undefined;
  /** Fallback only: the limit was reached once, a turn of the event loop is given before the reset. */
  private rechecked = false;

  constructor(
    raw: ServerResponse,
    private readonly limitMs: number,
    private readonly onStall: (idleMs: number) => void,
  ) {
    const socket = raw.socket;
    this.socket = kernelQueuesReadable() && socket instanceof Socket ? socket : undefined;
    this.arm(this.socket !== undefined ? Math.min(limitMs / 4, FIRST_LOOK_MAX_MS) : limitMs);
  }

  /** The wait is over (Node's signal, the connection closed, the stream answered): nothing more is decided. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.onTimer, Math.max(0, Math.ceil(ms)));
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (this.stopped) return;
    if (this.socket !== undefined) this.key ??= sendQueueKey(this.socket);
    if (this.key === undefined) return this.fallback();
    void lookSendQueue(this.key).then(this.onLook);
  };

  private readonly onLook = (queued: number | undefined): void => {
    if (this.stopped) return;
    if (queued === undefined) {
      this.fallback();
      return;
    }
    const now = performance.now();
    if (queued !== this.queued) this.progressAt = now;
    this.queued = queued;
    const idle = now - this.progressAt;
    if (idle >= this.limitMs) {
      this.stopped = true;
      this.onStall(idle);
      return;
    }
    this.arm(Math.min(this.limitMs / 2, this.limitMs - idle));
  };

  /** Node's signal alone: the limit from the wait's start, then one more turn of the event loop. */
  private fallback(): void {
    const idle = performance.now() - this.startedAt;
    if (idle < this.limitMs) return this.arm(this.limitMs - idle);
    if (!this.rechecked) {
      // Not due before the next timers phase, so after a poll phase (libuv's loop order).
      this.rechecked = true;
      return this.arm(1);
    }
    this.stopped = true;
    this.onStall(idle);
  }
}

/**
 * Watches an answer the gateway has ended until its host takes it all (`finish`) or its
 * connection closes: `onStall` when the host took nothing of it for `limitMs` ({@link HostTakeWatch}).
 */
export function watchEndedAnswer(raw: ServerResponse, limitMs: number, onStall: () => void): void {
  const watch = new HostTakeWatch(raw, limitMs, onStall);
  const over = (): void => {
    watch.stop();
    raw.off('finish', over);
    raw.off('close', over);
  };
  raw.on('finish', over);
  raw.on('close', over);
}
