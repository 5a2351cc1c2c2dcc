/**
 * SseLineFeeder (src/response/sse-boundaries.ts) makes its UTF-8 decoder only when a
 * non-ASCII byte needs it (issue 5: a decoder per response was ~2.5 µs of a one-event SSE
 * answer), with the BOM rule of a decoder made at the start unchanged: a leading UTF-8 BOM is
 * dropped at the stream's start and after a reset, kept anywhere else and once the stream's
 * start went to the host raw (passedRaw).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseLineFeeder } from '../../src/response/sse-boundaries.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function feeder(): { f: SseLineFeeder; got: string[] } {
  const got: string[] = [];
  return { f: new SseLineFeeder((t) => got.push(t), 1024), got };
}
const push = (f: SseLineFeeder, ...parts: (string | Buffer)[]): boolean => {
  const b = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  return f.push(b, 0, b.length);
};

/** Runs `body` with TextDecoder replaced by a subclass counting its instances. */
function countingDecoders(body: () => void): number {
  const Original = globalThis.TextDecoder;
  let made = 0;
  globalThis.TextDecoder = class extends Original {
    constructor(...args: ConstructorParameters<typeof TextDecoder>) {
      super(...args);
      made++;
    }
  };
  try {
    body();
  } finally {
    globalThis.TextDecoder = Original;
  }
  return made;
}

test('an ASCII stream makes no decoder; the first non-ASCII byte makes one', () => {
  const { f, got } = feeder();
  assert.equal(
    countingDecoders(() => {
      push(f, 'event: message\ndata: {"a":1}\n\n');
      push(f, ': keep-alive\n\ndata: {"b"');
      push(f, ':2}\n\n');
    }),
    0,
  );
  assert.equal(got.join(''), 'event: message\ndata: {"a":1}\n\n: keep-alive\n\ndata: {"b":2}\n\n');
  assert.equal(countingDecoders(() => push(f, 'data: €\n\n')), 1);
  assert.equal(got.join('').endsWith('data: €\n\n'), true);
});

test('a BOM is dropped only as the first bytes, also split over chunks and when the first chunk is held', () => {
  const a = feeder();
  push(a.f, BOM.subarray(0, 2));
  push(a.f, BOM.subarray(2), 'data: a\n\n');
  push(a.f, 'data: ', BOM, 'b\n\n');
  assert.equal(a.got.join(''), 'data: a\n\ndata: \ufeffb\n\n');

  // ASCII first: a BOM after it is a character, whether or not a decoder was made before it.
  const b = feeder();
  push(b.f, 'data: x\n\n');
  push(b.f, BOM, 'data: y\n\n');
  assert.equal(b.got.join(''), 'data: x\n\n\ufeffdata: y\n\n');
  const c = feeder();
  push(c.f, 'data: x');
  push(c.f, '\n\n', BOM, 'data: y\n\n');
  assert.equal(c.got.join(''), 'data: x\n\n\ufeffdata: y\n\n');
});

test('after reset a BOM is dropped again; after passedRaw it is kept, also after a later reset', () => {
  const a = feeder();
  push(a.f, 'data: x\n\n');
  a.f.reset();
  push(a.f, BOM, 'data: y\n\n');
  assert.equal(a.got.join(''), 'data: x\n\ndata: y\n\n');

  const b = feeder();
  b.f.passedRaw();
  push(b.f, BOM, 'data: y\n\n');
  b.f.reset();
  push(b.f, BOM, 'data: z\n\n');
  assert.equal(b.got.join(''), '\ufeffdata: y\n\n\ufeffdata: z\n\n');

  // passedRaw after bytes were decoded changes nothing: a reset still drops a BOM.
  const c = feeder();
  push(c.f, 'data: x\n\n');
  c.f.passedRaw();
  c.f.reset();
  push(c.f, BOM, 'data: y\n\n');
  assert.equal(c.got.join(''), 'data: x\n\ndata: y\n\n');
});

test('a partial character held by the decoder survives ASCII-looking ranges; invalid bytes become U+FFFD', () => {
  const { f, got } = feeder();
  const euro = Buffer.from('€');
  push(f, 'data: ', euro.subarray(0, 1));
  push(f, euro.subarray(1), '\n\n');
  push(f, Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0xc3, 0x0a, 0x0a]));
  assert.equal(got.join(''), 'data: €\n\ndata: \ufffd\ufffd\n\n');
});
