/**
 * A pino logger whose JSON lines a test can read and wait for (no process, no stdout): the
 * lines as parsed objects (`entries`), in the order they were written.
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { withTimeout } from './timeout.js';

/** One parsed log line: pino's `level` (30 info, 40 warn, 50 error) and `msg`, plus its fields. */
export interface LogEntry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, parsed. */
  entries: LogEntry[];
  /** The `nth` (1-based) entry whose message starts with `msg`, now or when it is logged (10 s at most). */
  waitFor(msg: string, nth?: number): Promise<LogEntry>;
  /** The first entry `test` accepts, now or when it is logged (10 s at most; `label` names it in the timeout). */
  waitUntil(test: (e: LogEntry) => boolean, label: string): Promise<LogEntry>;
}

/** A plain pino logger at `level` (default `debug`) writing into `entries`. */
export function captureLog(level: pino.LevelWithSilent = 'debug'): CapturedLog {
  const entries: LogEntry[] = [];
  const waiters: Array<{ test: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }> = [];
  const logger = pino(
    { level },
    {
      write(line: string) {
        const entry = JSON.parse(line) as LogEntry;
        entries.push(entry);
        for (const w of [...waiters]) {
          if (w.test(entry)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(entry);
          }
        }
      },
    },
  );
  const waitFor = (msg: string, nth = 1): Promise<LogEntry> => {
    const seen = entries.filter((e) => e.msg.startsWith(msg));
    if (seen.length >= nth) return Promise.resolve(seen[nth - 1]!);
    let count = seen.length;
    return withTimeout(
      new Promise<LogEntry>((resolve) => waiters.push({ test: (e) => e.msg.startsWith(msg) && ++count === nth, resolve })),
      10_000,
      `log "${msg}" #${nth}`,
    );
  };
  const waitUntil = (test: (e: LogEntry) => boolean, label: string): Promise<LogEntry> => {
    const found = entries.find(test);
    if (found) return Promise.resolve(found);
    return withTimeout(new Promise<LogEntry>((resolve) => waiters.push({ test, resolve })), 10_000, `log ${label}`);
  };
  return { logger, entries, waitFor, waitUntil };
}

/**
 * A stream that keeps every chunk written to it as a string, in order (`lines`): the
 * destination for a logger a test builds itself (createLogger's `destination`), whose output
 * it then reads as text.
 */
export function lineSink(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, sink };
}
