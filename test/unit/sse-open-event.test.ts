/**
 * The open event's data lines (src/response/sse-open-event.ts), through the line feeder that
 * counts them (sse-boundaries.ts SseLineFeeder.openDataBytes): what the parser holds for an
 * event not yet dispatched, counted as heap for the agent's buffered-bytes cap (a hostile new
 * user's trial 10, F3: test/regressions/sse-event-lines-escape-buffer-cap.test.ts) and bounded
 * (SseLineFeeder.maxOpenBytes: hostile trial 52, F1,
 * test/regressions/sse-empty-data-lines-heap-uncounted.test.ts): the bytes of each part of
 * the open block handed to the parser that holds a `data` line (twice when not ASCII), and
 * D = 104 per `data` line, O = 64 for a one-byte value, E = 32 for an empty one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';
import { DATA_LINE_HEAP_BYTES as D, EMPTY_DATA_LINE_HEAP_BYTES as E, ONE_BYTE_DATA_LINE_HEAP_BYTES as O } from '../../src/response/sse-open-event.js';

const LF = 0x0a;
const CR = 0x0d;

function feeder(): SseLineFeeder {
  return new SseLineFeeder(() => {}, 1 << 28);
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

test('the complete data lines of the open event are counted as the parser holds them (the part of each chunk that holds them, D, O or E per line); its blank line ends the count', () => {
  assert.deepEqual(counts('data: a\n', 'data:bb\n', 'data:  ccc\n\n'), [8 + O, 16 + O + D, 0]);
  // One chunk of many complete lines, no blank line: all of them.
  assert.deepEqual(counts(`${'data: 0123456789\n'.repeat(100)}`), [1700 + 100 * D]);
  // Whole events then the next one's first lines: only the open one's part (its `event:` line included).
  assert.deepEqual(counts('data: 1\n\ndata: 2\ndata: 3\n\nevent: x\ndata: 4\n'), [17 + O]);
  // `data` alone is a data line (an empty one), as `data:`; `datax:` and `Data:` are other fields.
  assert.deepEqual(counts('data\ndata:\ndatax: 1\nData: 2\n'), [28 + 2 * E]);
  // A part that is not ASCII counts twice its bytes (it may be a two-byte string).
  const euro = Buffer.from('data: \u20ac\n');
  const f = feeder();
  f.push(euro, 0, euro.length);
  assert.equal(f.openDataBytes, 2 * euro.length + D);
});

test('the incomplete line is not counted here (SseLineFeeder.pendingBytes counts it) until its line ends', () => {
  const f = feeder();
  const push = (s: string): void => {
    const b = Buffer.from(s, 'latin1');
    f.push(b, 0, b.length);
  };
  push('data: a\ndata: xx');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [8 + O, 8]);
  push('xx');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [8 + O, 10]);
  push('\n');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [8 + O + 11 + D, 0]);
  push('\n');
  assert.deepEqual([f.openDataBytes, f.pendingBytes], [0, 0]);
});

test('comments and unknown fields hold nothing in the parser: a block of them without a blank line counts 0; in a part with a data line, their bytes count with it', () => {
  assert.deepEqual(counts(': ping\n', ': ping\n', 'retry: 10\nfoo: bar\n'), [0, 0, 0]);
  assert.deepEqual(counts(': ping\ndata: a\n: ping\n'), [22 + O]);
  // A data line then a comment in the next chunk: that chunk holds no data line.
  assert.deepEqual(counts('data: a\n', `:${'c'.repeat(100)}\n`), [8 + O, 8 + O]);
});

test('the block\'s last event and id values count the text holding them (the re-read of trial 52\'s fix, A): a later event: line replaces the former, an empty one releases it, an id holding NUL is ignored', () => {
  // A part holding them and no data line: a text of its own, counted once for both.
  assert.deepEqual(counts(': ping\n', 'event: x\nid: 7\nretry: 10\nfoo: bar\n'), [0, 34]);
  // One value kept per field: the second event: line replaces the first (its text is freed).
  assert.deepEqual(counts('event: a\n', 'event: bb\n', 'id: 1\n'), [9, 10, 16]);
  // Both in one text, then a new event value in another: the first text is kept by the id.
  assert.deepEqual(counts('event: a\nid: 1\n', 'event: b\n'), [15, 24]);
  // Empty values release what was kept (`event:` is no type, `id` alone the empty id).
  assert.deepEqual(counts('event: a\n', 'event:\n', 'id: 1\n', 'id\n'), [9, 0, 6, 0]);
  // An id holding NUL is ignored by the parser: the former id stays, and so does its count.
  assert.deepEqual(counts('id: 1\n', 'id: \0\n', 'id: x\0y\n'), [6, 6, 6]);
  // In a part with a data line they count with it; a later event: line on its own counts its text.
  assert.deepEqual(counts('data: a\nevent: x\nid: 1\n', 'event: y\n'), [23 + O, 23 + O + 9]);
  // A held line (over chunk edges): its whole text.
  assert.deepEqual(counts('id: ab', 'cd\n'), [0, 9]);
  // Their blank line ends them, as the data's.
  assert.deepEqual(counts('event: a\nid: 1\n', '\n'), [15, 0]);
});

test('an id line in a text with a CR counts that text twice (the id-only watch slices the text, the parser its copy with LF line breaks); non-ASCII twice; a leading BOM is read past', () => {
  assert.deepEqual(counts('id: 1\r', 'event: a\r'), [12, 21]);
  assert.deepEqual(counts('data: a\rid: 1\r'), [14 + O + 14]);
  const push = (f: SseLineFeeder, s: string): number => {
    const b = Buffer.from(s, 'utf8');
    f.push(b, 0, b.length);
    return f.openDataBytes;
  };
  assert.equal(push(feeder(), 'event: \u20ac\n'), 2 * 11);
  assert.equal(push(feeder(), '\ufeffid: 1\n'), 2 * 9);
});

test('CR LF and CR line breaks, a CR LF or a blank line split across chunks', () => {
  assert.deepEqual(counts('data: a\r\n', 'data: b\r\n', '\r\n'), [9 + O, 18 + 2 * O, 0]);
  // The LF of a CR LF that starts a part counts with it (the parser gets the part without it).
  assert.deepEqual(counts('data: a\r', '\ndata: b\r', '\n', '\r', '\n'), [8 + O, 17 + 2 * O, 17 + 2 * O, 0, 0]);
  assert.deepEqual(counts('data: a\r', 'data: b\r', '\r'), [8 + O, 16 + 2 * O, 0]);
  assert.deepEqual(counts('data: a\n', '\n', 'data: b\n'), [8 + O, 0, 8 + O]);
  assert.deepEqual(counts('data: a\r\n\r', '\ndata: b\r\n'), [0, 10 + O]);
  assert.deepEqual(counts('data: a\r\ndata: b\n\rdata: c\r'), [8 + O]);
});

test('a held line (over chunk edges) completed counts as its data line: its bytes and line break, D', () => {
  assert.deepEqual(counts('data: ab', 'cd\ndata: e', 'f\n', '\n'), [0, 11 + D, 11 + D + 9 + D, 0]);
});

test('the part of a chunk that holds the open event\'s data lines goes to the parser as a text of its own, after the events before it', () => {
  const texts: string[] = [];
  const f = new SseLineFeeder((t) => texts.push(t), 1 << 20);
  const chunk = Buffer.from(`data: 1\n\n:${'c'.repeat(50)}\ndata: ${'x'.repeat(20)}\n`);
  f.push(chunk, 0, chunk.length);
  assert.deepEqual(texts, ['data: 1\n\n', `:${'c'.repeat(50)}\ndata: ${'x'.repeat(20)}\n`]);
  // A range without an open data line: one text, as before.
  texts.length = 0;
  const g = new SseLineFeeder((t) => texts.push(t), 1 << 20);
  const whole = Buffer.from('data: 1\n\n: c\n');
  g.push(whole, 0, whole.length);
  assert.deepEqual(texts, ['data: 1\n\n: c\n']);
});

test('over maxOpenBytes (four times the line cap), the part that would take the count over is not handed over: push is false, breach memory, with the count it would have made', () => {
  const texts: string[] = [];
  const cap = 1000;
  const f = new SseLineFeeder((t) => texts.push(t), cap);
  assert.equal(f.maxOpenBytes, 4 * cap);
  // 6 + 32 = 38 per empty line in chunks of 10 lines (380): 10 chunks fit (3800), the 11th does not (4180).
  const ten = Buffer.from('data:\n'.repeat(10));
  for (let k = 1; k <= 10; k++) {
    assert.equal(f.push(ten, 0, ten.length), true);
    assert.equal(f.openDataBytes, 380 * k);
  }
  assert.equal(f.push(ten, 0, ten.length), false);
  assert.deepEqual([f.breach, f.droppedOpenBytes, texts.length], ['memory', 4180, 10]);
  // The events before the part still went out: a closed event, then an open part over the bound.
  const g = new SseLineFeeder((t) => texts.push(t), cap);
  texts.length = 0;
  const mixed = Buffer.concat([Buffer.from('data: 1\n\n'), Buffer.from('data:\n'.repeat(120))]);
  assert.equal(g.push(mixed, 0, mixed.length), false);
  assert.deepEqual([g.breach, g.droppedOpenBytes, texts], ['memory', 120 * 38, ['data: 1\n\n']]);
  // A held line completed over the bound: not handed over either.
  const h = new SseLineFeeder((t) => texts.push(t), cap);
  texts.length = 0;
  const hundred = Buffer.from('data:\n'.repeat(100));
  assert.equal(h.push(hundred, 0, hundred.length), true);
  const line = Buffer.from(`data: ${'y'.repeat(400)}`);
  assert.equal(h.push(line, 0, line.length), true);
  assert.equal(h.push(Buffer.from('\n'), 0, 1), false);
  assert.deepEqual([h.breach, h.droppedOpenBytes, texts], ['memory', 100 * 38 + line.length + 1 + D, ['data:\n'.repeat(100)]]);
  // A line over the line cap is the line breach, as before.
  const l = new SseLineFeeder(() => {}, cap);
  const long = Buffer.from(`data: ${'z'.repeat(cap)}`);
  assert.equal(l.push(long, 0, long.length), false);
  assert.deepEqual([l.breach, l.droppedLineBytes], ['line', long.length]);
});

test('0 after raw-forwarded blocks, a reset and the stream end', () => {
  const f = feeder();
  const b = Buffer.from('data: a\ndata: b\n', 'latin1');
  f.push(b, 0, b.length);
  assert.equal(f.openDataBytes, 16 + 2 * O);
  f.reset();
  assert.equal(f.openDataBytes, 0);
  f.push(b, 0, b.length);
  f.finish();
  assert.equal(f.openDataBytes, 0);
  const g = feeder();
  g.push(Buffer.from('data: a\n\n'), 0, 9);
  g.passedRaw();
  g.push(b, 0, b.length);
  assert.equal(g.openDataBytes, 16 + 2 * O);
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

/**
 * Whether eventsource-parser keeps an `event` or `id` value (non-empty) of the open block after
 * the complete lines of `bytes`: a fresh parser fed them, then a data line and a blank line,
 * dispatches the block's values with it.
 */
