/**
 * Resolves when a writable (the host's socket, a decoder) drains or closes: backpressure
 * waits must never hang on a peer that went away.
 */
import type { EventEmitter } from 'node:events';

export function drainOrClose(writable: EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      writable.off('drain', done);
      writable.off('close', done);
      resolve();
    };
    writable.on('drain', done);
    writable.on('close', done);
  });
}
