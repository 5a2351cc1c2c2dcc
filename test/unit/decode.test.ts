// The bounded content-decoding stage (src/response/decode.ts): raw and decoded bytes bounded
// on every layer, bombs stopped within one zlib chunk of the limit, strict about corrupt and
// truncated data, zero-copy for identity. Stages are fed chunks; no sockets, no timings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { ByteBudget } from '../../src/response/byte-budget.js';
import {
  BROTLI_STATE_BYTES,
  DECODER_CHUNK_BYTES,
  DecodeError,
  type DecodeFailure,
  type DecoderKind,
  MAX_STACKED_CODINGS,
  type OpenDecoder,
  brotliWindowBits,
  decodeStream,
  decodeStreamWith,
  decoderBytes,
  openDecoder,
  parseContentEncoding,
} from '../../src/response/decode.js';
import { AgentGuard, LoadShedError } from '../../src/admission/agent-guard.js';
import { brotliOfZeros, gzipOfZeros } from '../helpers/zero-bombs.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const BOMB_LIMIT = 4 * MiB;
/** The brief's acceptance bound for bytes a decoder may produce past the limit. */
const BOMB_SLACK = 64 * KiB;

/** ~300 KB of JSON, compressible but not trivially. */
const PAYLOAD = Buffer.from(
  JSON.stringify({
    products: Array.from({ length: 2500 }, (_, i) => ({
      product_id: `prod-${i}`,
      name: `Placement ${(i * 7919) % 10007}`,
      cpm: ((i * 37) % 1000) / 10,
      formats: ['display_300x250', `video_${i % 13}s`],
    })),
  }),
);

const budgets = (rawLimit = 64 * MiB, decodedLimit = 64 * MiB): { raw: ByteBudget; decoded: ByteBudget } => ({
  raw: new ByteBudget(rawLimit, 'raw_bytes'),
  decoded: new ByteBudget(decodedLimit, 'decoded_bytes'),
});

/** `pieces`, one chunk each. */
async function* fromPieces(pieces: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* pieces;
}

/** Splits `buf` into `size`-byte views (no copies). */
async function* chunksOf(buf: Buffer, size = 16 * KiB): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

interface Drained {
  body: Buffer;
  chunks: Buffer[];
  error: unknown;
}

async function drain(gen: AsyncIterable<Buffer>): Promise<Drained> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of gen) chunks.push(chunk);
    return { body: Buffer.concat(chunks), chunks, error: undefined };
  } catch (error) {
    return { body: Buffer.concat(chunks), chunks, error };
  }
}

