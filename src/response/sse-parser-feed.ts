import type { EventSourceParser } from 'eventsource-parser';

/**
 * `parser.feed(text)`, guarded against two costs of eventsource-parser 3 that a seller picks:
 *
 * 1. Stacks. The parser builds a `ParseError`, an `Error` whose stack V8 captures, for every
 *    line with an unknown field name (`foo: bar`), to hand it to `onError`, which logs only
 *    its message. 400,000 such lines (3.6 MB) cost ~1.6 s of the event loop; without the
 *    stack, ~0.2 s. So V8's stack capture is off (`Error.stackTraceLimit` 0) while the parser
 *    runs, restored after, thrown or not; an error thrown by the stage's own callbacks meanwhile
 *    has no stack either (its message is kept); none is expected there. Reported failure: a
 *    hostile seller, trial 13 H1 (test/regressions/sse-many-data-lines-freezes-gateway.test.ts).
 *
 * 2. Bare CR line breaks. A text holding a CR takes the parser's other line loop, which
 *    searches for the next CR and the next LF from each line's start: in a text of CR-only
 *    lines each LF search runs to the text's end, so a text of n bytes cost ~n²/4 character
 *    reads (4 MiB of `:\r` in 64 KiB texts: ~500 ms; one call's answer of 4 MB stalled the
 *    event loop 655 ms and 8 such calls 7.5 s, failing another agent's healthy stream
 *    `sse_idle`: a hostile new-user trial 18, F1,
 *    test/regressions/sse-bare-cr-lines-quadratic-parse.test.ts). So the text's CR LF and CR
 *    line breaks are handed to the parser as LF (WHATWG HTML §9.2.6: CR LF, CR and LF each end
 *    a line), which keeps it on its LF loop, linear. Exact only because the caller hands whole
 *    lines whose CR LF pairs are never split between two texts (sse-boundaries.ts
 *    SseLineFeeder: a text ending in CR is handed on with its LF, and an LF that starts the next
 *    text is dropped). Cost: one native search for a CR per text, one replace for a text with one.
 */
export function feedWithoutStacks(parser: EventSourceParser, text: string): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    parser.feed(text.indexOf('\r') === -1 ? text : text.replace(CR_LINE_BREAKS, '\n'));
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A CR LF or a bare CR: one line break each. */
const CR_LINE_BREAKS = /\r\n?/g;
