/**
 * Where the gateway's log lines go by default: the process's one stdout destination, an
 * async sonic-boom on fd 1, made on first use (`stdoutLogDestination`). Every logger made
 * by `createLogger` without a destination shares it (tests build many apps: one
 * destination and one exit listener per process, never one per logger).
 *
 * Why not pino's default destination: pino 10.4.0 writes to sonic-boom 4.2.1 (its
 * dependency is `^4`) and flushes it at exit with `flushSync()`, whose loop retries every
 * write error, not only EAGAIN/EBUSY: on EPIPE (whatever read the gateway's stdout died
 * during shutdown) it sleeps 100 ms and tries again, forever, inside the `exit` event, so
 * SIGTERM and SIGINT are never handled and only SIGKILL ends the process (a new user's
 * report, 2 runs in 15; sonic-boom 4.2.1 index.js `flushSync`, the catch falls through to
 * `sleep()` for any error). sonic-boom 5 throws on a non-retryable error in `flushSync` and
 * bounds EAGAIN/EBUSY retries with `maxWriteRetries`; an npm `overrides` entry would not
 * reach users who install the gateway as a dependency, hence this destination of our own.
 *
 * Behaviour:
 * - A write error (an `error` event: EPIPE when the reader is gone, or anything else that
 *   makes fd 1 unusable) stops writing for good: later lines are dropped, the buffer is
 *   released, nothing is thrown and the process does not crash.
 * - While the reader is slow, at most `LOG_BUFFER_MAX_BYTES` wait in memory; a line that
 *   would exceed them is dropped (sonic-boom's `maxLength`, its `drop` event), so a stuck
 *   reader cannot grow the heap without bound. Nothing is lost while the reader keeps up.
 * - At process exit the buffer is flushed synchronously, unless writing stopped, inside a
 *   try/catch: EPIPE or any other error ends the flush at once; EAGAIN (a reader alive
 *   that does not read) is retried `EXIT_FLUSH_MAX_RETRIES` times, 100 ms apart, so the
 *   exit waits at most ~2 s without progress.
 *
 * fd 1 is opened through `process.stdout` first, as pino's default does: for a pipe or a
 * socket Node's libuv handle makes it non-blocking, so a reader that does not read gives
 * EAGAIN (retried, bounded at exit) rather than a write blocked in the kernel, which could
 * hold a threadpool thread while serving and the whole exit, with no bound at all.
 */
import type { DestinationStream } from 'pino';
import sonicBoom from 'sonic-boom';

/** The most bytes waiting for a slow stdout reader: 16 MiB. Lines past it are dropped. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * How many consecutive EAGAIN/EBUSY retries the exit flush makes, each after sonic-boom's
 * 100 ms sleep: 20, ~2 s without progress before the remaining lines are given up.
 */
export const EXIT_FLUSH_MAX_RETRIES = 20;

/** The sonic-boom 5 instance field its typings leave out (`maxWriteRetries`, README "options"). */
type SonicBoom = InstanceType<typeof sonicBoom.default> & { maxWriteRetries: number };

/** A log destination on a file descriptor: pino's `DestinationStream`, plus what its owner and tests need. */
export interface LogDestination extends DestinationStream {
  write(line: string): void;
  /** Writes out what is buffered, then calls `cb` (pino's `logger.flush`). */
  flush(cb?: (err?: Error) => void): void;
  /** The exit flush: synchronous, never throws, bounded (see the module docs); a no-op once stopped. */
  flushAtExit(): void;
  /** True once a write error stopped writing. */
  readonly stopped: boolean;
  /** Lines dropped: past `LOG_BUFFER_MAX_BYTES`, or written after writing stopped. */
  readonly droppedLines: number;
}

export interface LogDestinationOptions {
  /** Default `LOG_BUFFER_MAX_BYTES`. */
  maxBufferBytes?: number;
}

/**
 * A destination on `fd` (async writes) with the behaviour described above, without the
 * exit listener: `stdoutLogDestination` adds it for the shared one; tests call
 * `flushAtExit` themselves.
 */
export function createLogDestination(fd: number, opts: LogDestinationOptions = {}): LogDestination {
  const sonic = new sonicBoom.default({ fd, sync: false, maxLength: opts.maxBufferBytes ?? LOG_BUFFER_MAX_BYTES }) as SonicBoom;
  let stopped = false;
  let droppedLines = 0;
  sonic.on('drop', () => void droppedLines++);
  // Kept for the stream's life, so no later 'error' (destroy's included) is ever unhandled.
  sonic.on('error', () => {
    if (stopped) return;
    stopped = true;
    // Frees the buffered lines; fd 1 and 2 are never closed by sonic-boom.
    try {
      sonic.destroy();
    } catch {
      // Nothing more to release.
    }
  });
  return {
    write(line: string): void {
      if (stopped) {
        droppedLines++;
        return;
      }
      sonic.write(line);
    },
    flush(cb?: (err?: Error) => void): void {
      if (stopped) {
        cb?.();
        return;
      }
      sonic.flush(cb);
    },
    flushAtExit(): void {
      if (stopped) return;
      sonic.maxWriteRetries = EXIT_FLUSH_MAX_RETRIES;
      try {
        sonic.flushSync();
      } catch {
        // EPIPE, retries exhausted, not ready: the remaining lines are lost, the exit goes on.
      }
    },
    get stopped(): boolean {
      return stopped;
    },
    get droppedLines(): number {
      return droppedLines;
    },
  };
}

let shared: LogDestination | undefined;

/** The process's one stdout destination, made (with its one `exit` listener) on first use. */
export function stdoutLogDestination(): LogDestination {
  if (shared === undefined) {
    const destination = createLogDestination(process.stdout.fd ?? 1);
    process.on('exit', () => destination.flushAtExit());
    shared = destination;
  }
  return shared;
}
