import type { EventSourceParser } from 'eventsource-parser';

/**
 * `parser.feed(text)` with V8's stack capture off (`Error.stackTraceLimit` 0) while it runs,
 * restored after, thrown or not.
 *
 * Why (a hostile seller, trial 13 H1: test/regressions/sse-many-data-lines-freezes-gateway.test.ts):
 * eventsource-parser 3 builds a `ParseError`, an `Error` whose stack V8 captures, for every
 * line with an unknown field name (`foo: bar`), to hand it to `onError`, which logs only its
 * message. 400,000 such lines (3.6 MB) cost ~1.6 s of the event loop; without the stack,
 * ~0.2 s. An error thrown by the stage's own callbacks while the parser runs has no stack
 * either (its message is kept); none is expected there.
 */
export function feedWithoutStacks(parser: EventSourceParser, text: string): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    parser.feed(text);
  } finally {
    Error.stackTraceLimit = limit;
  }
}
