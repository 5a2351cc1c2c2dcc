/**
 * DirectChunks (src/response/body-source.ts): the SSE stage's reader of an uncoded body, in
 * place of decode.ts's generator over Node's stream iterator (issue 5). Same chunks, counts,
 * errors and back-pressure as `for await (const chunk of source.chunks)`; a chunk already
 * buffered is taken without a promise. Streams fed in memory, no sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { DecodeError } from '../../src/response/decode.js';
import { DirectChunks, openBodySource } from '../../src/response/body-source.js';

const a = Buffer.from('event: message\ndata: 1\n\n');
const b = Buffer.from('data: 2\n\n');
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Reads to the end as the SSE stage does; the chunks, or what was thrown. */
async function readAll(reader: DirectChunks): Promise<{ chunks: string[]; thrown?: unknown }> {
  const chunks: string[] = [];
  try {
    while (true) {
      let chunk: Buffer | null | undefined;
      while ((chunk = reader.read()) === null) await reader.wait();
      if (chunk === undefined) return { chunks };
      chunks.push(chunk.toString());
    }
  } catch (thrown) {
    return { chunks, thrown };
  }
}

test('a body that arrived whole is read without waiting, then ends; both counts kept', async () => {
  const stream = new Readable({ read() {} });
  stream.push(a);
  stream.push(null);
  const source = openBodySource(stream, [], Infinity);
  assert.equal(source.direct, true);
  const reader = new DirectChunks(source);
  assert.equal(reader.read()?.toString(), a.toString(), 'taken synchronously');
  assert.equal(source.raw.used, a.length);
  assert.equal(source.decoded.used, a.length);
  assert.deepEqual(await readAll(reader), { chunks: [] });
});

test('chunks arriving later are read as they come, and the end after them', async () => {
  const stream = new Readable({ read() {} });
  const source = openBodySource(stream, [], Infinity);
  const reader = new DirectChunks(source);
  const done = readAll(reader);
  await tick();
  stream.push(a);
  await tick();
  stream.push(b);
  await tick();
  stream.push(null);
  assert.deepEqual(await done, { chunks: [a.toString(), b.toString()] });
  assert.equal(source.raw.used, a.length + b.length);
});

test('the stream error is thrown after the chunks before it; a close before the end is ERR_STREAM_PREMATURE_CLOSE', async () => {
  const failing = new Readable({ read() {} });
  const reader = new DirectChunks(openBodySource(failing, [], Infinity));
  const done = readAll(reader);
  failing.push(a);
  await tick();
  const boom = new Error('socket reset');
  failing.destroy(boom);
  assert.deepEqual(await done, { chunks: [a.toString()], thrown: boom });

  const closing = new Readable({ read() {} });
  const premature = readAll(new DirectChunks(openBodySource(closing, [], Infinity)));
  await tick();
  closing.destroy();
  const got = await premature;
  assert.deepEqual(got.chunks, []);
  assert.equal((got.thrown as { code?: string }).code, 'ERR_STREAM_PREMATURE_CLOSE');

  // Destroyed before the reader was made: the same answers at once.
  const gone = new Readable({ read() {} });
  gone.on('error', () => {});
  gone.destroy(boom);
  assert.deepEqual(await readAll(new DirectChunks(openBodySource(gone, [], Infinity))), { chunks: [], thrown: boom });
});

test('a chunk over the raw or decoded budget throws the DecodeError and is not handed out', async () => {
  const stream = new Readable({ read() {} });
  stream.push(a);
  stream.push(b);
  stream.push(null);
  // Chunks are taken one at a time: the first fits, the second breaks the budget.
  const got = await readAll(new DirectChunks(openBodySource(stream, [], a.length + 1)));
  assert.deepEqual(got.chunks, [a.toString()]);
  assert.ok(got.thrown instanceof DecodeError);
  assert.deepEqual(got.thrown.failure, { reason: 'raw_bytes', limitBytes: a.length + 1, observedBytes: a.length + b.length });

  const later = new Readable({ read() {} });
  const source = openBodySource(later, [], Infinity, a.length);
  const reader = new DirectChunks(source);
  const done = readAll(reader);
  later.push(a);
  await tick();
  later.push(b);
  const over = await done;
  assert.deepEqual(over.chunks, [a.toString()]);
  assert.ok(over.thrown instanceof DecodeError);
  assert.deepEqual(over.thrown.failure, { reason: 'decoded_bytes', limitBytes: a.length, observedBytes: a.length + b.length });
});

test('back-pressure: nothing is asked of the source while the reader does not read', async () => {
  let asked = 0;
  const stream = new Readable({
    highWaterMark: 4,
    read() {
      asked++;
    },
  });
  const reader = new DirectChunks(openBodySource(stream, [], Infinity));
  assert.equal(reader.read(), null);
  assert.equal(asked, 1);
  stream.push(a); // over the high-water mark: push says stop
  await tick();
  assert.equal(asked, 1, 'not asked again while the chunk waits');
  assert.equal(reader.read()?.toString(), a.toString());
  await tick();
  assert.equal(asked, 2, 'asked again once read');
});

test('the reader keeps an error listener after the end: destroying the body later throws nothing uncaught', async () => {
  const stream = new Readable({ read() {} });
  stream.push(a);
  const reader = new DirectChunks(openBodySource(stream, [], Infinity));
  assert.equal(reader.read()?.toString(), a.toString());
  stream.destroy(new Error('aborted after the reader was done'));
  await tick();
  assert.equal(stream.destroyed, true);
});

test('the first wait is the rest of this turn: a body pushed just after its head is read with no stream event awaited', async () => {
  const stream = new Readable({ read() {} });
  const reader = new DirectChunks(openBodySource(stream, [], Infinity));
  assert.equal(reader.read(), null);
  assert.equal(reader.waited, false);
  const first = reader.wait();
  assert.equal(reader.waited, true);
  // undici pushes the bytes parsed with the head (and the end) in the same turn.
  stream.push(a);
  stream.push(null);
  await first;
  assert.equal(stream.listenerCount('readable'), 0, "no 'readable' listener was needed");
  assert.equal(reader.read()?.toString(), a.toString());
  assert.deepEqual(await readAll(reader), { chunks: [] });
});

test('buffered chunks are taken one at a time, the very Buffers pushed (no concatenation copy)', async () => {
  // Bench "SSE events/s": read() without a size concatenated every buffered chunk into a
  // fresh Buffer; the copies drove the gateway's GC on floods of small events.
  const stream = new Readable({ read() {} });
  const pushed = [a, b, Buffer.from('data: 3\n\n')];
  for (const chunk of pushed) stream.push(chunk);
  stream.push(null);
  const source = openBodySource(stream, [], Infinity);
  const reader = new DirectChunks(source);
  for (const chunk of pushed) assert.equal(reader.read(), chunk);
  assert.deepEqual(await readAll(reader), { chunks: [] });
  assert.equal(source.raw.used, a.length + b.length + 9);
});
