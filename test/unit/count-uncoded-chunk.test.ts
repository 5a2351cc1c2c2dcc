/**
 * The counts of an uncoded body (decode.ts `countUncodedChunk`, used by the iterator, body-source.ts
 * `readDirect` and `DirectChunks`), as README "Logs" documents them for `bytes_from_seller` and
 * `bytes_decoded` (found by a new user: 65,366 decoded against 130,902 raw after a raw_bytes
 * breach): the chunk that crosses the raw bound counts as raw and never reaches the decoded count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { ByteBudget } from '../../src/response/byte-budget.js';
import { DirectChunks, openBodySource, readDirect } from '../../src/response/body-source.js';
import { DecodeError, countUncodedChunk } from '../../src/response/decode.js';

const FIRST = 65_366;
const SECOND = 65_536;
const LIMIT = 100_000;
const RAW_BREACH = { reason: 'raw_bytes', limitBytes: LIMIT, observedBytes: FIRST + SECOND };

/** The two chunks, one per tick (chunks buffered together are read as one). */
function body(): Readable {
  const items = [Buffer.alloc(FIRST, 0x61), Buffer.alloc(SECOND, 0x62)];
  return new Readable({
    read() {
      setImmediate(() => this.push(items.shift() ?? null));
    },
  });
}

function failureOf(err: unknown): unknown {
  assert.ok(err instanceof DecodeError);
  return err.failure;
}

test('countUncodedChunk: raw first; a raw breach leaves decoded uncounted; a decoded breach after raw', () => {
  const raw = new ByteBudget(LIMIT, 'raw_bytes');
  const decoded = new ByteBudget(LIMIT, 'decoded_bytes');
  assert.equal(countUncodedChunk(raw, decoded, FIRST), undefined);
  assert.deepEqual(failureOf(countUncodedChunk(raw, decoded, SECOND)), RAW_BREACH);
  assert.deepEqual([raw.used, decoded.used], [FIRST + SECOND, FIRST]);

  const wide = new ByteBudget(LIMIT, 'raw_bytes');
  const narrow = new ByteBudget(10, 'decoded_bytes');
  assert.deepEqual(failureOf(countUncodedChunk(wide, narrow, 11)), { reason: 'decoded_bytes', limitBytes: 10, observedBytes: 11 });
  assert.deepEqual([wide.used, narrow.used], [11, 11]);
});

test('the three uncoded readers count a raw breach alike: raw 130,902, decoded 65,366', async () => {
  const viaIterator = openBodySource(body(), [], LIMIT);
  await assert.rejects(
    (async () => {
      for await (const chunk of viaIterator.chunks) void chunk;
    })(),
    (err: unknown) => (assert.deepEqual(failureOf(err), RAW_BREACH), true),
  );

  const viaDirect = openBodySource(body(), [], LIMIT);
  await assert.rejects(readDirect(viaDirect, []), (err: unknown) => (assert.deepEqual(failureOf(err), RAW_BREACH), true));

  // The second chunk arrives after the first is taken.
  const stream = new Readable({ read() {} });
  stream.push(Buffer.alloc(FIRST, 0x61));
  const viaChunks = openBodySource(stream, [], LIMIT);
  const reader = new DirectChunks(viaChunks);
  assert.equal(reader.read()?.length, FIRST);
  stream.push(Buffer.alloc(SECOND, 0x62));
  assert.throws(() => reader.read(), (err: unknown) => (assert.deepEqual(failureOf(err), RAW_BREACH), true));

  for (const source of [viaIterator, viaDirect, viaChunks]) assert.deepEqual([source.raw.used, source.decoded.used], [FIRST + SECOND, FIRST]);
});
