/**
 * Counts the calls of `JSON.parse` on a large text while a suite runs: what the regressions
 * that a body or an answer is read by the JSON scan alone, never parsed whole, assert
 * (test/regressions/wide-request-object-stalls-event-loop, wide-answer-object-stalls-event-loop,
 * unknown-agent-refusal-unbounded-parse). The gateway runs in the test's process, so its calls
 * are counted too. One copy of the wrapper those three wrote (`duplicates`).
 */
import { after, before } from 'node:test';

export interface BigParses {
  /** Calls on a text of at least `minChars` characters since the last {@link BigParses.reset}. */
  readonly count: number;
  /** Sets {@link BigParses.count} to 0 (each test's start). */
  reset(): void;
}

/**
 * Wraps `JSON.parse` in `before` (registered where this is called: inside a `describe`, after
 * the suite's other `before` hooks it should follow) to count each call on a string of
 * `minChars` characters or more, and puts the real one back in `after`. The wrapper parses as
 * `JSON.parse` does, reviver included.
 */
export function countBigParses(minChars: number): BigParses {
  const parse = JSON.parse;
  let count = 0;
  before(() => {
    JSON.parse = function countingParse(this: unknown, text: string, reviver?: (key: string, value: unknown) => unknown): unknown {
      if (typeof text === 'string' && text.length >= minChars) count++;
      return parse.call(JSON, text, reviver) as unknown;
    } as typeof JSON.parse;
  });
  after(() => {
    JSON.parse = parse;
  });
  return {
    get count(): number {
      return count;
    },
    reset(): void {
      count = 0;
    },
  };
}
