/**
 * The SSE frame batch (src/response/sse-encode.ts) with byte parts: an event whose data is
 * bytes is written exactly as encodeSseEvent writes its text, raw blocks of one chunk
 * become one view of it, and a flush of several parts is written with the socket corked to the
 * end of the tick.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SSE_RETRY_MAX_MS, SSE_RETRY_MIN_MS, SseFrameBatch, clampSseRetryMs, encodeSseEvent, encodeSseRetry, sseRetryCeilingMs, type SseSink } from '../../src/response/sse-encode.js';

/** A sink recording what each write got and its socket's cork state around it. */
function sink(): SseSink & { calls: Array<{ chunk: string | Uint8Array; corked: boolean }>; text: () => string } {
  const socket = {
    writableCorked: 0,
    cork() {
      socket.writableCorked++;
    },
    uncork() {
      if (socket.writableCorked > 0) socket.writableCorked--;
    },
  };
  const calls: Array<{ chunk: string | Uint8Array; corked: boolean }> = [];
  return {
    calls,
    socket,
    write(chunk, encoding) {
      calls.push({ chunk: typeof chunk === 'string' ? Buffer.from(chunk, encoding).toString('utf8') : chunk, corked: socket.writableCorked > 0 });
      return true;
    },
    text: () => calls.map((c) => (typeof c.chunk === 'string' ? c.chunk : Buffer.from(c.chunk).toString('utf8'))).join(''),
  };
}

test('eventBytes writes the bytes encodeSseEvent writes for their text, one data line per LF', () => {
  for (const data of ['{"a":1}', '', '{\n  "a": "é✓"\n}', '\n', 'x\n\ny']) {
    for (const head of [{}, { event: 'message' }, { id: 'tok', event: 'message' }, { id: '' }]) {
      const batch = new SseFrameBatch();
      batch.eventBytes(head, Buffer.from(data));
      const s = sink();
      const { bytes } = batch.flush(s);
      const expected = encodeSseEvent({ ...head, data });
      assert.equal(s.text(), expected, JSON.stringify({ data, head }));
      assert.equal(bytes, Buffer.byteLength(expected));
    }
  }
});

test('raw blocks of one chunk, added in order, are written as one view of it', () => {
  const chunk = Buffer.from('data: 1\n\ndata: 2\n\ndata: 3\n\n');
  const batch = new SseFrameBatch();
  batch.raw(chunk, 0, 9);
  batch.raw(chunk, 9, 18);
  batch.raw(chunk, 18, 27);
  const s = sink();
  assert.deepEqual(batch.flush(s), { bytes: 27, full: false });
  assert.equal(s.calls.length, 1);
  const view = s.calls[0]!.chunk as Buffer;
  assert.equal(view.buffer, chunk.buffer);
  assert.equal(view.byteOffset, chunk.byteOffset);
  assert.equal(view.length, 27);
});

test('text and bytes: written in order with the socket corked, uncorked at the end of the tick, with the byte count', async () => {
  const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
  const batch = new SseFrameBatch();
  batch.raw(chunk, 0, 9);
  batch.frame(': c\n');
  batch.raw(chunk, 9, 18);
  batch.event({ event: 'message', data: 'é' });
  const s = sink();
  const { bytes } = batch.flush(s);
  assert.equal(s.text(), 'data: 1\n\n: c\ndata: 2\n\nevent: message\ndata: é\n\n');
  assert.equal(bytes, Buffer.byteLength(s.text()));
  assert.ok(s.calls.length > 1 && s.calls.every((c) => c.corked));
  assert.equal(s.socket!.writableCorked, 1, 'still corked: a later flush of this tick joins the same writev');
  await new Promise((resolve) => process.nextTick(resolve));
  assert.equal(s.socket!.writableCorked, 0);
  // Emptied: the next flush writes nothing.
  assert.deepEqual(batch.flush(s), { bytes: 0, full: false });
});

