/**
 * The SSE frame batch (src/response/sse-encode.ts) frames a small event whose data is one
 * line of bytes (the response event of a one-event answer, issue 5) as one Buffer with the
 * text before it: a batch ending with it is one `write` (each write to an HTTP response is
 * framed as its own chunk and goes through the socket's write path: three corked writes per
 * one-event answer before). Large data in a few lines stays uncopied, a part per line; data
 * of many lines is one Buffer (trial 13 H1: a part per line was 2,000,000 writes for one event).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_EVENT_DATA_BYTES, SseFrameBatch, VIEW_EVENT_MAX_LINES, encodeSseEvent, type SseSink } from '../../src/response/sse-encode.js';

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

/** Whether `c` is a view into `data`'s own bytes (not only the same pool slab: small Buffers share one). */
function viewOf(c: string | Uint8Array, data: Buffer): boolean {
  return typeof c !== 'string' && c.buffer === data.buffer && c.byteOffset >= data.byteOffset && c.byteOffset + c.length <= data.byteOffset + data.length;
}

test('large data in a few lines is written uncopied, each line a view of it', () => {
  const line = 'a'.repeat(SMALL_EVENT_DATA_BYTES + 1);
  for (const lines of [1, 2, VIEW_EVENT_MAX_LINES]) {
    const data = Buffer.from(Array.from({ length: lines }, () => line).join('\n'));
    const batch = new SseFrameBatch();
    batch.eventBytes({ event: 'message' }, data);
    const s = sink();
    batch.flush(s);
    assert.equal(s.text(), encodeSseEvent({ event: 'message', data: data.toString('utf8') }));
    assert.equal(s.chunks.filter((c) => viewOf(c, data)).length, lines, `${lines} line(s)`);
  }
});

test('small data of several lines, and data of more than VIEW_EVENT_MAX_LINES lines: one Buffer, byte for byte', () => {
  const many = Buffer.from(Array.from({ length: VIEW_EVENT_MAX_LINES + 1 }, (_, i) => (i % 2 === 0 ? 'a'.repeat(SMALL_EVENT_DATA_BYTES) : 'é✓')).join('\n'));
  const cases = [Buffer.from('{\n"id":1}'), Buffer.from('\n\n'), Buffer.from('x\n'.repeat(100_000)), many];
  for (const data of cases) {
    for (const lines of [undefined, data.toString('latin1').split('\n').length]) {
      const batch = new SseFrameBatch();
      batch.frame(': before\n');
      batch.eventBytes({ id: 'tök', event: 'message' }, data, lines);
      const s = sink();
      const { bytes } = batch.flush(s);
      const expected = ': before\n' + encodeSseEvent({ id: 'tök', event: 'message', data: data.toString('utf8') });
      assert.equal(s.chunks.length, 1, `${data.length} bytes, lines ${lines}`);
      assert.ok(!viewOf(s.chunks[0]!, data));
      assert.equal(s.text(), expected);
      assert.equal(bytes, Buffer.byteLength(expected));
    }
  }
});

test('data over the small bound in one line is written uncopied; exactly at the bound, one Buffer', () => {
  const big = Buffer.alloc(SMALL_EVENT_DATA_BYTES + 1, 0x61);
  const batchBig = new SseFrameBatch();
  batchBig.eventBytes({ event: 'message' }, big);
  const sb = sink();
  batchBig.flush(sb);
  assert.equal(sb.text(), encodeSseEvent({ event: 'message', data: big.toString('utf8') }));
  assert.ok(sb.chunks.some((c) => viewOf(c, big)), 'the data is written as it is');
  const batch = new SseFrameBatch();
  batch.eventBytes({}, Buffer.alloc(SMALL_EVENT_DATA_BYTES, 0x61));
  const s = sink();
  batch.flush(s);
  assert.equal(s.chunks.length, 1);
});