function failureOf(error: unknown): DecodeFailure {
  assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${String(error)}`);
  return error.failure;
}

interface Observed {
  kind: DecoderKind;
  stream: ReturnType<OpenDecoder>;
  /** Every byte the zlib stream emitted (counted in push), whether or not anyone read it. */
  produced: number;
}

/** A decoder factory that records each decoder and counts what it produced. */
function observing(): { open: OpenDecoder; decoders: Observed[] } {
  const decoders: Observed[] = [];
  const open: OpenDecoder = (kind) => {
    const stream = openDecoder(kind);
    const entry: Observed = { kind, stream, produced: 0 };
    const push = stream.push.bind(stream);
    stream.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
      if (chunk) entry.produced += (chunk as Buffer).length;
      return push(chunk, encoding);
    };
    decoders.push(entry);
    return stream;
  };
  return { open, decoders };
}

async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), what);
}

/** Bombs, built once per file: 256 MiB of zeros, compressed. */
const bombs = (() => {
  let built: { gzip: Buffer; br: Buffer; gzipOfGzip: Buffer; middle: Buffer } | undefined;
  return async () => {
    if (built) return built;
    // 256 MiB of zeros, gzip level 6 and brotli quality 5, made from a few compressed MiB
    // repeated (compressing all of them took ~2.5 s of CPU): test/helpers/zero-bombs.ts.
    const gzip = await gzipOfZeros(256 * MiB, 6);
    const br = await brotliOfZeros(256 * MiB, 5);
    // Middle-layer bomb for `gzip, gzip`: the outer layer inflates to 32 MiB of a gzip
    // member made of empty stored blocks (00 00 00 FF FF), which the inner layer decodes to
    // nothing, so only the intermediate bound can stop it. Built as a multi-member gzip so
    // the 32 MiB never exist in memory here.
    const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    const emptyBlocks = Buffer.alloc(209_715 * 5); // 1 MiB - 1
    for (let i = 0; i < emptyBlocks.length; i += 5) emptyBlocks.writeUInt16LE(0xffff, i + 3);
    const members = [zlib.gzipSync(Buffer.concat([header, emptyBlocks]))];
    for (let i = 0; i < 31; i++) members.push(zlib.gzipSync(emptyBlocks));
    built = { gzip, br, gzipOfGzip: zlib.gzipSync(gzip), middle: Buffer.concat(members) };
    return built;
  };
})();

describe('parseContentEncoding', () => {
  it('absent, empty and identity mean no decoding', () => {
    for (const header of [undefined, '', '  ', 'identity', 'IDENTITY', [] as string[], ['identity']]) {
      assert.deepEqual(parseContentEncoding(header), { ok: true, codings: [] }, JSON.stringify(header));
    }
  });

  it('lists codings in the order applied, canonical, trimmed, case-insensitive', () => {
    assert.deepEqual(parseContentEncoding('gzip'), { ok: true, codings: ['gzip'] });
    assert.deepEqual(parseContentEncoding(' Deflate ,\tBR '), { ok: true, codings: ['deflate', 'br'] });
    assert.deepEqual(parseContentEncoding('X-GZIP'), { ok: true, codings: ['gzip'] });
    assert.deepEqual(parseContentEncoding(['gzip', 'br']), { ok: true, codings: ['gzip', 'br'] });
    assert.deepEqual(parseContentEncoding('gzip,,identity, ,br'), { ok: true, codings: ['gzip', 'br'] });
  });

  it('refuses an unknown coding, naming it', () => {
    for (const [header, coding] of [
      ['compress', 'compress'],
      ['zstd', 'zstd'],
      ['gzip, X-Foo', 'x-foo'],
      ['gzip;q=1', 'gzip;q=1'],
      ['__proto__', '__proto__'],
      ['toString', 'tostring'],
    ] as const) {
      assert.deepEqual(parseContentEncoding(header), { ok: false, failure: { reason: 'unsupported_encoding', coding } });
    }
  });

  it('bounds the coding name it echoes to 64 characters', () => {
    const parsed = parseContentEncoding('x'.repeat(10_000));
    assert.equal(parsed.ok, false);
    assert.deepEqual(!parsed.ok && parsed.failure, { reason: 'unsupported_encoding', coding: `${'x'.repeat(64)}...` });
  });

  it(`accepts ${MAX_STACKED_CODINGS} stacked codings and refuses ${MAX_STACKED_CODINGS + 1}`, () => {
    assert.equal(MAX_STACKED_CODINGS, 4);
    assert.deepEqual(parseContentEncoding('gzip, gzip, br, deflate'), {
      ok: true,
      codings: ['gzip', 'gzip', 'br', 'deflate'],
    });
    assert.deepEqual(parseContentEncoding('gzip, gzip, br, deflate, gzip'), {
      ok: false,
      failure: { reason: 'unsupported_encoding', coding: 'gzip, gzip, br, deflate, gzip' },
    });
  });
});

// A hostile new user's trial 15, H2: a brotli window (up to 16 MiB) per response was held
// outside max_buffered_response_bytes; 30 POSTed lgwin-24 streams took 659 MB RSS.
describe('decoder memory: a br layer charged to the agent before the first byte is decoded', () => {
  const brotli = (lgwin: number, quality = 5): Buffer =>
    zlib.brotliCompressSync(PAYLOAD.subarray(0, 20 * KiB), { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin, [zlib.constants.BROTLI_PARAM_QUALITY]: quality } });
  const SETTINGS = { max_buffered_response_bytes: 8 * MiB, backoff_after_breaches: 0, backoff_base_ms: 1, backoff_max_ms: 1 };

  it('reads the window a brotli stream declares from its first byte (RFC 7932 §9.1), as the encoder wrote it', () => {
    for (let lgwin = 10; lgwin <= 24; lgwin++) assert.equal(brotliWindowBits(brotli(lgwin)[0]!), lgwin, `lgwin ${lgwin}`);
    assert.equal(brotliWindowBits(brotli(10, 1)[0]!), 18, 'qualities 0 and 1 widen the window to 18');
    assert.equal(brotliWindowBits(0b0010001), undefined, 'the large-window marker');
    assert.equal(decoderBytes('br', brotli(24)[0]), 16 * MiB + BROTLI_STATE_BYTES);
    assert.equal(decoderBytes('br', brotli(22)[0]), 4 * MiB + 2.75 * MiB);
    assert.equal(decoderBytes('br', 0b0010001), 16 * MiB + BROTLI_STATE_BYTES, 'unknown: the largest');
    assert.equal(decoderBytes('br'), 16 * MiB + BROTLI_STATE_BYTES);
    assert.equal(decoderBytes('gzip'), 0, 'gzip and deflate are not charged (a 32 KiB window at most)');
    assert.equal(decoderBytes('deflate', 0x78), 0);
  });

  it('charges an inner br at the largest window at the first byte, lowers it to its own at its first byte, gives it back at the end', async () => {
    const guard = new AgentGuard();
    const lease = guard.lease('a', SETTINGS);
    const held: number[] = [];
    const { open } = observing();
    const watched: OpenDecoder = (kind) => {
      held.push(guard.heldBytes('a'));
      return open(kind);
    };
    const { raw, decoded } = budgets();
    // br applied first, then gzip: gzip is the outer layer (0), br the inner one.
    const body = zlib.gzipSync(brotli(19));
    const { body: out, error } = await drain(decodeStreamWith(watched, chunksOf(body, 1024), ['br', 'gzip'], raw, decoded, lease));
    assert.equal(error, undefined);
    assert.deepEqual(out, PAYLOAD.subarray(0, 20 * KiB));
    assert.deepEqual(held, [
      16 * MiB + BROTLI_STATE_BYTES, // the gzip layer made (not charged): the br one charged at the most
      512 * KiB + BROTLI_STATE_BYTES, // the br layer made, its first byte read: lgwin 19
    ]);
    assert.equal(lease.decoders, 0);
    assert.equal(guard.heldBytes('a'), 0);
  });

  it('a gzip body is not charged, and takes no wait', async () => {
    const guard = new AgentGuard();
    const older = guard.lease('a', SETTINGS);
    await older.chargeDecoders(16 * MiB, 1);
    const lease = guard.lease('a', SETTINGS);
    const { raw, decoded } = budgets();
    const { body: out, error } = await drain(decodeStream(chunksOf(zlib.gzipSync(PAYLOAD)), ['gzip'], raw, decoded, lease));
    assert.equal(error, undefined);
    assert.deepEqual(out, PAYLOAD);
    assert.deepEqual([guard.bufferWaits('a'), guard.heldBytes('a')], [0, 16 * MiB]);
    older.release();
  });

  it('the first byte waits for room beside another response\'s decoders (no decoder made meanwhile), holding its chunk; then decodes', async () => {
    const guard = new AgentGuard();
    const older = guard.lease('a', SETTINGS);
    await older.chargeDecoders(2 * MiB, 1); // 2 MiB + 6.75 MiB of an lgwin-22 decoder would be over the 8 MiB cap
    const lease = guard.lease('a', SETTINGS);
    const { open, decoders } = observing();
    const { raw, decoded } = budgets();
    const result = drain(decodeStreamWith(open, chunksOf(brotli(22), 1024), ['br'], raw, decoded, lease));
    await eventually(() => guard.bufferWaits('a') === 1, 'it waits');
    assert.equal(decoders.length, 0);
    assert.equal(guard.heldBytes('a'), 2 * MiB + 1024, 'the older decoders, and the waiting chunk');
    older.release();
    const { body: out, error } = await result;
    assert.equal(error, undefined);
    assert.deepEqual(out, PAYLOAD.subarray(0, 20 * KiB));
    assert.equal(decoders.length, 1);
    assert.equal(guard.heldBytes('a'), 0);
  });

  it('a response shed while its first byte waits ends with LoadShedError; one released meanwhile stops; nothing decoded either way', async () => {
    const guard = new AgentGuard();
    const older = guard.lease('a', SETTINGS);
    await older.chargeDecoders(8 * MiB, 1);
    for (const how of ['shed', 'released'] as const) {
      const lease = guard.lease('a', SETTINGS);
      const { open, decoders } = observing();
      const { raw, decoded } = budgets();
      const result = drain(decodeStreamWith(open, fromPieces([brotli(22)]), ['br'], raw, decoded, lease));
      await eventually(() => lease.reserved > 0, `${how}: it waits holding its chunk`);
      if (how === 'shed') lease.shedRetryAfterS = 7;
      lease.release();
      const { chunks, error } = await result;
      if (how === 'shed') assert.ok(error instanceof LoadShedError && error.retryAfterS === 7, String(error));
      else assert.match(String(error), /decoding stopped: its response is over/);
      assert.equal(chunks.length, 0);
      assert.equal(decoders.length, 0);
    }
    older.release();
    assert.equal(guard.heldBytes('a'), 0);
  });

  it('a consumer that stops mid-body gives the charge back', async () => {
    const guard = new AgentGuard();
    const lease = guard.lease('a', SETTINGS);
    const { raw, decoded } = budgets();
    const gen = decodeStream(chunksOf(brotli(22), 256), ['br'], raw, decoded, lease);
    const first = await gen.next();
    assert.equal(first.done, false);
    assert.equal(guard.heldBytes('a'), 4 * MiB + BROTLI_STATE_BYTES);
    await gen.return(undefined);
    assert.equal(guard.heldBytes('a'), 0);
  });
});

describe('decodeStream: round trips', () => {
  const cases: [string, Buffer][] = [
    ['gzip', zlib.gzipSync(PAYLOAD)],
    ['x-gzip', zlib.gzipSync(PAYLOAD)],
    ['deflate', zlib.deflateSync(PAYLOAD)], // RFC: zlib-wrapped
    ['deflate', zlib.deflateRawSync(PAYLOAD)], // what many servers send
    ['br', zlib.brotliCompressSync(PAYLOAD)],
  ];
  for (const [header, wire] of cases) {
    it(`${header} (${wire[0] === 0x78 ? 'zlib' : header === 'deflate' ? 'raw' : header}) in 1000-byte chunks`, async () => {
      const parsed = parseContentEncoding(header);
      assert.ok(parsed.ok);
      const { raw, decoded } = budgets();
      const { body, error } = await drain(decodeStream(chunksOf(wire, 1000), parsed.codings, raw, decoded));
      assert.equal(error, undefined);
      assert.ok(body.equals(PAYLOAD));
      assert.equal(raw.used, wire.length);
      assert.equal(decoded.used, PAYLOAD.length);
    });
  }

  it('picks zlib or raw deflate even when the body arrives one byte at a time', async () => {
    const small = PAYLOAD.subarray(0, 2000);
    for (const [wire, kind] of [
      [zlib.deflateSync(small), 'zlib'],
      [zlib.deflateRawSync(small), 'deflate-raw'],
    ] as const) {
      const { open, decoders } = observing();
      const { raw, decoded } = budgets();
      const { body, error } = await drain(decodeStreamWith(open, chunksOf(wire, 1), ['deflate'], raw, decoded));
      assert.equal(error, undefined);
      assert.ok(body.equals(small));
      assert.deepEqual(
        decoders.map((d) => d.kind),
        [kind],
      );
    }
  });

  it('identity yields the very same Buffer objects, counted raw and decoded', async () => {
    const parts = [Buffer.from('{"jsonrpc":'), Buffer.from('"2.0","id":1,'), Buffer.from('"result":{}}')];
    async function* source(): AsyncGenerator<Buffer> {
      yield* parts;
    }
    for (const codings of [[], ['identity'], ['IDENTITY', '']]) {
      const { raw, decoded } = budgets(1000, 1000);
      const { chunks, error } = await drain(decodeStream(source(), codings, raw, decoded));
      assert.equal(error, undefined);
      assert.equal(chunks.length, parts.length);
      chunks.forEach((chunk, i) => assert.equal(chunk, parts[i]));
      assert.equal(raw.used, 36);
      assert.equal(decoded.used, 36);
    }
  });

  it('undoes `gzip, gzip` and `deflate, br` last-listed first (RFC 9110 §8.4)', async () => {
    const gzipGzip = zlib.gzipSync(zlib.gzipSync(PAYLOAD));
    const deflateThenBr = zlib.brotliCompressSync(zlib.deflateSync(PAYLOAD));
    for (const [header, wire] of [
      ['gzip, gzip', gzipGzip],
      ['deflate, br', deflateThenBr],
    ] as const) {
      const parsed = parseContentEncoding(header);
      assert.ok(parsed.ok);
      const { open, decoders } = observing();
      const { raw, decoded } = budgets();
      const { body, error } = await drain(decodeStreamWith(open, chunksOf(wire, 4096), parsed.codings, raw, decoded));
      assert.equal(error, undefined, header);
      assert.ok(body.equals(PAYLOAD), header);
      assert.equal(decoded.used, PAYLOAD.length);
      assert.deepEqual(
        decoders.map((d) => d.kind),
        header === 'gzip, gzip' ? ['gzip', 'gzip'] : ['br', 'zlib'],
      );
    }
    // The same bytes undone in the wrong order are corrupt.
    const { raw, decoded } = budgets();
    const { error } = await drain(decodeStream(chunksOf(deflateThenBr), ['br', 'deflate'], raw, decoded));
    assert.equal(failureOf(error).reason, 'upstream_encoding_invalid');
  });

  it('an empty body is empty under any coding', async () => {
    for (const codings of [['gzip'], ['deflate'], ['br'], ['deflate', 'br', 'gzip']]) {
      const { open, decoders } = observing();
      const { raw, decoded } = budgets();
      const { body, error } = await drain(decodeStreamWith(open, chunksOf(Buffer.alloc(0)), codings, raw, decoded));
      assert.equal(error, undefined);
      assert.equal(body.length, 0);
      assert.equal(decoders.length, 0);
    }
  });

  it('yields output before the input ends (a gzip-flushed SSE stream)', { timeout: 30_000 }, async () => {
    const gzip = zlib.createGzip();
    const wire: Buffer[] = [];
    gzip.on('data', (c: Buffer) => wire.push(c));
    const flushed = (): Promise<Buffer> =>
      new Promise((resolve) => gzip.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(wire.splice(0)))));
    gzip.write('event: message\ndata: {"n":1}\n\n');
    const first = await flushed();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* source(): AsyncGenerator<Buffer> {
      yield first;
      await gate; // the seller stays idle until the first event came out
      gzip.end('event: message\ndata: {"n":2}\n\n');
      await new Promise((resolve) => gzip.on('end', resolve));
      yield Buffer.concat(wire.splice(0));
    }
    const { raw, decoded } = budgets();
    const gen = decodeStream(source(), ['gzip'], raw, decoded);
    const one = await gen.next();
    assert.equal(one.done, false);
    assert.equal(String(one.value), 'event: message\ndata: {"n":1}\n\n');
    release?.();
    const rest = await drain(gen);
    assert.equal(rest.error, undefined);
    assert.equal(String(rest.body), 'event: message\ndata: {"n":2}\n\n');
  });
});

describe('decodeStream: refusals', () => {
  it('refuses an unknown coding before touching the source', async () => {
    let pulled = false;
    async function* source(): AsyncGenerator<Buffer> {
      pulled = true;
      yield Buffer.from('x');
    }
    for (const [codings, coding] of [
      [['compress'], 'compress'],
      [['gzip', 'zstd'], 'zstd'],
      [['gzip', 'gzip', 'gzip', 'gzip', 'gzip'], 'gzip, gzip, gzip, gzip, gzip'],
    ] as const) {
      const { raw, decoded } = budgets();
      const { error } = await drain(decodeStream(source(), codings, raw, decoded));
      assert.deepEqual(failureOf(error), { reason: 'unsupported_encoding', coding });
    }
    assert.equal(pulled, false);
  });

  it('raw bytes: exactly at the limit passes, one byte less fails with raw_bytes', async () => {
    const wire = zlib.gzipSync(PAYLOAD);
    const at = budgets(wire.length);
    assert.equal((await drain(decodeStream(chunksOf(wire, 1000), ['gzip'], at.raw, at.decoded))).error, undefined);
    const { open, decoders } = observing();
    const under = budgets(wire.length - 1);
    const { error } = await drain(decodeStreamWith(open, chunksOf(wire, 1000), ['gzip'], under.raw, under.decoded));
    assert.deepEqual(failureOf(error), { reason: 'raw_bytes', limitBytes: wire.length - 1, observedBytes: wire.length });
    assert.ok(decoders.every((d) => d.stream.destroyed));
  });

  it('raw bytes bound identity too', async () => {
    const { raw, decoded } = budgets(PAYLOAD.length - 1);
    const { error } = await drain(decodeStream(chunksOf(PAYLOAD, 1000), [], raw, decoded));
    assert.deepEqual(failureOf(error), {
      reason: 'raw_bytes',
      limitBytes: PAYLOAD.length - 1,
      observedBytes: PAYLOAD.length,
    });
  });

  it('decoded bytes: exactly at the limit passes, one byte less fails; the crossing chunk is dropped', async () => {
    for (const [codings, wire] of [
      [['gzip'], zlib.gzipSync(PAYLOAD)],
      [['br'], zlib.brotliCompressSync(PAYLOAD)],
      [['deflate', 'gzip'], zlib.gzipSync(zlib.deflateSync(PAYLOAD))],
      [[], PAYLOAD],
    ] as const) {
      const at = budgets(64 * MiB, PAYLOAD.length);
      const ok = await drain(decodeStream(chunksOf(wire, 1000), codings, at.raw, at.decoded));
      assert.equal(ok.error, undefined, codings.join());
      assert.equal(ok.body.length, PAYLOAD.length);

      const limit = PAYLOAD.length - 1;
      const under = budgets(64 * MiB, limit);
      const { body, error } = await drain(decodeStream(chunksOf(wire, 1000), codings, under.raw, under.decoded));
      const failure = failureOf(error);
      assert.equal(failure.reason, 'decoded_bytes', codings.join());
      assert.ok(failure.reason === 'decoded_bytes' && failure.limitBytes === limit);
      assert.ok(failure.reason === 'decoded_bytes' && failure.observedBytes === under.decoded.used);
      assert.ok(under.decoded.used > limit);
      // Nothing of the crossing chunk was yielded: only whole chunks that fit.
      assert.ok(body.length <= limit);
      assert.ok(body.equals(PAYLOAD.subarray(0, body.length)));
    }
  });

  it('corrupt compressed data is upstream_encoding_invalid', async () => {
    const gzip = zlib.gzipSync(PAYLOAD);
    const corruptGzip = Buffer.from(gzip);
    corruptGzip.fill(0xff, 20, 60);
    for (const [codings, wire] of [
      [['gzip'], corruptGzip],
      [['gzip'], Buffer.from('{"not":"gzip"}')],
      [['deflate'], Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
      [['deflate'], Buffer.from([0xff, 0xff, 0xff, 0xff])],
      [['br'], Buffer.from('definitely not brotli, no no no')],
      [['gzip', 'gzip'], zlib.gzipSync(Buffer.from('inner layer is not gzip'))],
    ] as const) {
      const { open, decoders } = observing();
      const { raw, decoded } = budgets();
      const { error } = await drain(decodeStreamWith(open, chunksOf(wire, 7), codings, raw, decoded));
      const failure = failureOf(error);
      assert.equal(failure.reason, 'upstream_encoding_invalid', `${codings.join()}: ${String(error)}`);
      assert.ok(failure.reason === 'upstream_encoding_invalid' && failure.message.length > 0);
      assert.ok(decoders.every((d) => d.stream.destroyed));
    }
  });

  it('a truncated stream is upstream_encoding_invalid, never a short body that looks complete', async () => {
    const gzip = zlib.gzipSync(PAYLOAD);
    for (const [codings, wire] of [
      [['gzip'], gzip.subarray(0, gzip.length - 8)], // trailer (CRC32, ISIZE) missing
      [['gzip'], gzip.subarray(0, gzip.length >> 1)],
      [['gzip'], gzip.subarray(0, 5)], // inside the header
      [['deflate'], zlib.deflateSync(PAYLOAD).subarray(0, 1000)],
      [['deflate'], zlib.deflateRawSync(PAYLOAD).subarray(0, 1000)],
      [['deflate'], Buffer.from([0x78])], // one byte: not even a header
      [['br'], zlib.brotliCompressSync(PAYLOAD).subarray(0, 1000)],
      [['gzip', 'gzip'], zlib.gzipSync(gzip.subarray(0, 1000))], // inner layer truncated
    ] as const) {
      const { raw, decoded } = budgets();
      const { error } = await drain(decodeStream(chunksOf(wire, 512), codings, raw, decoded));
      assert.equal(failureOf(error).reason, 'upstream_encoding_invalid', `${codings.join()} ${wire.length} bytes`);
    }
  });

  // Trial 8, F9: after gzip they were an error, after deflate and br silently dropped.
  it('bytes after the end of a compressed stream are upstream_encoding_invalid, the same for every coding, however the body is cut', async () => {
    const small = PAYLOAD.subarray(0, 3000);
    const streams: Array<[string[], Buffer]> = [
      [['gzip'], zlib.gzipSync(small)],
      [['deflate'], zlib.deflateSync(small)],
      [['deflate'], zlib.deflateRawSync(small)],
      [['br'], zlib.brotliCompressSync(small)],
      [['gzip', 'gzip'], zlib.gzipSync(zlib.gzipSync(small))],
    ];
    const after: Array<[string, Buffer]> = [
      ['garbage', Buffer.from('garbage!')],
      ['zero bytes', Buffer.alloc(4)], // Node's gunzip alone skips them as padding
      ['one byte', Buffer.from([0x01])],
    ];
    for (const [codings, wire] of streams) {
      // A second stream of the same coding: bytes after the end too (gzip's is a next member, below).
      const extra = codings[0] === 'gzip' ? after : [...after, ['a second stream', wire] as [string, Buffer]];
      for (const [what, tail] of extra) {
        const body = Buffer.concat([wire, tail]);
        // In the same chunk as the end, in a chunk of their own, the stream's last byte and
        // every one after it in chunks of one byte.
        const bytewise = [wire.subarray(0, -1), ...[...body.subarray(wire.length - 1)].map((byte) => Buffer.from([byte]))];
        for (const pieces of [[body], [wire, tail], bytewise]) {
          const { open, decoders } = observing();
          const { raw, decoded } = budgets();
          const { error } = await drain(decodeStreamWith(open, fromPieces(pieces), codings, raw, decoded));
          const label = `${codings.join()} + ${what}, ${pieces.length} pieces`;
          const failure = failureOf(error);
          assert.equal(failure.reason, 'upstream_encoding_invalid', label);
          assert.ok(failure.reason === 'upstream_encoding_invalid' && failure.message.length > 0, label);
          assert.ok(decoders.every((d) => d.stream.destroyed), label);
        }
      }
    }
    // An inner layer's stream followed by bytes: the outer layer decodes, the inner one fails.
    const inner = Buffer.concat([zlib.gzipSync(small), Buffer.from('garbage!')]);
    const { raw, decoded } = budgets();
    const { error } = await drain(decodeStream(chunksOf(zlib.gzipSync(inner), 100), ['gzip', 'gzip'], raw, decoded));
    assert.equal(failureOf(error).reason, 'upstream_encoding_invalid');
  });

  it('several gzip members in a row are one body (RFC 1952 §2.2), however the body is cut', async () => {
    const a = PAYLOAD.subarray(0, 5000);
    const b = PAYLOAD.subarray(5000, 9000);
    const c = PAYLOAD.subarray(9000, 9001);
    const members = [zlib.gzipSync(a), zlib.gzipSync(b), zlib.gzipSync(c)];
    const wire = Buffer.concat(members);
    for (const source of [fromPieces([wire]), fromPieces(members), chunksOf(wire, 7)]) {
      const { raw, decoded } = budgets();
      const { body, error } = await drain(decodeStream(source, ['gzip'], raw, decoded));
      assert.equal(error, undefined);
      assert.ok(body.equals(Buffer.concat([a, b, c])));
      assert.equal(raw.used, wire.length);
    }
  });

  it('a decoder that ends before its input did waits for it: the end then is the end, a byte then follows the end', async () => {
    // Node's decoders end early only with bytes left unread; this one ends at a 0x00 byte
    // having consumed it, the chain's other case.
    const endingAtZero: OpenDecoder = () => {
      const stream = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          const at = chunk.indexOf(0);
          stream.bytesWritten += at < 0 ? chunk.length : at + 1;
          if (at < 0) return done(null, chunk);
          this.push(chunk.subarray(0, at));
          this.push(null);
          done();
        },
      }) as Transform & { bytesWritten: number };
      stream.bytesWritten = 0;
      return stream;
    };
    const run = async (pieces: Buffer[]): Promise<Drained> => {
      async function* source(): AsyncGenerator<Buffer> {
        for (const piece of pieces) {
          yield piece;
          // Lets the decoder end before the next piece (or the end) comes.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      const { raw, decoded } = budgets();
      return drain(decodeStreamWith(endingAtZero, source(), ['br'], raw, decoded));
    };
    const ok = await run([Buffer.from('abc'), Buffer.from([0x64, 0x00])]);
    assert.equal(ok.error, undefined);
    assert.equal(ok.body.toString(), 'abcd');
    const late = await run([Buffer.from('abc'), Buffer.from([0x64, 0x00]), Buffer.from('x')]);
    assert.equal(failureOf(late.error).reason, 'upstream_encoding_invalid');
  });

  it("the source's own error propagates unchanged", async () => {
    const boom = new Error('upstream request aborted');
    const wire = zlib.gzipSync(PAYLOAD);
    for (const codings of [[], ['gzip'], ['gzip', 'gzip']]) {
      async function* source(): AsyncGenerator<Buffer> {
        yield (codings.length === 2 ? zlib.gzipSync(wire) : codings.length ? wire : PAYLOAD).subarray(0, 100);
        throw boom;
      }
      const { raw, decoded } = budgets();
      const { error } = await drain(decodeStream(source(), codings, raw, decoded));
      assert.equal(error, boom, codings.join());
    }
  });
});

describe('decodeStream: bombs stop at the decoded limit', () => {
  /** Runs a bomb against a decoded limit; returns how far past the limit each decoder produced. */
  async function explode(
    wire: Buffer,
    codings: string[],
    limit = BOMB_LIMIT,
  ): Promise<{ failure: DecodeFailure; overshoot: number[]; yielded: number }> {
    const { open, decoders } = observing();
    const { raw, decoded } = budgets(64 * MiB, limit);
    const { body, error } = await drain(decodeStreamWith(open, chunksOf(wire, 16 * KiB), codings, raw, decoded));
    const failure = failureOf(error);
    assert.ok(decoders.length > 0 && decoders.every((d) => d.stream.destroyed), 'every decoder destroyed');
    assert.ok(body.length <= limit);
    return { failure, overshoot: decoders.map((d) => d.produced - limit), yielded: body.length };
  }

  it('gzip bomb (256 MiB of zeros, ~250 KB on the wire)', async (t) => {
    const { gzip } = await bombs();
    // 4 MiB is a whole number of chunks; 4 MiB + 1000 B is not.
    for (const limit of [BOMB_LIMIT, BOMB_LIMIT + 1000]) {
      const { failure, overshoot, yielded } = await explode(gzip, ['gzip'], limit);
      t.diagnostic(`limit ${limit} B, wire ${gzip.length} B; produced past the limit: ${overshoot.join(', ')} B; yielded ${yielded} B`);
      assert.equal(failure.reason, 'decoded_bytes');
      assert.ok(failure.reason === 'decoded_bytes' && failure.limitBytes === limit);
      assert.ok(overshoot[0]! <= BOMB_SLACK);
      assert.ok(overshoot[0]! <= DECODER_CHUNK_BYTES, 'at most one zlib chunk past the limit');
    }
  });

  it('brotli bomb (256 MiB of zeros, a few hundred bytes on the wire)', async (t) => {
    const { br } = await bombs();
    const { failure, overshoot, yielded } = await explode(br, ['br']);
    t.diagnostic(`wire ${br.length} B; produced past the limit: ${overshoot.join(', ')} B; yielded ${yielded} B`);
    assert.equal(failure.reason, 'decoded_bytes');
    assert.ok(overshoot[0]! <= BOMB_SLACK);
    assert.ok(overshoot[0]! <= DECODER_CHUNK_BYTES, 'at most one zlib chunk past the limit');
  });

  it('a gzip bomb inside an outer gzip layer (`gzip, gzip`)', async (t) => {
    const { gzipOfGzip, gzip } = await bombs();
    const { failure, overshoot, yielded } = await explode(gzipOfGzip, ['gzip', 'gzip']);
    t.diagnostic(`wire ${gzipOfGzip.length} B; produced past the limit: ${overshoot.join(', ')} B; yielded ${yielded} B`);
    assert.equal(failure.reason, 'decoded_bytes');
    // The outer layer produced at most the inner bomb itself; the inner one stopped at the limit.
    assert.ok(overshoot[0]! + BOMB_LIMIT <= gzip.length);
    assert.ok(overshoot[1]! <= BOMB_SLACK);
    assert.ok(overshoot[1]! <= DECODER_CHUNK_BYTES, 'at most one zlib chunk past the limit');
  });

  it('a bomb in the middle layer is bounded there, though the last layer produces nothing', async (t) => {
    const { middle } = await bombs();
    const { failure, overshoot, yielded } = await explode(middle, ['gzip', 'gzip']);
    t.diagnostic(`wire ${middle.length} B; produced past the limit: ${overshoot.join(', ')} B; yielded ${yielded} B`);
    assert.equal(failure.reason, 'decoded_bytes');
    assert.ok(failure.reason === 'decoded_bytes' && failure.limitBytes === BOMB_LIMIT);
    assert.ok(failure.reason === 'decoded_bytes' && failure.observedBytes > BOMB_LIMIT);
    assert.equal(yielded, 0);
    assert.ok(overshoot[0]! <= BOMB_SLACK);
    assert.ok(overshoot[0]! <= DECODER_CHUNK_BYTES, 'at most one zlib chunk past the limit');
    assert.equal(overshoot[1], -BOMB_LIMIT, 'the last layer produced nothing');
  });

  it('backpressure: a slow consumer keeps the decoder at most two chunks ahead', async (t) => {
    const { gzip } = await bombs();
    const { open, decoders } = observing();
    const { raw, decoded } = budgets(64 * MiB, 2 * MiB);
    let yielded = 0;
    let worst = 0;
    let error: unknown;
    try {
      for await (const chunk of decodeStreamWith(open, chunksOf(gzip, 16 * KiB), ['gzip'], raw, decoded)) {
        yielded += chunk.length;
        // Let zlib run as far as it is allowed to before looking.
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
        worst = Math.max(worst, decoders[0]!.produced - yielded);
      }
    } catch (err) {
      error = err;
    }
    assert.equal(failureOf(error).reason, 'decoded_bytes');
    t.diagnostic(`the decoder ran at most ${worst} B ahead of the consumer`);
    assert.ok(worst <= 2 * DECODER_CHUNK_BYTES, `decoder ran ${worst} bytes ahead of the consumer`);
  });
});

describe('decodeStream: early stop', () => {
  it('a consumer break destroys every decoder and closes the source', async () => {
    const { gzip } = await bombs();
    let closed = false;
    async function* source(): AsyncGenerator<Buffer> {
      try {
        yield* chunksOf(zlib.gzipSync(gzip), 1024);
      } finally {
        closed = true;
      }
    }
    const { open, decoders } = observing();
    const { raw, decoded } = budgets();
    let seen = 0;
    for await (const chunk of decodeStreamWith(open, source(), ['gzip', 'gzip'], raw, decoded)) {
      seen += chunk.length;
      if (seen >= 100 * KiB) break;
    }
    assert.equal(decoders.length, 2);
    assert.ok(decoders.every((d) => d.stream.destroyed), 'destroyed as soon as the loop was left');
    await eventually(() => closed, 'the source iterator was closed');
  });

  it('return() before the first chunk destroys nothing it did not make, and ends cleanly', async () => {
    const { open, decoders } = observing();
    const { raw, decoded } = budgets();
    const gen = decodeStreamWith(open, chunksOf(zlib.gzipSync(PAYLOAD)), ['gzip'], raw, decoded);
    assert.deepEqual(await gen.return(undefined), { done: true, value: undefined });
    assert.equal(decoders.length, 0);
  });
});
