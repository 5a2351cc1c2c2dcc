/**
 * SseIdFieldWatch and the one-chunk queries of SseBoundaryScanner (src/response/sse-boundaries.ts):
 * the SSE stage takes a chunk in one piece only when no event ending in it may carry an
 * `id:` (its resume token needs the exact count through its end). A missed id line would
 * give a token a wrong count, so every way an id line can arrive is tried here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseBoundaryScanner, SseIdFieldWatch } from '../../src/response/sse-boundaries.js';

/** Feeds `chunks` in order; returns the watch's answer for each. */
function answers(chunks: string[]): boolean[] {
  const scanner = new SseBoundaryScanner();
  const watch = new SseIdFieldWatch();
  return chunks.map((c) => {
    const b = Buffer.from(c);
    const last = scanner.lastEnd(b);
    const r = watch.check(b, last);
    scanner.advance(b);
    return r;
  });
}

test('no id line: false (an "id" key in JSON data is not one)', () => {
  assert.deepEqual(answers(['event: message\ndata: {"id":1,"x":"a"}\n\n', 'data: {"valid":true}\n\n']), [false, false]);
});

test('an id line anywhere in the chunk: true', () => {
  assert.deepEqual(answers(['data: a\n\n', 'id: 7\ndata: b\n\n', 'data: c\n\nid: 8\ndata: d\n\n']), [false, true, true]);
  assert.deepEqual(answers(['data: a\r\rid: 7\rdata: b\r\r']), [true]);
  assert.deepEqual(answers(['id: 1\n']), [true]);
});

test('an id line split over chunk edges: every cut', () => {
  const stream = 'data: a\n\nid: 42\ndata: b\n\ndata: c\n\n';
  for (let cut = 1; cut < stream.length; cut++) {
    const r = answers([stream.slice(0, cut), stream.slice(cut)]);
    // The event with the id ends in the chunk holding its blank line (offset 25).
    const endsIn = cut < 25 ? 1 : 0;
    assert.equal(r[endsIn], true, `cut ${cut}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(answers(['data: a\n\ni', 'd', ': 5\ndata: b\n\n']), [false, true, true]);
});

test('an id line carried over: the chunk where its event ends says true, the next one false', () => {
  assert.deepEqual(answers(['data: a\n\nid: 9\n', 'data: b\n', '\n', 'data: c\n\n']), [true, true, true, false]);
});

test('an id line at the very start of the stream, after a BOM', () => {
  assert.deepEqual(answers(['\ufeffid: 1\ndata: a\n\n']), [true]);
});

test('firstEnd, lastEnd and endsIn agree with ends over any chunking', () => {
  const stream = 'data: a\n\n: c\ndata: b\r\n\r\nid: 1\ndata: c\n\n\n\ndata: d\n\r\n';
  const bytes = Buffer.from(stream);
  for (let size = 1; size <= 9; size++) {
    const a = new SseBoundaryScanner();
    const b = new SseBoundaryScanner();
    for (let at = 0; at < bytes.length; at += size) {
      const chunk = bytes.subarray(at, at + size);
      const all = b.endsIn(chunk);
      assert.equal(b.firstEnd(chunk), all.length ? all[0] : -1);
      assert.equal(b.lastEnd(chunk), all.length ? all[all.length - 1] : -1);
      b.advance(chunk);
      assert.deepEqual(all, a.ends(chunk), `size ${size} at ${at}`);
    }
  }
});

test('pass: moving past a chunk without asking leaves the watch where check would', () => {
  // Every stream cut at every offset: after `pass` on the first chunk, the second chunk gets
  // the same answer as after `check` (the carried-over id line included).
  const streams = ['data: a\n\nid: 42\ndata: b\n\ndata: c\n\n', 'data: a\n\ndata: b\n\nid: 7\n', 'data: a\n\ndata: x\ni', 'data: a\n\ndata: x\nid', 'id: 1\ndata: a\n\nid: 2\n'];
  for (const stream of streams) {
    for (let cut = 1; cut < stream.length; cut++) {
      const a = Buffer.from(stream.slice(0, cut));
      const b = Buffer.from(stream.slice(cut));
      const last = new SseBoundaryScanner().lastEnd(a);
      const checked = new SseIdFieldWatch();
      const passed = new SseIdFieldWatch();
      checked.check(a, last);
      passed.pass(a, last);
      const lastB = (() => {
        const s = new SseBoundaryScanner();
        s.advance(a);
        return s.lastEnd(b);
      })();
      assert.equal(passed.check(b, lastB), checked.check(b, lastB), `${JSON.stringify(stream)} cut ${cut}`);
    }
  }
});
