/**
 * Regression (review of e72ea9d, flaw 2): on a stream without a cumulative total (the
 * standalone GET stream), every frame queued for the host set the undelivered count
 * (src/response/sse-undelivered.ts) back to 0, a 2-byte comment `:\n` as much as an event.
 * A seller sending unknown-field junk with a `:\n` every few KiB, deflate-coded, kept the
 * gateway decoding ~1000 bytes for each byte it sent, for as long as it liked, the host
 * receiving 2 bytes per `limit` decoded.
 *
 * Now: a comment or `retry:` frame (a frame the gateway forwards with no event data) lowers
 * the count by UNDELIVERED_FRAME_CREDIT (64) x its own bytes, floored at 0 (events, raw runs
 * and pending ids' tokens by 64 x what they carry: get-stream-empty-events-reset-undelivered).
 * So a `:\n` forgives 128 bytes.
 *
 * Input: a raw seller on 127.0.0.1 through the real gateway, a host reading with fetch;
 * max_response_bytes 10,000 (max_sse_event_bytes unset: the limit is 2 x 10,000 + 65,536).
 * - junk: a notification (delivered), then 2,000 units, deflate-coded, of a 998-byte `x:`
 *   line and `:\n` (one endless block: 2 MB decoded from ~6 KB);
 * - heartbeats: a notification, then 40,000 `: keepalive` comment blocks (520 KB, 6x the
 *   limit), deflate-coded;
 * - heartbeats between events: 3,000 units of a notification and a `: keepalive` block.
 * Expected: junk ends (outcome `resumable_end`, reason `sse_undelivered`) at the exact point
 * the model below gives: the count grows by 1,000 + 1,024 (the `x:` line's charge since
 * hostile trial 52, F2: src/response/sse-ignored-lines.ts; 97 comments before it) - 128 per
 * unit, and the unit whose bytes and charge would take it past the limit is not taken: the host gets the notification and the comments
 * before it; the gateway decoded at most the bytes up to that point and one read more. The
 * controls end as the seller ends them (`ok`), everything delivered.
 * Before the fix: junk went on to the seller's end (outcome `ok`, 2,000 comments).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { JUNK_LINE, JUNK_MAX_RESPONSE_BYTES, JUNK_READ as READ, junkNote as note, undeliveredEnd, useDeflateGetStreams } from '../helpers/deflate-get-streams.js';

const FIRST = note(1);
const UNIT = JUNK_LINE + ':\n';
const UNITS = 2_000;
const HEARTBEAT = ': keepalive\n\n';

const BODIES = {
  junk: FIRST + UNIT.repeat(UNITS),
  heartbeats: FIRST + HEARTBEAT.repeat(40_000),
  'heartbeats-between-events': Array.from({ length: 3_000 }, (_, k) => note(k + 1) + HEARTBEAT).join(''),
} as const;


const { readStream, exchangeLine } = useDeflateGetStreams(BODIES, JUNK_MAX_RESPONSE_BYTES);

describe('get-stream-tiny-comments-reset-undelivered (review of e72ea9d, flaw 2)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('junk with a `:\\n` every 1,000 bytes, deflate: ends with sse_undelivered at the exact point', async () => {
    // The stream's end by the count's rules: the frames delivered, and the decoded bytes up to the limit point.
    const { units: comments, decodedThrough } = undeliveredEnd(FIRST.length, UNIT.length, 2, UNITS, 1);
    assert.equal(comments, 45);
    const text = await readStream('junk');
    assert.equal(text, FIRST + ':\n'.repeat(comments));
    const line = await exchangeLine('junk');
    assert.deepEqual([line.outcome, line.reason], ['resumable_end', 'sse_undelivered'], JSON.stringify(line));
    const decoded = line.bytes_decoded as number;
    assert.ok(decoded >= decodedThrough && decoded <= decodedThrough + READ, `bytes_decoded ${decoded}, the limit point at ${decodedThrough}`);
  });

  test('control: heartbeats alone, 6x the limit, never end the stream', async () => {
    assert.equal(await readStream('heartbeats'), FIRST + ': keepalive\n'.repeat(40_000));
    const line = await exchangeLine('heartbeats');
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });

  test('control: heartbeats between delivered events never end the stream', async () => {
    const text = await readStream('heartbeats-between-events');
    assert.equal(text, Array.from({ length: 3_000 }, (_, k) => note(k + 1) + ': keepalive\n').join(''));
    const line = await exchangeLine('heartbeats-between-events');
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });
});
