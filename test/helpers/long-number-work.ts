/**
 * Counts the work done on long number texts while a test's `body` runs, without timing it:
 * - `reads`: calls of the global `Number` on a string over {@link LONG} characters (a number
 *   token converted whole: json-numbers.ts rule 3 did so with a 4 MB token, twice);
 * - `copies`: `Buffer.prototype.toString` results over {@link LONG} characters made only of the
 *   characters of a number (`-+.0-9eE`): a number token copied out of a body's bytes
 *   (json-value-at.ts copied a cancellation's 4 MB `requestId` to canonicalize it).
 * Both are wrapped for the duration of `body` (sync or async) and restored after, as
 * test/regressions/huge-exponent-number-stalls-gateway.test.ts wraps `BigInt`. Used by
 * test/regressions/huge-number-lossy-check-stalls-gateway.test.ts and
 * test/regressions/cancel-huge-number-id-canonicalized.test.ts.
 */

/** Texts up to this long are not counted: every id and double the gateway reads is shorter. */
export const LONG = 64;
const NUMBER_TEXT = /^[-+.0-9eE]+$/;

export interface LongNumberWork<T> {
  readonly result: T;
  readonly reads: number;
  readonly copies: number;
}

export async function countLongNumberWork<T>(body: () => T | Promise<T>): Promise<LongNumberWork<T>> {
  const realNumber = globalThis.Number;
  const realToString = Buffer.prototype.toString;
  let reads = 0;
  let copies = 0;
  const counting = function (...args: unknown[]): number {
    if (typeof args[0] === 'string' && args[0].length > LONG) reads++;
    return args.length === 0 ? realNumber() : realNumber(args[0]);
  };
  // `Number.isFinite`, `Number.MAX_SAFE_INTEGER`...: from the real constructor.
  Object.setPrototypeOf(counting, realNumber);
  counting.prototype = realNumber.prototype;
  globalThis.Number = counting as unknown as NumberConstructor;
  Buffer.prototype.toString = function (this: Buffer, ...args: Parameters<Buffer['toString']>): string {
    const text = realToString.apply(this, args);
    if (text.length > LONG && NUMBER_TEXT.test(text)) copies++;
    return text;
  };
  try {
    const result = await body();
    return { result, reads, copies };
  } finally {
    globalThis.Number = realNumber;
    Buffer.prototype.toString = realToString;
  }
}