function parserKept(bytes: Buffer): boolean {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] !== LF && bytes[end - 1] !== CR) end--;
  let kept = false;
  const p = createParser({ onEvent: (ev) => (kept = ev.event !== undefined || (ev.id !== undefined && ev.id !== '')) });
  p.feed(bytes.subarray(0, end).toString('latin1'));
  kept = false;
  // A last CR's LF may be the next byte: an LF first is that line break either way.
  p.feed(`${bytes[end - 1] === CR ? '\n' : ''}data: z\n\n`);
  return kept;
}

/**
 * The open block of the complete lines of `bytes` (ASCII), read line by line (WHATWG HTML
 * §9.2.6 line breaks): `heap`, D, O or E per `data` line; `lines`, those lines' bytes without
 * their breaks (the least the parts counted hold); `block`, the bytes since the last blank
 * line, one more (a part may start with the LF of that blank line's CR LF: the most).
 */
function openBlock(bytes: Buffer): { heap: number; lines: number; block: number } {
  let heap = 0;
  let lines = 0;
  let blockStart = 0;
  let i = 0;
  let lineStart = 0;
  let prevBreakEnd = -1;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b !== LF && b !== CR) {
      i++;
      continue;
    }
    const breakEnd = b === CR && bytes[i + 1] === LF ? i + 2 : i + 1;
    if (i === lineStart && prevBreakEnd === lineStart) {
      heap = 0;
      lines = 0;
      blockStart = breakEnd;
    } else {
      const line = bytes.toString('latin1', lineStart, i);
      if (line === 'data' || line.startsWith('data:')) {
        const value = line.length <= 5 ? 0 : line.length - (line[5] === ' ' ? 6 : 5);
        heap += value === 0 ? E : value === 1 ? O : D;
        lines += line.length;
      }
    }
    prevBreakEnd = breakEnd;
    lineStart = breakEnd;
    i = breakEnd;
  }
  // The stream's start is a line start: a first empty line is a blank line too.
  return { heap, lines, block: Math.min(bytes.length, lineStart) - blockStart + 1 };
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

