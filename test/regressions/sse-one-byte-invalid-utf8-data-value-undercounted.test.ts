/**
 * Regression (a re-read of hostile trial 52's fix, Low): a `data:` line whose value is one
 * byte that is not ASCII (invalid UTF-8 alone) was counted as a one-character ASCII value, 64
 * bytes of the parser's strings (ONE_BYTE_DATA_LINE_HEAP_BYTES) beyond its text: the decoder
 * makes it U+FFFD, a two-byte string of its own (24 bytes), where an ASCII character is V8's
 * shared one, so such lines held ~1.1 times what was counted (count/held 0.89). Now it counts
 * REPLACED_BYTE_DATA_LINE_HEAP_BYTES, 88 (src/response/sse-open-event.ts).
 * Input: the real line feeder (SseLineFeeder), as the SSE stage pushes its chunks.
 * Expected: `data: \xff\n` (8 bytes, not ASCII: counted twice, 16) counts 16 + 88 = 104 (before:
 * 80); 1,000 such lines in one chunk 104,000; `data: x\n` still 8 + 64.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';

function count(bytes: Buffer): number {
  const f = new SseLineFeeder(() => {}, 1 << 24);
  assert.equal(f.push(bytes, 0, bytes.length), true);
  return f.openDataBytes;
}

test('a data: value of one invalid UTF-8 byte counts 88 for the parser\'s strings, beyond its text (was 64)', () => {
  assert.equal(count(Buffer.from('data: \xff\n', 'latin1')), 16 + 88);
  assert.equal(count(Buffer.from('data:\x80\n', 'latin1')), 14 + 88);
  assert.equal(count(Buffer.from('data: \xff\n'.repeat(1000), 'latin1')), 1000 * (16 + 88));
  // An ASCII one-byte value is V8's shared single-character string: 64, as before.
  assert.equal(count(Buffer.from('data: x\n', 'latin1')), 8 + 64);
});
