/**
 * The part of autocannon's programmatic API the bench uses (autocannon 8 ships no types;
 * @types/autocannon describes 7).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    pipelining?: number;
    /** Seconds; ignored by autocannon when `amount` is set (the bench stops it itself). */
    duration?: number;
    amount?: number;
    /** Seconds. */
    timeout?: number;
    overallRate?: number;
    /** Milliseconds between samples; autocannon also polls its stop flag at this interval. */
    sampleInt?: number;
    bailout?: number;
  }

  export interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    totalCompletedRequests: number;
    totalRequests: number;
    totalBytes: number;
    duration: number;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
    on(event: 'reqError', listener: (err: Error) => void): this;
    on(event: 'done', listener: (result: Result) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  function autocannon(opts: Options, cb?: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