test('fuzz: any stream of data, comment, event, id lines and blank lines with any line breaks, cut anywhere: the count is 0 exactly when eventsource-parser holds nothing, else its D, O and E per data line and between those lines\' bytes and the block\'s (twice with a CR: an id\'s text)', () => {
  const breaks = ['\n', '\r\n', '\r'];
  const lines = ['data: x', 'data:yy', 'data', 'data:', 'data:  w', 'data: ' + 'z'.repeat(40), ': c', 'event: e', 'event:', 'id: 1', 'id', 'datax: 1', ''];
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
      const label = `seed ${seed}, ${JSON.stringify(sofar.toString('latin1'))}`;
      const held = parserHeld(sofar);
      const kept = parserKept(sofar);
      const open = openBlock(sofar);
      assert.equal(open.heap === 0, held === -1, `reference: ${label}`);
      if (held === -1 && !kept) {
        assert.equal(f.openDataBytes, 0, label);
        continue;
      }
      assert.ok(f.openDataBytes > 0, label);
      const parts = f.openDataBytes - open.heap;
      const most = sofar.includes(CR) ? 2 * open.block : open.block;
      assert.ok(parts >= open.lines && parts <= most, `${f.openDataBytes} - ${open.heap} within [${open.lines}, ${most}]: ${label}`);
    }
  }
});
