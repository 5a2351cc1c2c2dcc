/**
 * The open event's data lines (src/response/sse-open-event.ts), through the line feeder that
 * counts them (sse-boundaries.ts SseLineFeeder.openDataBytes): what the parser holds joined
 * for an event not yet dispatched, counted for the agent's buffered-bytes cap (a hostile new
 * user's trial 10, F3: test/regressions/sse-event-lines-escape-buffer-cap.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';

const LF = 0x0a;
const CR = 0x0d;

function feeder(): SseLineFeeder {
  return new SseLineFeeder(() => {}, 1 << 30);
}
/** Pushes each piece as its own chunk; the count after each. */
function counts(...pieces: string[]): number[] {
  const f = feeder();
  return pieces.map((p) => {
    const b = Buffer.from(p, 'latin1');
    f.push(b, 0, b.length);
    return f.openDataBytes;
  });
}

test('the complete data lines of the open event are counted as the parser joins them (their values, one more per line); its blank line ends the count', () => {
  assert.deepEqual(counts('data: a\n', 'data:bb\n', 'data:  ccc\n\n'), [2, 5, 0]);
  // One chunk of many complete lines, no blank line: all of them.
  assert.deepEqual(counts(`${'data: 0123456789\n'.repeat(100)}`), [1100]);
  // Whole events then the next one's first lines: only the open one's.
  assert.deepEqual(counts('data: 1\n\ndata: 2\ndata: 3\n\nevent: x\ndata: 4\n'), [2]);
  // `data` alone is a data line (an empty one), as `data:`; `datax:` and `Data:` are other fields.
  assert.deepEqual(counts('data\ndata:\ndatax: 1\nData: 2\n'), [2]);
});

test('the incomplete line is not counted here (SseLineFeeder.pendingBytes counts it) until its line ends', () => {
  const f = feeder();
  const push = (s: string): void => {
    const b = Buffer.from(s, 'latin1');
    f.push(b, 0, b.length);
  };
  push('data: a\ndata: xx');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [2, 8]);
  push('xx');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [2, 10]);
  push('\n');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [7, 0]);
  push('\n');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [0, 0]);
});

test('comments, event, id and unknown fields hold nothing in the parser: a block of them without a blank line counts 0', () => {
  assert.deepEqual(counts(': ping\n', ': ping\n', 'event: x\nid: 7\nretry: 10\nfoo: bar\n'), [0, 0, 0]);
  assert.deepEqual(counts(': ping\ndata: a\n: ping\n'), [2]);
});

test('CR LF and CR line breaks, a CR LF or a blank line split across chunks', () => {
  assert.deepEqual(counts('data: a\r\n', 'data: b\r\n', '\r\n'), [2, 4, 0]);
  assert.deepEqual(counts('data: a\r', '\ndata: b\r', '\n', '\r', '\n'), [2, 4, 4, 0, 0]);
  assert.deepEqual(counts('data: a\r', 'data: b\r', '\r'), [2, 4, 0]);
  assert.deepEqual(counts('data: a\n', '\n', 'data: b\n'), [2, 0, 2]);
  assert.deepEqual(counts('data: a\r\n\r', '\ndata: b\r\n'), [0, 2]);
  assert.deepEqual(counts('data: a\r\ndata: b\n\rdata: c\r'), [2]);
});

test('a held line (over chunk edges) completed counts as its data line', () => {
  assert.deepEqual(counts('data: ab', 'cd\ndata: e', 'f\n', '\n'), [0, 5, 8, 0]);
});

test('0 after raw-forwarded blocks, a reset and the stream end', () => {
  const f = feeder();
  const b = Buffer.from('data: a\ndata: b\n', 'latin1');
  f.push(b, 0, b.length);
  assert.equal(f.openDataBytes, 4);
  f.reset();
  assert.equal(f.openDataBytes, 0);
  f.push(b, 0, b.length);
  f.finish();
  assert.equal(f.openDataBytes, 0);
  const g = feeder();
  g.push(Buffer.from('data: a\n\n'), 0, 9);
  g.passedRaw();
  g.push(b, 0, b.length);
  assert.equal(g.openDataBytes, 4);
});

/**
 * What eventsource-parser holds joined after the complete lines of `bytes`: the length of the
 * data of the event a blank line would dispatch now (a fresh parser, fed them and a line break
 * or two), -1 when it would dispatch none (no data line since the last blank line).
 */
function parserHeld(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] !== LF && bytes[end - 1] !== CR) end--;
  let data = -1;
  const p = createParser({ onEvent: (ev) => (data = ev.data.length) });
  p.feed(bytes.subarray(0, end).toString('latin1'));
  data = -1;
  // A last CR's LF may be the next byte: one more LF makes the blank line either way.
  p.feed(bytes[end - 1] === CR ? '\n\n' : '\n');
  return data;
}

/** A deterministic pseudo-random generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

test('fuzz: any stream of data, comment, event, id lines and blank lines with any line breaks, cut anywhere: the count is what eventsource-parser holds, plus one', () => {
  const breaks = ['\n', '\r\n', '\r'];
  const lines = ['data: x', 'data:yy', 'data', 'data:', 'data:  w', 'data: ' + 'z'.repeat(40), ': c', 'event: e', 'id: 1', 'datax: 1', ''];
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const lineBreaks = r() < 0.5 ? ['\n'] : r() < 0.5 ? breaks : [breaks[Math.floor(r() * 3)]!];
    let text = '';
    const n = 1 + Math.floor(r() * 40);
    for (let k = 0; k < n; k++) text += lines[Math.floor(r() * lines.length)]! + lineBreaks[Math.floor(r() * lineBreaks.length)]!;
    const stream = Buffer.from(text, 'latin1');
    const f = feeder();
    let at = 0;
    while (at < stream.length) {
      const end = Math.min(stream.length, at + 1 + Math.floor(r() * 12));
      // Sometimes a range of a larger buffer (the stage's ranges of one chunk).
      if (r() < 0.3) {
        const padded = Buffer.concat([Buffer.from('\n\n'), stream.subarray(at, end), Buffer.from('data: pad\n')]);
        f.push(padded, 2, 2 + end - at);
      } else f.push(Buffer.from(stream.subarray(at, end)), 0, end - at);
      at = end;
      const sofar = stream.subarray(0, at);
      const held = parserHeld(sofar);
      assert.equal(f.openDataBytes, held === -1 ? 0 : held + 1, `seed ${seed}, ${JSON.stringify(sofar.toString('latin1'))}`);
    }
  }
});
