/**
 * read-body.ts BodyBytes (a body copied into one buffer of its declared length as it
 * arrives) and body-pool.ts BodyPool (those buffers reused once their response is sent):
 * the exact bytes whatever the chunking, no byte of an earlier body ever exposed, a buffer
 * lent to one body at a time and given back once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { BodyBytes } from '../../src/response/read-body.js';
import { BodyPool, bodyPool, POOLED_MIN_BYTES } from '../../src/response/body-pool.js';

const bytes = (n: number, seed: number): Buffer => {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};

function fill(declared: number | undefined, body: Buffer, cuts: number[]): BodyBytes {
  const sink = new BodyBytes(declared);
  let from = 0;
  for (const to of [...cuts, body.length]) {
    sink.push(body.subarray(from, to));
    from = to;
  }
  return sink;
}

test('BodyBytes: the same bytes for every chunking, with or without a declared length', () => {
  const body = bytes(1000, 7);
  for (const cuts of [[], [1], [999], [10, 500, 501], Array.from({ length: 99 }, (_, i) => (i + 1) * 10)]) {
    for (const declared of [undefined, 1000]) assert.deepEqual(fill(declared, body, cuts).body(), body, `cuts ${cuts.length}, declared ${declared}`);
  }
});

test('BodyBytes: a body whole in its first chunk is that chunk (no copy)', () => {
  const body = bytes(300, 1);
  const sink = new BodyBytes(300);
  sink.push(body);
  assert.equal(sink.body(), body);
});

test('BodyBytes: with a declared length, one buffer of that length filled in place (no concat)', () => {
  const body = bytes(4096, 3);
  const sink = fill(4096, body, [1000, 2000, 3000]);
  const out = sink.body();
  assert.deepEqual(out, body);
  assert.equal(out.length, 4096);
  // The chunks were copied: changing them afterwards does not change the body.
  const again = bytes(4096, 3);
  const chunks = [again.subarray(0, 2048), again.subarray(2048)];
  const s2 = new BodyBytes(4096);
  for (const c of chunks) s2.push(c);
  again.fill(0);
  assert.deepEqual(s2.body(), body);
});

test('BodyBytes: fewer bytes than declared gives exactly the bytes received', () => {
  const body = bytes(500, 9);
  assert.deepEqual(fill(4096, body, [100, 200]).body(), body);
  assert.equal(fill(4096, body, [100, 200]).body().length, 500);
});

test('BodyBytes: more bytes than declared falls back to the chunks, bytes intact', () => {
  const body = bytes(3000, 5);
  assert.deepEqual(fill(1000, body, [600, 1200, 2000]).body(), body);
});

test('BodyBytes: an empty body', () => {
  assert.equal(new BodyBytes(0).body().length, 0);
  assert.equal(new BodyBytes(undefined).body().length, 0);
});

test('BodyBytes: a pooled buffer reused by a shorter body exposes none of the earlier bytes', () => {
  const first = bytes(POOLED_MIN_BYTES + 5000, 11);
  const a = fill(first.length, first, [4096, 12288]);
  const aBody = a.body();
  assert.deepEqual(aBody, first);
  const response = new EventEmitter();
  bodyPool.recycleAfterSend(response, aBody);
  response.emit('close');
  const second = bytes(POOLED_MIN_BYTES + 10, 200);
  const b = fill(second.length, second, [4096]);
  const bBody = b.body();
  assert.equal(bBody.buffer, aBody.buffer, 'the buffer was reused');
  assert.equal(bBody.length, second.length);
  assert.deepEqual(bBody, second);
});

test('BodyPool: buffers by power-of-two class, only in the pooled range', () => {
  const pool = new BodyPool(1024, 1 << 20);
  assert.equal(pool.take(1023), undefined);
  assert.equal(pool.take((1 << 20) + 1), undefined);
  assert.equal(pool.take(1024)!.length, 1024);
  assert.equal(pool.take(1025)!.length, 2048);
  assert.equal(pool.take(1 << 20)!.length, 1 << 20);
});

test('BodyPool: a buffer comes back only after its response closes, and only once', () => {
  const pool = new BodyPool(1024, 1 << 20);
  const a = pool.take(3000)!;
  const body = a.subarray(0, 3000);
  const response = new EventEmitter();
  pool.recycleAfterSend(response, body);
  pool.recycleAfterSend(response, body); // a second schedule is ignored
  assert.notEqual(pool.take(3000)!.buffer, a.buffer, 'not before the response closed');
  response.emit('close');
  response.emit('close');
  assert.equal(pool.idleByteCount, 4096);
  assert.equal(pool.take(3000)!.buffer, a.buffer);
  assert.equal(pool.idleByteCount, 0);
  assert.notEqual(pool.take(3000)!.buffer, a.buffer, 'given back once, taken once');
});

test('BodyPool concat: the parts in a lent buffer in the pooled range (given back after its response), a plain Buffer below it', () => {
  const pool = new BodyPool(1024, 1 << 20);
  const parts = [bytes(700, 1), Buffer.alloc(0), bytes(500, 2), bytes(300, 3)];
  const out = pool.concat(parts);
  assert.deepEqual(out, Buffer.concat(parts));
  assert.equal(out.length, 1500);
  assert.equal(out.buffer.byteLength, 2048, 'a view of a 2 KiB class buffer');
  const response = new EventEmitter();
  pool.recycleAfterSend(response, out);
  response.emit('close');
  assert.equal(pool.idleByteCount, 2048);
  const again = pool.concat([bytes(1100, 4)]);
  assert.equal(again.buffer, out.buffer, 'the next rewrite reuses it');
  assert.deepEqual(again, bytes(1100, 4));
  const small = pool.concat([bytes(10, 5), bytes(20, 6)]);
  assert.deepEqual(small, Buffer.concat([bytes(10, 5), bytes(20, 6)]));
  pool.recycleAfterSend(response, small);
  response.emit('close');
  assert.equal(pool.idleByteCount, 0, 'a buffer the pool did not lend is never taken in');
});

test('BodyPool splice: the source with each range replaced by its parts (strings as UTF-8), in a lent buffer in the pooled range', () => {
  const pool = new BodyPool(1024, 1 << 20);
  const source = bytes(1500, 7);
  const splice = (edits: { start: number; end: number; insert: (Uint8Array | string)[] }[]): Buffer => {
    // What it must equal: the parts between the edits and the inserts, concatenated.
    const parts: Buffer[] = [];
    let from = 0;
    for (const e of edits) {
      parts.push(source.subarray(from, e.start), ...e.insert.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
      from = e.end;
    }
    parts.push(source.subarray(from));
    const out = pool.splice(source, edits);
    assert.deepEqual(out, Buffer.concat(parts));
    return out;
  };
  // Replacements at the start and the end, an insertion, a deletion, a multi-byte string.
  const out = splice([
    { start: 0, end: 10, insert: ['"é語"'] },
    { start: 600, end: 600, insert: [bytes(40, 8), 'x'] },
    { start: 700, end: 900, insert: [] },
    { start: 1490, end: 1500, insert: [Buffer.from(',"k":')] },
  ]);
  assert.equal(out.length, 1500 - 10 + 7 + 41 - 200 - 10 + 5);
  assert.equal(out.buffer.byteLength, 2048, 'a view of a 2 KiB class buffer');
  // No edit: a copy; below the pooled range: a plain Buffer of its own.
  assert.equal(splice([]).buffer.byteLength, 2048);
  const small = splice([{ start: 0, end: 1400, insert: ['"summary"'] }]);
  assert.equal(small.length, 109);
  const response = new EventEmitter();
  pool.recycleAfterSend(response, small);
  response.emit('close');
  assert.equal(pool.idleByteCount, 0, 'not lent by the pool');
});

test('BodyPool splice: overlapping edits throw instead of returning an earlier body\'s bytes', () => {
  // The output is a view of a recycled buffer that held an earlier (another agent's) body.
  // Overlapping edits make the computed size smaller than what the edits write; the copies
  // stop at the end of the view, and a string cut there ends at a whole character, so the
  // last bytes of the view were never written: the earlier body's (review 30, finding 2).
  const pool = new BodyPool(1024, 1 << 20);
  const earlier = pool.take(2000)!;
  earlier.fill('S');
  const response = new EventEmitter();
  pool.recycleAfterSend(response, earlier);
  response.emit('close');
  const source = Buffer.alloc(3000, 'a');
  // Removes [0, 3) and [1, 3000): 3,002 bytes of a 3,000-byte source; inserts 1,502 bytes
  // ending in a 3-byte character: size 1,500 (the 2 KiB class), of which 1,499 (before the
  // `€`) are written. Before the check: the 1,500 bytes returned, the last one an `S`.
  const edits = [
    { start: 0, end: 3, insert: [] },
    { start: 1, end: 3000, insert: ['x'.repeat(1499) + '\u20ac'] },
  ];
  assert.equal(pool.idleByteCount, 2048, 'the earlier body\'s buffer is idle: the splice takes it');
  assert.throws(() => pool.splice(source, edits), /^Error: splice wrote 1499 of 1500 bytes: its edits overlap, are out of order or out of range$/);
  assert.equal(pool.idleByteCount, 0, 'it was taken');
});

test('BodyPool: a body not lent by the pool is never taken in', () => {
  const pool = new BodyPool(1024, 1 << 20);
  const response = new EventEmitter();
  pool.recycleAfterSend(response, Buffer.alloc(4096));
  response.emit('close');
  assert.equal(pool.idleByteCount, 0);
});

test('BodyPool: idle buffers are capped; one given back past the cap is dropped', () => {
  const pool = new BodyPool(1024, 8192);
  const taken = [pool.take(4096)!, pool.take(4096)!, pool.take(4096)!];
  for (const b of taken) {
    const response = new EventEmitter();
    pool.recycleAfterSend(response, b);
    response.emit('close');
  }
  assert.equal(pool.idleByteCount, 8192);
});
