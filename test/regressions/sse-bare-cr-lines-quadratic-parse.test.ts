/**
 * Reported failure (a hostile new-user trial 18, F1): "SSE lines ending in a bare CR cost time
 * that grows with the square of the chunk size". A seller's SSE answer of `:\r` comment lines
 * (then its response), within default bounds, held the gateway's event loop 655 ms in one turn
 * for 4 MB (`\n` lines: ~80 ms); 8 such calls at once made another agent's ping wait 7.5 s and
 * failed another agent's healthy stream `sse_idle`. eventsource-parser 3, on a text holding a
 * CR, searches for the next LF from each line's start: with no LF ahead, to the text's end.
 * Now the text's CR and CR LF line breaks are handed to the parser as LF
 * (response/sse-parser-feed.ts feedWithoutStacks).
 *
 * What this test holds, without timing anything: how many characters the parser's `"\n"`
 * searches read (String.prototype.indexOf counted while the text is fed: from the start
 * position through the match, or to the end of the string when there is none), for 20,000
 * CR-ended lines (40,000 characters): ~400 million before, now at most 2 per character; and
 * that the events parse the same for CR, CR LF and LF line breaks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { feedWithoutStacks } from '../../src/response/sse-parser-feed.js';

const LINES = 20_000;

/** Characters the `"\n"` searches of `run` may read (module doc). */
function lfSearchReach(run: () => void): number {
  const indexOf = String.prototype.indexOf;
  let reach = 0;
  String.prototype.indexOf = function (this: string, search: string, from?: number): number {
    const at = indexOf.call(this, search, from);
    // Read from `from` through the match, or to the end when there is none.
    if (search === '\n') reach += (at === -1 ? this.length : at + 1) - Math.max(0, from ?? 0);
    return at;
  };
  try {
    run();
  } finally {
    String.prototype.indexOf = indexOf;
  }
  return reach;
}

/**
 * The events and comments of `texts` fed in turn, each as sse-boundaries.ts SseLineFeeder hands
 * texts to the parser: whole lines, one that ends with a CR with its LF added (the LF that may
 * follow in the seller's next bytes is dropped there).
 */
const parse = (texts: readonly string[]): { events: EventSourceMessage[]; comments: number } => {
  const events: EventSourceMessage[] = [];
  let comments = 0;
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: () => comments++ });
  for (const text of texts) feedWithoutStacks(parser, text.endsWith('\r') ? `${text}\n` : text);
  return { events, comments };
};

test('20,000 CR-ended comment lines: the LF searches read at most 2 characters per character, not ~n²/4', () => {
  const text = `${':\r'.repeat(LINES)}id: 7\rdata: {"jsonrpc":"2.0","id":1,"result":{}}\r\r`;
  let parsed: ReturnType<typeof parse> | undefined;
  const reach = lfSearchReach(() => (parsed = parse([text])));
  assert.ok(reach <= 2 * text.length, `the LF searches covered ${reach} characters of a ${text.length}-character text`);
  assert.equal(parsed?.comments, LINES);
  assert.deepEqual(parsed?.events, [{ id: '7', event: undefined, data: '{"jsonrpc":"2.0","id":1,"result":{}}' }]);
});

test('the same events from CR, CR LF and LF line breaks, and from a CR LF inside a text', () => {
  const block = (eol: string) => `: c${eol}event: message${eol}id: 1${eol}data: a${eol}data: b${eol}${eol}data: 2${eol}${eol}`;
  const expected = [
    { id: '1', event: 'message', data: 'a\nb' },
    { id: undefined, event: undefined, data: '2' },
  ];
  for (const eol of ['\r', '\r\n', '\n']) assert.deepEqual(parse([block(eol)]).events, expected, JSON.stringify(eol));
  // Mixed breaks in one text, and texts that end with a CR LF (as sse-boundaries.ts hands them on).
  assert.deepEqual(parse(['data: a\r\ndata: b\rid: 1\n\r\n', 'data: 2\r\r']).events, [
    { id: '1', event: undefined, data: 'a\nb' },
    { id: undefined, event: undefined, data: '2' },
  ]);
});
