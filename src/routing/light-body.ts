/**
 * The body of a seller's plain JSON answer (2xx, `application/json` or `+json`, no
 * Content-Encoding) as the response pipeline reads it, without a Node `Readable`.
 *
 * Why (issue 5, 1 KiB results): undici's `request()` wraps every response body in a
 * `Readable` (its `BodyReadable`), and Node's stream machinery (construction, `push`, `read`,
 * the end and close ticks, `destroy`, end-of-stream bookkeeping) was the largest single part
 * of what a small answer costs the gateway over a pass-through: with this body, the gateway's
 * CPU per 1 KiB answer went from a median of 1.24x the pass-through's to 1.16x (bench/README.md,
 * "What the gateway adds at 1 KiB"). Such a body is read by the JSON stage only through the
 * stream's events
 * (body-source.ts `readDirect`), so it needs only what that reader, `releaseBody`, the
 * buffered-bytes lease and @fastify/reply-from use:
 *
 * - events `data`, `end`, `error`, `close` (an `EventEmitter`); `data` flows once a `data`
 *   listener is attached (chunks that arrive before are queued, as a `Readable` holds them);
 * - `pause()` / `resume()`: while paused, or while chunks are queued, the seller's socket
 *   is not read (the handler's `onData` returns false; undici's `resume` continues it);
 * - `destroy(err?)`: stops delivering; a body not yet complete aborts the upstream request
 *   (with `err`, or undici's RequestAbortedError) once the chunks undici is parsing are
 *   through, so a message whose end is among them completes and keeps its connection; a
 *   complete one aborts nothing; `error` (only with `err`) then `close` follow on the next
 *   tick, as Node's `destroy` emits them;
 * - `readable`, `destroyed`, `readableEnded`;
 * - async iteration, for a reader that does not use the events (a body already failed when
 *   it is opened: body-source.ts `direct` is then false): through a `Readable` made then.
 *
 * The end is emitted once the last chunk was delivered (`end`, then `close` on the next tick,
 * as an auto-destroyed `Readable` does). An upstream error (a reset, an abort by the gateway)
 * drops what is queued and emits `error` then `close`, as undici's body does.
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { errors } from 'undici';
import { prematureClose } from '../response/body-source.js';

/** An event listener, as `EventEmitter#on` takes it. */
type Listener = Parameters<EventEmitter['on']>[1];

export class LightBody extends EventEmitter {
  /** True once destroyed: by `destroy`, an upstream error, or after the end. */
  destroyed = false;
  /** True once `end` was emitted. */
  readableEnded = false;
  /** The upstream error or destroy reason, once failed. */
  private failure: Error | undefined;
  private readonly queue: Buffer[] = [];
  private flowing = false;
  private paused = false;
  /** The upstream request delivered its last byte (undici `onComplete`). */
  private complete = false;
  /** `push` returned false: the seller's socket waits for {@link resumeUpstream}. */
  private upstreamWaits = false;
  private flushScheduled = false;

  /**
   * @param resumeUpstream undici's `resume` (reads the seller's socket on after `onData` returned false)
   * @param abortUpstream aborts the upstream request (undici's `abort` from `onConnect`)
   */
  constructor(
    private readonly resumeUpstream: () => void,
    private readonly abortUpstream: (reason: Error) => void,
  ) {
    super();
  }

  /** True until the end is emitted or the body is destroyed. */
  get readable(): boolean {
    return !this.destroyed;
  }

  override on(event: string | symbol, listener: Listener): this {
    super.on(event, listener);
    if (event === 'data' && !this.flowing) {
      this.flowing = true;
      this.scheduleFlush();
    }
    return this;
  }

  override addListener(event: string | symbol, listener: Listener): this {
    return this.on(event, listener);
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    this.flowing = true;
    this.scheduleFlush();
    return this;
  }

  /**
   * A chunk from the seller (undici `onData`). Delivered at once when flowing, not paused and
   * nothing is queued; queued otherwise. False when the seller's socket should wait.
   */
  push(chunk: Buffer): boolean {
    // Dropped; the parse goes on to the message's end or the pending abort (destroy).
    if (this.destroyed) return true;
    if (this.flowing && !this.paused && this.queue.length === 0) {
      this.emit('data', chunk);
      if (!this.paused) return true;
    } else {
      this.queue.push(chunk);
    }
    this.upstreamWaits = true;
    return false;
  }

  /** The seller's body is complete (undici `onComplete`). */
  end(): void {
    this.complete = true;
    if (this.destroyed) return;
    if (this.flowing && !this.paused && this.queue.length === 0) this.emitEnd();
    else this.scheduleFlush();
  }

  /** The upstream request failed (undici `onError`): queued chunks are dropped; `error`, then `close`. */
  fail(err: Error): void {
    if (this.destroyed) return;
    this.settle(err);
  }

  destroy(err?: Error): this {
    if (this.destroyed) return this;
    if (!this.complete) {
      // Aborted once the chunks undici is parsing now are through (a microtask runs after its
      // parse of what the socket gave): when they hold the message's end, the request is
      // complete by then and its connection stays in the pool. A reader that stops at the
      // first chunk of an answer that arrived whole (a bound broken) would otherwise cost the
      // seller connection (test/regressions/light-body-breach-keeps-connection.test.ts); a
      // Readable delivered that chunk a tick later, after undici had seen the end.
      const reason = err ?? new errors.RequestAbortedError();
      queueMicrotask(() => {
        if (!this.complete) this.abortUpstream(reason);
      });
    }
    this.settle(err);
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    yield* this.toReadable();
  }

  private settle(err: Error | undefined): void {
    this.destroyed = true;
    this.failure = err;
    this.queue.length = 0;
    process.nextTick(() => {
      if (err !== undefined && this.listenerCount('error') > 0) this.emit('error', err);
      this.emit('close');
    });
  }

  private emitEnd(): void {
    this.readableEnded = true;
    this.destroyed = true;
    this.emit('end');
    process.nextTick(() => this.emit('close'));
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    // Nothing is delivered before a reader attached a `data` listener (or called `resume`).
    if (!this.flowing) return;
    while (this.queue.length > 0 && !this.paused && !this.destroyed) this.emit('data', this.queue.shift());
    if (this.paused || this.destroyed || this.queue.length > 0) return;
    if (this.complete) {
      this.emitEnd();
    } else if (this.upstreamWaits) {
      this.upstreamWaits = false;
      this.resumeUpstream();
    }
  }

  /** This body as a `Readable` (async iteration). */
  private toReadable(): Readable {
    const readable = new Readable({
      read: () => void this.resume(),
      destroy: (err, callback) => {
        this.destroy(err ?? undefined);
        callback(err);
      },
    });
    if (this.readableEnded) {
      readable.push(null);
      return readable;
    }
    if (this.destroyed) {
      readable.destroy(this.failure ?? prematureClose());
      return readable;
    }
    this.on('data', (chunk: Buffer) => {
      if (!readable.push(chunk)) this.pause();
    });
    this.on('end', () => readable.push(null));
    this.on('error', (err: Error) => readable.destroy(err));
    // Destroyed without an error and before its end: the iteration fails, as a Readable's would.
    this.on('close', () => {
      if (!this.readableEnded && !readable.destroyed) readable.destroy(prematureClose());
    });
    return readable;
  }
}
