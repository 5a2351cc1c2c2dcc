/**
 * SseLineFeeder (src/response/sse-boundaries.ts): complete lines go to the parser at once as
 * text; an incomplete last line waits as raw bytes, capped; UTF-8 survives any chunking.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';

function feeder(max = 1024): { f: SseLineFeeder; got: string[] } {
  const got: string[] = [];
  return { f: new SseLineFeeder((t) => got.push(t), max), got };
}
const push = (f: SseLineFeeder, s: string | Buffer): boolean => {
  const b = typeof s === 'string' ? Buffer.from(s) : s;
  return f.push(b, 0, b.length);
};

test('complete lines are handed over at once; the incomplete last line waits', () => {
  const { f, got } = feeder();
  assert.equal(push(f, 'event: message\ndata: {"a"'), true);
  assert.deepEqual(got, ['event: message\n']);
  assert.equal(f.pendingBytes, 10);
  assert.equal(push(f, ':1}\n\n: keep'), true);
  // The held line comes first, whole, with its line break, then the lines after it.
  assert.deepEqual(got, ['event: message\n', 'data: {"a":1}\n', '\n']);
  assert.equal(f.pendingBytes, 6);
  f.finish();
  assert.deepEqual(got.slice(3), [': keep', '\n']);
  assert.equal(f.pendingBytes, 0);
});

test('a range of a chunk: only those bytes', () => {
  const { f, got } = feeder();
  const b = Buffer.from('xxdata: 1\n\nyy');
  f.push(b, 2, 11);
  assert.deepEqual(got, ['data: 1\n\n']);
});

test('a CR is a line end too (a CR LF split across chunks included): a last CR goes out as CR LF, its LF is dropped', () => {
  const { f, got } = feeder();
  push(f, 'data: a\r');
  push(f, '\ndata: b\r\r');
  push(f, '\n');
  push(f, '\n');
  assert.deepEqual(got, ['data: a\r\n', 'data: b\r\r\n', '\n']);
  assert.equal(f.pendingBytes, 0);
});

test('finish: a line break after the held line, nothing after a last CR', () => {
  const a = feeder();
  push(a.f, 'data: a\n\ndata: b');
  a.f.finish();
  assert.deepEqual(a.got, ['data: a\n\n', 'data: b', '\n']);
  const b = feeder();
  push(b.f, 'data: a\r\r');
  b.f.finish();
  assert.deepEqual(b.got, ['data: a\r\r\n']);
});

test('the held line is capped: exactly the cap is held, one byte more drops it', () => {
  const { f, got } = feeder(10);
  assert.equal(push(f, 'data: 1234'), true); // 10 bytes
  assert.equal(f.pendingBytes, 10);
  assert.equal(push(f, '5'), false);
  assert.equal(f.pendingBytes, 0);
  assert.equal(f.droppedLineBytes, 11);
  assert.deepEqual(got, []);
});

test('a dropped line is counted through the end of the range that crossed the cap, not stopped at it', () => {
  const { f } = feeder(10);
  assert.equal(f.droppedLineBytes, 0);
  assert.equal(push(f, 'data: 12'), true);
  assert.equal(push(f, '345678'), false);
  assert.equal(f.droppedLineBytes, 14);
});

test('an endless line is held as the chunks it came in, never decoded', () => {
  const { f, got } = feeder(64 * 1024 + 100);
  const piece = Buffer.alloc(16 * 1024, 0x41);
  for (let i = 0; i < 4; i++) assert.equal(f.push(piece, 0, piece.length), true);
  assert.equal(f.pendingBytes, 64 * 1024);
  assert.deepEqual(got, []);
  assert.equal(f.push(piece, 0, piece.length), false);
});

test('UTF-8 characters split across chunks decode intact, also inside a held line', () => {
  const text = 'data: é€😀 ünïcödé\n\ndata: plain\n\n';
  const bytes = Buffer.from(text);
  for (let cut1 = 1; cut1 < bytes.length - 1; cut1++) {
    for (const cut2 of [cut1 + 1, Math.min(bytes.length - 1, cut1 + 7)]) {
      const { f, got } = feeder();
      f.push(bytes, 0, cut1);
      f.push(bytes, cut1, cut2);
      f.push(bytes, cut2, bytes.length);
      assert.equal(got.join(''), text, `cuts at ${cut1}, ${cut2}`);
    }
  }
});

test('ASCII chunks after a non-ASCII one: the decoder state is honoured', () => {
  const { f, got } = feeder();
  const euro = Buffer.from('€'); // 3 bytes
  push(f, Buffer.concat([Buffer.from('data: '), euro.subarray(0, 1)]));
  push(f, euro.subarray(1, 3));
  push(f, 'x\n\n');
  push(f, 'data: y\n\n');
  assert.equal(got.join(''), 'data: €x\n\ndata: y\n\n');
});

test('a BOM is dropped at the start of the stream only', () => {
  const { f, got } = feeder();
  push(f, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: a\n\n')]));
  push(f, Buffer.concat([Buffer.from('data: '), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('b\n\n')]));
  assert.equal(got.join(''), 'data: a\n\ndata: \ufeffb\n\n');
});

test('invalid UTF-8 becomes U+FFFD, as the streaming decoder makes it', () => {
  const { f, got } = feeder();
  push(f, Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0x0a, 0x0a]));
  assert.equal(got.join(''), 'data: \ufffd\n\n');
});

test('reset drops the held line and a partial character', () => {
  const { f, got } = feeder();
  push(f, Buffer.concat([Buffer.from('data: x'), Buffer.from('€').subarray(0, 2)]));
  f.reset();
  assert.equal(f.pendingBytes, 0);
  push(f, 'data: y\n\n');
  assert.deepEqual(got, ['data: y\n\n']);
});

test('one Buffer object handed out again with new bytes is decoded anew', () => {
  const { f, got } = feeder();
  const buf = Buffer.from('data: 1\n\n');
  push(f, 'data: 0\n\n'); // past the decoder's first bytes: ASCII chunks take the cached path
  f.push(buf, 0, buf.length);
  buf.write('data: 2\n\n');
  f.push(buf, 0, buf.length);
  assert.deepEqual(got, ['data: 0\n\n', 'data: 1\n\n', 'data: 2\n\n']);
});

test('a data line held over chunk edges is handed over whole, and its bytes are kept for the stage once', () => {
  const { f, got } = feeder();
  push(f, 'event: message\ndata: {"a":');
  push(f, '"é"');
  push(f, '}\n\n');
  assert.deepEqual(got, ['event: message\n', 'data: {"a":"é"}\n', '\n']);
  const line = f.takeCompletedLine()!;
  assert.equal(line.bytes.toString(), 'data: {"a":"é"}');
  assert.equal(line.textLength, 'data: {"a":"é"}'.length);
  assert.equal(line.utf8, true);
  assert.equal(f.takeCompletedLine(), undefined, 'once');
});

test('no completed line for a line that was not held, a held line that is not data, or after reset', () => {
  const { f } = feeder();
  push(f, 'data: 1\n\n');
  assert.equal(f.takeCompletedLine(), undefined);
  push(f, ': a comm');
  push(f, 'ent\n');
  assert.equal(f.takeCompletedLine(), undefined);
  push(f, 'data: x');
  push(f, 'y\n');
  f.reset();
  assert.equal(f.takeCompletedLine(), undefined);
});

test('a completed line: invalid UTF-8 is flagged; the end of the stream completes a held line', () => {
  const { f, got } = feeder();
  push(f, 'data: 0\n\n');
  push(f, Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff]));
  push(f, '\n\n');
  assert.equal(f.takeCompletedLine()!.utf8, false);
  push(f, 'data: la');
  push(f, 'st');
  f.finish();
  assert.deepEqual(got.slice(-2), ['data: last', '\n']);
  assert.equal(f.takeCompletedLine()!.bytes.toString(), 'data: last');
});

test('a held line ended by CR LF: handed over through the CR (as CR LF), the LF is dropped from the rest', () => {
  const { f, got } = feeder();
  push(f, 'data: a');
  push(f, 'b\r\ndata: c\n\n');
  assert.deepEqual(got, ['data: ab\r\n', 'data: c\n\n']);
  assert.equal(f.takeCompletedLine()!.bytes.toString(), 'data: ab');
});

test('ranges of one chunk: each decoded alone or from the cached rest, the same text either way', () => {
  const chunk = Buffer.from('data: a\n\ndata: é\n\ndata: b\n\ndata: c\n\n');
  const ends = [9, 19, 28, chunk.length];
  for (let first = 0; first < ends.length; first++) {
    const { f, got } = feeder();
    push(f, 'data: 0\n\n'); // past the stream's first bytes (the BOM check)
    let at = first === 0 ? 0 : ends[first - 1]!;
    for (const end of ends.slice(first)) {
      f.push(chunk, at, end);
      at = end;
    }
    assert.equal(got.slice(1).join(''), chunk.toString('utf8', first === 0 ? 0 : ends[first - 1]!), `from range ${first}`);
  }
});

test('nextChunk: a Buffer object handed out again is decoded anew even when its first range is not at 0', () => {
  const { f, got } = feeder();
  push(f, 'data: 0\n\n');
  const buf = Buffer.from('xxxxdata: 1\n\ndata: 2\n\n');
  f.push(buf, 4, 13);
  f.push(buf, 13, buf.length);
  // New bytes, pushed from the offset the cached text started at.
  buf.write('yyyydata: 3\n\ndata: 4\n\n');
  f.nextChunk();
  f.push(buf, 13, buf.length);
  assert.deepEqual(got, ['data: 0\n\n', 'data: 1\n\n', 'data: 2\n\n', 'data: 4\n\n']);
});

/**
 * The events a WHATWG SSE parser has dispatched once it has read `text` (HTML §9.2.6): lines
 * end at CR LF, LF or CR (a CR that ends the text ends a line: it needs no next byte); a
 * blank line dispatches the event when it has data. Only `data`, `id` and `event` matter here.
 */
