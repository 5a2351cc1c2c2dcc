/**
 * Reported failure (hostile trial 40, F1, Medium): on the standalone GET stream, every event
 * queued for the host set the undelivered count (src/response/sse-undelivered.ts) back to 0,
 * an event with empty data as much as any: a seller sending 4 MiB minus 100 bytes of
 * unknown-field lines then `data:\n\n`, deflate-coded, made 885,408 wire bytes decode to
 * 419,420,600 in 8 s (6.8 s of the gateway's CPU) for 200 bytes to the host, and the MCP SDK
 * client reconnected after every plain end, without end. (A `:\n` comment or a `retry:` line
 * did the same: get-stream-tiny-comments-reset-undelivered.test.ts.)
 *
 * Now every frame lowers the count by UNDELIVERED_FRAME_CREDIT (64) x what it carries to the
 * host (an event's frame, its id line aside: `data: \n\n`, 8 bytes, for an event with empty
 * data; its data bytes alone before
 * test/regressions/get-stream-event-credit-depends-on-chunks.test.ts): an event with empty
 * data forgives 512 bytes, less than the ~1,000 bytes of junk before each.
 *
 * Input: a raw seller on 127.0.0.1 through the real gateway, a host reading with fetch;
 * max_response_bytes 10,000 (max_sse_event_bytes unset: the limit is 2 x 10,000 + 65,536),
 * deflate-coded bodies:
 * - empty-events: a notification, then 2,000 units of a 998-byte `x:` line and `data:` and a
 *   blank line (an event with empty data);
 * - control, junk-between-events: 2,000 units of the same `x:` line and a notification (~80
 *   data bytes, which forgive ~5 KB).
 * Expected: empty-events ends (`resumable_end`, `sse_undelivered`) at the exact point the
 * model gives (each unit adds its bytes and, since hostile trial 52, F2, 1,024 for its `x:`
 * line, src/response/sse-ignored-lines.ts: 56 events, 172 before; the unit that would pass
 * the limit is not taken);
 * the control goes to the seller's end (`ok`), every notification delivered.
 * Before the fix: empty-events went on to the seller's end (outcome `ok`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { JUNK_LINE, JUNK_MAX_RESPONSE_BYTES, JUNK_READ as READ, junkNote as note, undeliveredEnd, useDeflateGetStreams } from '../helpers/deflate-get-streams.js';

const FIRST = note(0);
const UNIT = JUNK_LINE + 'data:\n\n';
/** What the host gets for each empty event: its frame. */
const EMPTY_FRAME = 'data: \n\n';
const UNITS = 2_000;

const BODIES = {
  'empty-events': FIRST + UNIT.repeat(UNITS),
  'junk-between-events': Array.from({ length: UNITS }, (_, k) => JUNK_LINE + note(k + 1)).join(''),
} as const;

const { readStream, exchangeLine } = useDeflateGetStreams(BODIES, JUNK_MAX_RESPONSE_BYTES);

describe('get-stream-empty-events-reset-undelivered (hostile trial 40, F1)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('junk with an empty event every 1,000 bytes, deflate: ends with sse_undelivered at the exact point', async () => {
    // The stream's end by the count's rules: the frames delivered, and the decoded bytes up to the limit point.
    const { units: events, decodedThrough } = undeliveredEnd(FIRST.length, UNIT.length, EMPTY_FRAME.length, UNITS, 1);
    assert.equal(events, 56);
    const text = await readStream('empty-events');
    assert.equal(text, FIRST + EMPTY_FRAME.repeat(events));
    const line = await exchangeLine('empty-events');
    assert.deepEqual([line.outcome, line.reason], ['resumable_end', 'sse_undelivered'], JSON.stringify(line));
    const decoded = line.bytes_decoded as number;
    assert.ok(decoded >= decodedThrough && decoded <= decodedThrough + READ, `bytes_decoded ${decoded}, the limit point at ${decodedThrough}`);
  });

  test('control: the same junk between notifications never ends the stream', async () => {
    const text = await readStream('junk-between-events');
    assert.equal(text, Array.from({ length: UNITS }, (_, k) => note(k + 1)).join(''));
    const line = await exchangeLine('junk-between-events');
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });
});