test('answerSoFar: nothing unless counting; then bytes written and queued, events (each raw block one), the comment lines since the last blank line (hostile trial 57, F2)', () => {
  const plain = new SseFrameBatch();
  plain.event({ data: 'x' });
  assert.equal(plain.answerSoFar(), undefined);

  const chunk = Buffer.from('data: 1\n\ndata: 2\n\nevent: e\ndata: 3\n\n');
  const batch = new SseFrameBatch();
  batch.countAnswer();
  batch.raw(chunk, 0, 9);
  batch.raw(chunk, 9, chunk.length);
  batch.frame(': é\n');
  const s = sink();
  const written = batch.flush(s).bytes;
  assert.deepEqual(batch.answerSoFar(), { bytes: written, events: 3 });
  batch.frame(':\n');
  assert.deepEqual(batch.answerSoFar(), { bytes: written + 2, events: 3 });
  batch.eventBytes({ id: 't' }, Buffer.from('{"a":"é"}'));
  assert.deepEqual(batch.answerSoFar(), { bytes: Buffer.byteLength(`${s.text()}:\nid: t\ndata: {"a":"é"}\n\n`), events: 4 });
  batch.frame(': c\n');
  batch.frame('retry: 500\n\n');
  batch.flush(s);
  assert.deepEqual(batch.answerSoFar(), { bytes: Buffer.byteLength(s.text()), events: 4 });
});

test('a write that wants a drain is reported', () => {
  const batch = new SseFrameBatch();
  batch.raw(Buffer.from('data: 1\n\n'), 0, 9);
  const calls: unknown[] = [];
  assert.deepEqual(batch.flush({ write: (c) => (calls.push(c), false) }), { bytes: 9, full: true });
});

test('a retry: value is clamped to [SSE_RETRY_MIN_MS, SSE_RETRY_MAX_MS], written in plain digits (test/regressions/sse-retry-field-passes-through.test.ts)', () => {
  assert.deepEqual([SSE_RETRY_MIN_MS, SSE_RETRY_MAX_MS], [500, 300_000]);
  const cases: Array<[number, number]> = [
    [0, 500], [1, 500], [499, 500], [500, 500], [501, 501], [299_999, 299_999], [300_000, 300_000], [300_001, 300_000],
    // eventsource-parser's parseInt of 24 digits, and of 400.
    [1e23, 300_000], [Infinity, 300_000],
  ];
  for (const [ms, out] of cases) assert.equal(clampSseRetryMs(ms), out, String(ms));
  assert.equal(encodeSseRetry(clampSseRetryMs(1e23)), 'retry: 300000\n\n');
});

test('the retry: ceiling is half the resume token lifetime within [SSE_RETRY_MIN_MS, SSE_RETRY_MAX_MS] (test/regressions/sse-retry-outlives-resume-token.test.ts)', () => {
  const cases: Array<[number, number]> = [
    // resume.ttl_ms -> ceiling: the default 1 h and anything from 10 min keep 5 min.
    [3_600_000, 300_000], [600_000, 300_000], [600_001, 300_000], [599_999, 299_999], [60_000, 30_000], [2_000, 1_000], [1_001, 500], [1_000, 500],
    // Under 1 s: the floor (the conformance suite's retry: 500 is honoured).
    [999, 500], [1, 500], [0, 500],
  ];
  for (const [ttl, ceiling] of cases) assert.equal(sseRetryCeilingMs(ttl), ceiling, String(ttl));
  assert.equal(clampSseRetryMs(300_000, sseRetryCeilingMs(60_000)), 30_000);
  assert.equal(clampSseRetryMs(29_999, sseRetryCeilingMs(60_000)), 29_999);
  assert.equal(clampSseRetryMs(1, sseRetryCeilingMs(60_000)), 500);
  assert.equal(clampSseRetryMs(Infinity, sseRetryCeilingMs(1)), 500);
});