function dispatchedBy(text: string): { data: string; id?: string; event?: string }[] {
  const out: { data: string; id?: string; event?: string }[] = [];
  let data: string[] = [];
  let id: string | undefined;
  let event: string | undefined;
  const re = /([^\r\n]*)(\r\n|\r|\n)/y;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const line = m[1]!;
    if (line === '') {
      if (data.length > 0) out.push({ data: data.join('\n'), ...(id === undefined ? {} : { id }), ...(event === undefined ? {} : { event }) });
      data = [];
      id = undefined;
      event = undefined;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
    else if (field === 'event') event = value || undefined;
  }
  return out;
}

test('regression "an event ended by CRs waits for the next line": through eventsource-parser, every event is dispatched as soon as its last line break arrives, at every split and with every line ending', () => {
  let seed = 7;
  const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const lines = ['data: {"a":1}', 'data:b', 'id: 7', ': ping', 'event: e', 'data: é'];
  const endings = ['\n', '\r', '\r\n'];
  for (let round = 0; round < 60; round++) {
    let text = '';
    for (let e = 0; e < 3; e++) {
      for (let l = 1 + rand(3); l > 0; l--) text += lines[rand(lines.length)]! + endings[rand(3)]!;
      text += endings[rand(3)]!;
    }
    const bytes = Buffer.from(text);
    for (let k = 0; k <= bytes.length; k++) {
      const events: { data: string; id?: string; event?: string }[] = [];
      const parser = createParser({ onEvent: (ev) => events.push({ data: ev.data, ...(ev.id === undefined ? {} : { id: ev.id }), ...(ev.event === undefined ? {} : { event: ev.event }) }) });
      const f = new SseLineFeeder((t) => parser.feed(t), 1024);
      f.push(bytes, 0, k);
      const prefix = bytes.subarray(0, k).toString();
      // A split inside a character: the reference sees the complete characters only.
      assert.deepEqual(events, dispatchedBy(prefix.replace(/\uFFFD$/, '')), `${JSON.stringify(text)} split at ${k}`);
      f.nextChunk();
      f.push(bytes, k, bytes.length);
      assert.deepEqual(events, dispatchedBy(text), `${JSON.stringify(text)} split at ${k}, whole`);
    }
  }
});

