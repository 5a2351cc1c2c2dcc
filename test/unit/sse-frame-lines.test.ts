/**
 * frameLineEnds (src/response/sse-frame-lines.ts): where the SSE stage ends a piece on a
 * stream without a total, so that a comment's or `retry:` line's frame lowers the undelivered
 * count through its own line only (review of e72ea9d).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frameLineEnds } from '../../src/response/sse-frame-lines.js';

const ends = (text: string, head = '', from = 0, end?: number): number[] => {
  const chunk = Buffer.from(text, 'latin1');
  return [...frameLineEnds(chunk, from, end ?? chunk.length, Buffer.from(head, 'latin1'))];
};

test('comment and retry lines end a piece after their first line-break byte; other lines do not', () => {
  assert.deepEqual(ends('x: a\n: c\nretry: 10\nretry\ndata: x\n:\n\n'), [9, 19, 25, 35]);
  assert.deepEqual(ends('x: a\ndata: :\nid: r\nretr\n\n'), []);
});

test('CR and CR LF breaks: the end is after the CR (its LF counts with what follows)', () => {
  assert.deepEqual(ends(': c\r\nx\r: d\rretry: 5\r\n'), [4, 11, 20]);
});

test('a line not ended in the range is left out; the range bounds the search', () => {
  assert.deepEqual(ends(': c'), []);
  assert.deepEqual(ends('x\n: c\n: d\n', '', 2, 8), [6]);
});

test('a held line: its first bytes decide the first line', () => {
  assert.deepEqual(ends('ry: 9\nx\n', 'ret'), [6]);
  assert.deepEqual(ends(' c\n', ':'), [3]);
  assert.deepEqual(ends('a\n: c\n', 'x: aaaaa'), [6]);
});

test('after a BOM', () => {
  assert.deepEqual(ends('\xef\xbb\xbf: c\n'), [7]);
  assert.deepEqual(ends('\xef\xbb\xbfretry: 1\n'), [12]);
});
