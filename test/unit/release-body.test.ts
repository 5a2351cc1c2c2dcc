/**
 * Leaving a seller's body before its end (src/response/decode.ts `releaseBody`, and
 * `decodeStream` on an early stop): a body that arrived whole is left to end, with no error
 * made (Node's stream iterator used to destroy it with a new AbortError, whose stack its
 * error handling formats: issue 5, the SSE stage stops at the response event of a one-event
 * answer that has already arrived); a body still arriving is destroyed (undici then aborts
 * the request and closes its connection). Streams fed in memory, no sockets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ByteBudget } from '../../src/response/byte-budget.js';
import { DecodeError, decodeStream, releaseBody } from '../../src/response/decode.js';

/** A body whose `chunks` were pushed; ended (`push(null)`, as undici does once the response completed) when `whole`. */
function body(chunks: Buffer[], whole: boolean): { stream: Readable; events: string[]; destroyedWith: () => unknown } {
  let destroyedWith: unknown = 'not destroyed';
  const stream = new Readable({
    read() {},
    destroy(err, cb) {
      destroyedWith = err;
      cb(err);
    },
  });
  const events: string[] = [];
  stream.on('end', () => events.push('end'));
  stream.on('close', () => events.push('close'));
  stream.on('error', (err) => events.push(`error ${err.name}`));
  for (const c of chunks) stream.push(c);
  if (whole) stream.push(null);
  return { stream, events, destroyedWith: () => destroyedWith };
}

const budgets = (limit = 1 << 20): [ByteBudget, ByteBudget] => [new ByteBudget(limit, 'raw_bytes'), new ByteBudget(limit, 'decoded_bytes')];
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const a = Buffer.from('event: message\ndata: 1\n\n');
const b = Buffer.from('event: message\ndata: 2\n\n');

test('releaseBody: a body that arrived whole ends, its buffered chunks dropped, no error', async () => {
  const { stream, events, destroyedWith } = body([a, b], true);
  releaseBody(stream);
  await tick();
  assert.deepEqual(events, ['end', 'close']);
  assert.equal(stream.errored, null);
  assert.equal(destroyedWith(), null, 'destroyed by autoDestroy after its end, without an error');
});

test('releaseBody: a body still arriving is destroyed; a destroyed one is left alone', async () => {
  const { stream, destroyedWith } = body([a], false);
  releaseBody(stream);
  assert.equal(stream.destroyed, true);
  assert.equal(destroyedWith(), null);
  releaseBody(stream);
  await tick();
});

/** Reads the uncoded body's first chunk (`a`) through decodeStream, then leaves the loop. */
async function readFirstChunkAndLeave(stream: Readable, raw: ByteBudget, decoded: ByteBudget): Promise<void> {
  for await (const chunk of decodeStream(stream, [], raw, decoded)) {
    assert.equal(chunk, a);
    break;
  }
}

test('decodeStream, no coding: a consumer leaving a whole body early makes no error; the body ends', async () => {
  const { stream, events } = body([a], true);
  const [raw, decoded] = budgets();
  await readFirstChunkAndLeave(stream, raw, decoded);
  await tick();
  assert.equal(stream.errored, null, 'no AbortError');
  assert.deepEqual(events, ['end', 'close']);
  assert.equal(raw.used, a.length, 'only what was read is counted');
});

test('decodeStream, no coding: a consumer leaving a body still arriving destroys it', async () => {
  const { stream, destroyedWith } = body([a], false);
  const [raw, decoded] = budgets();
  await readFirstChunkAndLeave(stream, raw, decoded);
  assert.equal(stream.destroyed, true);
  assert.notEqual(destroyedWith(), 'not destroyed');
});

test('decodeStream, no coding: a budget breach on a body still arriving destroys it and throws raw_bytes', async () => {
  const { stream } = body([a], false);
  const [raw, decoded] = budgets(a.length + 1);
  const seen: Buffer[] = [];
  await assert.rejects(
    (async () => {
      for await (const chunk of decodeStream(stream, [], raw, decoded)) {
        seen.push(chunk);
        stream.push(b); // the next chunk arrives
      }
    })(),
    (err: unknown) => err instanceof DecodeError && err.failure.reason === 'raw_bytes',
  );
  assert.deepEqual(seen, [a]);
  assert.equal(stream.destroyed, true);
});

test('decodeStream, gzip: leaving a whole body early makes no error; one still arriving is destroyed', async () => {
  // Incompressible, so the wire bytes decode at about the pace they are written.
  const plain = Buffer.alloc(64 * 1024);
  for (let i = 0, x = 1; i < plain.length; i++) plain[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  const wire = zlib.gzipSync(plain);
  for (const whole of [true, false]) {
    const { stream } = body([wire.subarray(0, 20_000)], false);
    const [raw, decoded] = budgets();
    for await (const chunk of decodeStream(stream, ['gzip'], raw, decoded)) {
      assert.ok(chunk.length > 0);
      // The rest arrives (and, for a whole body, its end) while the consumer leaves.
      stream.push(wire.subarray(20_000));
      if (whole) stream.push(null);
      break;
    }
    // A read pending on a body still arriving settles when the caller releases the body, as
    // the stages do when they are done with it (decodeStream's doc).
    if (!whole) releaseBody(stream);
    await tick();
    await tick();
    assert.equal(stream.destroyed, true, `whole: ${whole}`);
    assert.equal(stream.errored, null, `whole: ${whole}: no error on the body itself`);
    if (whole) assert.equal(stream.readableEnded, true, 'ended, not aborted');
    else assert.equal(stream.readableEnded, false, 'aborted');
  }
});

test('decodeStream over a non-stream iterable still closes its iterator on an early stop', async () => {
  let closed = false;
  async function* source(): AsyncGenerator<Buffer> {
    try {
      yield a;
      yield b;
    } finally {
      closed = true;
    }
  }
  const [raw, decoded] = budgets();
  for await (const chunk of decodeStream(source(), [], raw, decoded)) {
    assert.equal(chunk, a);
    break;
  }
  assert.equal(closed, true);
});