test('lfExpected: only during the sink call for a text ending with a CR after a line break, that CR the last byte pushed', () => {
  // sse-stage.ts counts that LF in the resume token of an event dispatched at that CR
  // (test/regressions/sse-crlf-split-token-undercount.test.ts).
  const seen: Array<[string, boolean]> = [];
  const f: SseLineFeeder = new SseLineFeeder((t) => seen.push([t, f.lfExpected]), 1024);
  const cases: Array<[string, boolean]> = [
    ['data: a\r\n\r', true], // CR LF endings, the blank line's LF still to come
    ['\ndata: b\r\r', true], // a CR after a lone CR: an LF may follow (a CR LF blank line after a CR-ended line; one byte over if not)
    ['\ndata: b2\r', false], // a CR ending a data line: no blank line, no event here
    ['data: c\n\r', true], // a CR after an LF-ended line (one byte over if no LF follows)
    ['\ndata: d\r\n\rdata: e', false], // the CR is followed by another byte of the range
  ];
  for (const [bytes, expected] of cases) {
    seen.length = 0;
    push(f, bytes);
    assert.equal(seen.at(-1)![1], expected, JSON.stringify(bytes));
  }
  assert.equal(f.lfExpected, false, 'false once the sink returned');
  // A text of one CR: the character before it is the last of the text before.
  const g: SseLineFeeder = new SseLineFeeder((t) => seen.push([t, g.lfExpected]), 1024);
  seen.length = 0;
  push(g, 'data: f\r\n');
  push(g, '\r');
  assert.deepEqual(seen, [['data: f\r\n', false], ['\r\n', true]]);
});
