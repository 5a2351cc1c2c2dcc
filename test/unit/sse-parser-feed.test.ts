/**
 * feedWithoutStacks (src/response/sse-parser-feed.ts): eventsource-parser's `ParseError` for
 * an unknown field carries no stack frames (building them was ~4 µs per line: 400,000
 * `foo: bar` lines held the event loop ~1.6 s, a hostile new user's trial 13, H1), and
 * `Error.stackTraceLimit` is back to what it was after the feed, whether the feed returned or threw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, type ParseError } from 'eventsource-parser';
import { feedWithoutStacks } from '../../src/response/sse-parser-feed.js';

test('an unknown field: the ParseError has its message and no stack frames; events still parse', () => {
  const errors: ParseError[] = [];
  const events: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e.data), onError: (e) => errors.push(e) });
  const before = Error.stackTraceLimit;
  feedWithoutStacks(parser, 'foo: bar\ndata: 1\n\n');
  assert.equal(Error.stackTraceLimit, before);
  assert.deepEqual(events, ['1']);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.type, 'unknown-field');
  assert.equal(errors[0]!.message, 'Unknown field "foo"');
  assert.equal(errors[0]!.stack, 'ParseError: Unknown field "foo"');
  // The same parser fed directly: the stack has frames (what the wrapper saves).
  parser.feed('foo: bar\n');
  assert.match(errors[1]!.stack!, /\n\s+at /);
});

test('a callback that throws: the limit is restored and the error goes to the caller', () => {
  const parser = createParser({
    onEvent: () => {
      throw new RangeError('from onEvent');
    },
  });
  const before = Error.stackTraceLimit;
  assert.throws(() => feedWithoutStacks(parser, 'data: 1\n\n'), { name: 'RangeError', message: 'from onEvent' });
  assert.equal(Error.stackTraceLimit, before);
});
