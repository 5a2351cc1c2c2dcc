/**
 * Reported failure (a trim helper, session 33: ~40% of test/unit/sse-undelivered-cuts.test.ts's
 * CPU before its pads were counted): SseLineFeeder (src/response/sse-boundaries.ts) decoded
 * the whole rest of an ASCII chunk into one string at the chunk's second range, to slice its
 * later ranges from it, also when no later range came: the stream ended, a bound cut it, or
 * the SSE stage sent the rest on raw. A 1 MiB chunk cut after two 200-byte ranges made ~1 MiB
 * of string.
 *
 * Now the rest is still ASCII-tested once, but decoded a window at a time (16 KiB, or the
 * range's own bytes when longer) from the range that needs it.
 *
 * What this test holds, without timing anything: how many of the chunk's bytes are made a
 * string (its `toString` watched) when two ranges of it are fed, and that feeding a chunk in
 * ranges that cross window edges, or are longer than a window, hands the sink exactly the
 * texts that feeding each range as a chunk of its own does (ASCII rest, and a rest with a
 * non-ASCII character at its end).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';

/** `chunk` with its `toString` counted: the bytes decoded through it so far. */
function watched(chunk: Buffer): { chunk: Buffer; decoded: () => number } {
  let bytes = 0;
  const own = Buffer.prototype.toString;
  chunk.toString = function (this: Buffer, encoding?: BufferEncoding, start = 0, end = this.length) {
    bytes += Math.min(end, this.length) - start;
    return own.call(this, encoding, start, end);
  } as Buffer['toString'];
  return { chunk, decoded: () => bytes };
}

/** 200-byte blocks (a comment line and a blank line) of `bytes` bytes in all. */
const comments = (bytes: number): string => `: ${'c'.repeat(196)}\n\n`.repeat(bytes / 200);

test('two 200-byte ranges of a 1 MiB chunk, then the end: the rest is not made a string', () => {
  const got: string[] = [];
  const feeder = new SseLineFeeder((t) => got.push(t), 1 << 20);
  const { chunk, decoded } = watched(Buffer.from(comments(1_048_000)));
  assert.equal(feeder.push(chunk, 0, 200), true);
  assert.equal(feeder.push(chunk, 200, 400), true);
  feeder.finish();
  const bytes = decoded();
  assert.deepEqual(got, [chunk.toString('latin1', 0, 200), chunk.toString('latin1', 200, 400), '\n']);
  // The first range and one window from the second range's start, at most (was 1,048,000: the rest from byte 200).
  assert.ok(bytes <= 200 + 16 * 1024, `decoded ${bytes} bytes`);
});

/** The sink's texts for `text` fed as `chunk`'s ranges cut at `cuts`, and as a chunk of its own per range. */
function fedBothWays(text: string, cuts: readonly number[]): { ranges: string[]; alone: string[] } {
  const bytes = Buffer.from(text, 'utf8');
  const ends = [...cuts, bytes.length];
  const run = (asRanges: boolean): string[] => {
    const got: string[] = [];
    const feeder = new SseLineFeeder((t) => got.push(t), 1 << 20);
    let at = 0;
    for (const end of ends) {
      const ok = asRanges ? feeder.push(bytes, at, end) : feeder.push(Buffer.from(bytes.subarray(at, end)), 0, end - at);
      assert.equal(ok, true);
      at = end;
    }
    feeder.finish();
    return got;
  };
  return { ranges: run(true), alone: run(false) };
}

test('ranges across window edges and longer than a window: the same texts as each range alone', () => {
  const ascii = `${comments(20_000)}data: {"a":1}\n\n${comments(60_000)}id: 7\ndata: ${'d'.repeat(40_000)}\n\n${comments(30_000)}`;
  // Cuts in lines and at their ends: first ranges, ranges inside one window, ranges crossing
  // a window's end (16,384 bytes after the range that started it), one range of 50,000 bytes.
  const cuts = [150, 200, 16_000, 16_590, 16_600, 33_000, 33_001, 49_000, 99_000, 99_020, 100_300, 140_000];
  for (const [label, text] of [
    ['ASCII', ascii],
    ['a non-ASCII character at the end', `${ascii}: é\n\n`],
  ] as const) {
    const { ranges, alone } = fedBothWays(text, cuts);
    assert.deepEqual(ranges, alone, label);
    assert.equal(ranges.join(''), `${text}\n`, label);
  }
});
