/**
 * The SSE frame batch (src/response/sse-encode.ts) frames a small event whose data is one
 * line of bytes (the response event of a one-event answer, issue 5) as one Buffer with the
 * text before it: a batch ending with it is one `write` (each write to an HTTP response is
 * framed as its own chunk and goes through the socket's write path: three corked writes per
 * one-event answer before). Larger or multi-line data stays a part of its own, uncopied.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_EVENT_DATA_BYTES, SseFrameBatch, encodeSseEvent, type SseSink } from '../../src/response/sse-encode.js';

function sink(): SseSink & { chunks: Array<string | Uint8Array>; text: () => string } {
  const chunks: Array<string | Uint8Array> = [];
  return {
    chunks,
    write(chunk, encoding) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding).toString('utf8') : chunk);
      return true;
    },
    text: () => chunks.map((c) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'))).join(''),
  };
}

test('a small one-line event of bytes, after text events: one write of one Buffer, byte for byte', () => {
  const data = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"é ✓"}]}}');
  for (const head of [{}, { event: 'message' }, { id: 'tök', event: 'message' }, { id: '' }]) {
    const batch = new SseFrameBatch();
    batch.event({ event: 'message', data: '{"progress":1}' });
    batch.frame(': keep-alive ✓\n');
    batch.eventBytes(head, data);
    const s = sink();
    const { bytes } = batch.flush(s);
    const expected = encodeSseEvent({ event: 'message', data: '{"progress":1}' }) + ': keep-alive ✓\n' + encodeSseEvent({ ...head, data: data.toString('utf8') });
    assert.equal(s.chunks.length, 1, JSON.stringify(head));
    assert.ok(Buffer.isBuffer(s.chunks[0]));
    assert.equal(s.text(), expected);
    assert.equal(bytes, Buffer.byteLength(expected));
  }
});

test('after raw blocks: the raw view stays uncopied, the event and its text are one Buffer', () => {
  const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
  const batch = new SseFrameBatch();
  batch.raw(chunk, 0, 18);
  batch.eventBytes({ event: 'message' }, Buffer.from('{"id":1}'));
  const s = sink();
  batch.flush(s);
  assert.equal(s.chunks.length, 2);
  assert.equal((s.chunks[0] as Buffer).buffer, chunk.buffer, 'a view of the seller chunk');
  assert.equal(s.text(), 'data: 1\n\ndata: 2\n\nevent: message\ndata: {"id":1}\n\n');
});

test('data over the small bound, or with a line break, is written uncopied as its own part', () => {
  const big = Buffer.alloc(SMALL_EVENT_DATA_BYTES + 1, 0x61);
  const multi = Buffer.from('{\n"id":1}');
  for (const data of [big, multi]) {
    const batch = new SseFrameBatch();
    batch.eventBytes({ event: 'message' }, data);
    const s = sink();
    batch.flush(s);
    assert.equal(s.text(), encodeSseEvent({ event: 'message', data: data.toString('utf8') }));
    assert.ok(
      s.chunks.some((c) => typeof c !== 'string' && c.buffer === data.buffer),
      'the data (or a view of it) is written as it is',
    );
  }
  // Exactly at the bound: still one Buffer.
  const batch = new SseFrameBatch();
  batch.eventBytes({}, Buffer.alloc(SMALL_EVENT_DATA_BYTES, 0x61));
  const s = sink();
  batch.flush(s);
  assert.equal(s.chunks.length, 1);
});
