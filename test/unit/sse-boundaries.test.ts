import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseBoundaryScanner } from '../../src/response/sse-boundaries.js';

const b = (s: string) => Buffer.from(s);

test('finds LF LF and LF CR LF boundaries inside one chunk', () => {
  const s = new SseBoundaryScanner();
  assert.deepEqual(s.ends(b('data: a\n\ndata: b\r\n\r\nid: x')), [9, 20]);
});

test('finds a boundary split across chunks, including a one-byte chunk', () => {
  const s = new SseBoundaryScanner();
  assert.deepEqual(s.ends(b('data: a\n')), []);
  assert.deepEqual(s.ends(b('\n')), [1]);
  assert.deepEqual(s.ends(b('data: b\r\n\r')), []);
  assert.deepEqual(s.ends(b('\ndata: c')), [1]);
});

test('a single LF is a line end, not an event end', () => {
  const s = new SseBoundaryScanner();
  assert.deepEqual(s.ends(b('id: 1\ndata: x\nevent: y\n')), []);
});
