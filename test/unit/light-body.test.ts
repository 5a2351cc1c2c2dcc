/**
 * LightBody (src/routing/light-body.ts), the body of a plain JSON answer without a Node
 * Readable: flow, back-pressure towards the seller's socket, end, destroy and failure, as
 * the JSON stage's reader (body-source.ts readDirect), releaseBody and the buffered-bytes
 * lease use them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LightBody } from '../../src/routing/light-body.js';

const tick = (): Promise<void> => new Promise((r) => process.nextTick(r));

function body(): { b: LightBody; log: string[]; aborts: Error[] } {
  const log: string[] = [];
  const aborts: Error[] = [];
  const b = new LightBody(
    () => log.push('resume-upstream'),
    (reason) => aborts.push(reason),
  );
  return { b, log, aborts };
}

function listen(b: LightBody, log: string[]): void {
  b.on('data', (c: Buffer) => log.push(`data ${c.toString()}`));
  b.on('end', () => log.push('end'));
  b.on('error', (e: Error) => log.push(`error ${e.message}`));
  b.on('close', () => log.push('close'));
}

test('chunks before a data listener wait in order; the seller waits until they are delivered', async () => {
  const { b, log } = body();
  assert.equal(b.push(Buffer.from('a')), false);
  assert.equal(b.push(Buffer.from('b')), false);
  listen(b, log);
  assert.deepEqual(log, []); // delivered on the next tick, as a Readable starts flowing
  await tick();
  assert.deepEqual(log, ['data a', 'data b', 'resume-upstream']);
});

test('a body complete before its reader attaches keeps every chunk and its end for it', async () => {
  const { b, log } = body();
  b.push(Buffer.from('a'));
  b.push(Buffer.from('b'));
  b.end();
  await tick();
  await tick();
  assert.deepEqual(log, []); // no reader yet: nothing delivered, nothing lost
  listen(b, log);
  await tick();
  assert.deepEqual(log, ['data a', 'data b', 'end', 'close']);
});

test('flowing: a chunk is delivered at once and the seller reads on', () => {
  const { b, log } = body();
  listen(b, log);
  assert.equal(b.push(Buffer.from('x')), true);
  assert.deepEqual(log, ['data x']);
});

test('paused from a data listener: the seller waits until resume', async () => {
  const { b, log } = body();
  b.on('data', (c: Buffer) => {
    log.push(`data ${c.toString()}`);
    b.pause();
  });
  await tick();
  assert.equal(b.push(Buffer.from('1')), false);
  assert.equal(b.push(Buffer.from('2')), false); // queued while paused
  assert.deepEqual(log, ['data 1']);
  b.resume();
  await tick();
  assert.deepEqual(log, ['data 1', 'data 2']); // paused again by the listener
  b.resume();
  await tick();
  assert.deepEqual(log, ['data 1', 'data 2', 'resume-upstream']);
});

test('end: after the queued chunks, end then close on the next tick; nothing aborted', async () => {
  const { b, log, aborts } = body();
  b.push(Buffer.from('a'));
  b.end();
  listen(b, log);
  assert.deepEqual(log, []);
  await tick();
  assert.deepEqual(log, ['data a', 'end', 'close']);
  assert.equal(b.readableEnded, true);
  assert.equal(b.readable, false);
  b.destroy(); // as releaseBody does on a body that is over: nothing happens
  assert.deepEqual(aborts, []);
});

test('destroy() before the end aborts the upstream request once the parse in progress is through, then close alone', async () => {
  const { b, log, aborts } = body();
  listen(b, log);
  b.push(Buffer.from('a'));
  b.destroy();
  assert.equal(b.destroyed, true);
  assert.equal(b.readable, false);
  // Chunks undici parses meanwhile are dropped, and it is not asked to wait.
  assert.equal(b.push(Buffer.from('late')), true);
  assert.deepEqual(aborts, []);
  await Promise.resolve();
  assert.equal(aborts.length, 1);
  assert.equal((aborts[0] as (Error & { code?: string }) | undefined)?.code, 'UND_ERR_ABORTED');
  await tick();
  assert.deepEqual(log, ['data a', 'close']);
});

test('destroy() then the message end in the same parse: nothing aborted (the connection stays in the pool)', async () => {
  const { b, log, aborts } = body();
  listen(b, log);
  b.push(Buffer.from('a'));
  b.destroy();
  b.push(Buffer.from('rest'));
  b.end();
  await tick();
  assert.deepEqual(aborts, []);
  assert.deepEqual(log, ['data a', 'close']);
});

test('destroy(err) aborts with err; error then close', async () => {
  const { b, log, aborts } = body();
  listen(b, log);
  const reason = new Error('stop');
  b.destroy(reason);
  b.destroy(new Error('twice is a no-op'));
  await tick();
  assert.deepEqual(aborts, [reason]);
  assert.deepEqual(log, ['error stop', 'close']);
});

test('a body complete but not read yet is destroyed without an abort', async () => {
  const { b, log, aborts } = body();
  b.push(Buffer.from('a'));
  b.end();
  b.on('close', () => log.push('close'));
  b.destroy();
  await tick();
  assert.deepEqual(aborts, []);
  assert.deepEqual(log, ['close']);
});

test('an upstream failure drops what is queued: error then close, no abort', async () => {
  const { b, log, aborts } = body();
  b.push(Buffer.from('queued'));
  listen(b, log);
  b.fail(new Error('socket reset'));
  await tick();
  await tick();
  assert.deepEqual(log, ['error socket reset', 'close']);
  assert.deepEqual(aborts, []);
});

test('a failure with no error listener emits close alone (no uncaught error)', async () => {
  const { b, log } = body();
  b.on('close', () => log.push('close'));
  b.fail(new Error('reset'));
  await tick();
  assert.deepEqual(log, ['close']);
});

test('async iteration: the chunks, then the end; a failed body rejects with its error', { timeout: 5_000 }, async () => {
  const { b } = body();
  b.push(Buffer.from('a'));
  b.push(Buffer.from('b'));
  b.end();
  const got: string[] = [];
  for await (const c of b) got.push(c.toString());
  assert.equal(got.join(''), 'ab');

  const failed = body().b;
  failed.fail(new Error('reset'));
  await assert.rejects(
    (async () => {
      for await (const _ of failed);
    })(),
    /reset/,
  );

  const aborted = body().b;
  aborted.destroy();
  await assert.rejects(
    (async () => {
      for await (const _ of aborted);
    })(),
    (err: Error & { code?: string }) => err.code === 'ERR_STREAM_PREMATURE_CLOSE',
  );

  // Destroyed while iterated: the iteration fails, as a Readable's does.
  const { b: iterated } = body();
  iterated.push(Buffer.from('a'));
  const read = (async () => {
    for await (const _ of iterated) iterated.destroy();
  })();
  await assert.rejects(read, (err: Error & { code?: string }) => err.code === 'ERR_STREAM_PREMATURE_CLOSE');
});
