/**
 * Compression bombs of zero bytes for the decoder tests (test/unit/decode.test.ts) and the
 * hostile seller (test/support/hostile-seller.ts), made without compressing all the zeros:
 * compressing 256 MiB to 1 GiB took 0.5-2 s of CPU per bomb in each test process that made one.
 * What they decode to is the same: `total` zero bytes, with a valid gzip trailer (CRC-32 and
 * size) or brotli end.
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';

const MIB = 1024 * 1024;

/**
 * Compressed `total` zero bytes (`total` >= 3 x `segment`), made by compressing only three
 * `segment`s of them: `make()`'s stream is fed `segment` zeros and flushed with `flush` three
 * times, which ends each segment's output on a byte boundary; from the 2nd on, the encoder's
 * state after a segment is what it was before it, so the 2nd segment's bytes stand for every
 * later one (checked: the 3rd's must be the same, else this throws). Then the leftover zeros
 * (`total` mod `segment`) and the stream's end.
 */
async function repeatedZeros(make: () => zlib.DeflateRaw | zlib.BrotliCompress, flush: number, total: number, segment: number): Promise<Buffer> {
  assert.ok(total >= 3 * segment, `at least 3 segments of ${segment} zeros`);
  const zeros = Buffer.alloc(segment);
  const stream = make();
  let out: Buffer[] = [];
  stream.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  const take = (): Buffer => {
    const b = Buffer.concat(out);
    out = [];
    return b;
  };
  const segments: Buffer[] = [];
  for (let k = 0; k < 3; k++) {
    stream.write(zeros);
    await new Promise<void>((resolve) => stream.flush(flush, () => resolve()));
    segments.push(take());
  }
  assert.ok(segments[1]!.equals(segments[2]!), 'the compressed segments of zeros repeat');
  const count = Math.floor(total / segment);
  stream.end(zeros.subarray(0, total % segment));
  await ended;
  return Buffer.concat([segments[0]!, ...Array.from({ length: count - 1 }, () => segments[1]!), take()]);
}

/** CRC-32 (the gzip trailer's) of `total` zero bytes. */
function crc32OfZeros(total: number): number {
  const zeros = Buffer.alloc(Math.min(MIB, total));
  let crc = 0;
  for (let left = total; left > 0; left -= zeros.length) crc = zlib.crc32(left >= zeros.length ? zeros : zeros.subarray(0, left), crc);
  return crc;
}

/**
 * gzip of `total` zero bytes (at least 3 MiB): deflate at `level` with a full flush after each
 * MiB (1 GiB -> ~1 MB at level 9), the trailer's CRC-32 and size those of the zeros.
 */
export async function gzipOfZeros(total: number, level: number): Promise<Buffer> {
  const deflated = await repeatedZeros(() => zlib.createDeflateRaw({ level }), zlib.constants.Z_FULL_FLUSH, total, MIB);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32OfZeros(total), 0);
  trailer.writeUInt32LE(total % 2 ** 32, 4);
  // Magic, deflate, no flags, no mtime, XFL 0, OS 3 (Unix).
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflated, trailer]);
}

/** brotli at `quality`, flushed every 16 MiB, of `total` zero bytes (at least 48 MiB): 1 GiB -> ~1.6 KB at quality 5. */
export function brotliOfZeros(total: number, quality: number): Promise<Buffer> {
  return repeatedZeros(() => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } }), zlib.constants.BROTLI_OPERATION_FLUSH, total, 16 * MIB);
}

/**
 * gzip of `total` zero bytes in stored (uncompressed) deflate blocks of 65,535 bytes, what gzip
 * level 0 writes: the inner layer of a bomb whose outer layer inflates to it. Built by hand
 * (~0.7 s of CPU less than zlib at level 0 for 64 MiB).
 */
export function storedGzipOfZeros(total: number): Buffer {
  const BLOCK = 65_535;
  const blocks = Math.max(1, Math.ceil(total / BLOCK));
  const out = Buffer.alloc(10 + blocks * 5 + total + 8);
  Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]).copy(out, 0);
  let at = 10;
  for (let k = 0, left = total; k < blocks; k++) {
    const len = Math.min(BLOCK, left);
    out[at] = k === blocks - 1 ? 1 : 0; // BFINAL on the last, BTYPE 00 (stored)
    out.writeUInt16LE(len, at + 1);
    out.writeUInt16LE(~len & 0xffff, at + 3);
    at += 5 + len; // the block's bytes: zeros, as allocated
    left -= len;
  }
  out.writeUInt32LE(crc32OfZeros(total), at);
  out.writeUInt32LE(total % 2 ** 32, at + 4);
  return out;
}
