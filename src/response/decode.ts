/**
 * The bounded content-decoding stage (ARCHITECTURE §2: byte budget (raw) -> decompress
 * (bounded) -> byte budget (decoded)). It undoes a seller's `Content-Encoding` with Node's
 * zlib streams while counting BOTH the wire bytes and the decoded bytes as they are produced
 * (spec: mcp-response-extraction.md, Size Limits: "bound raw and decoded bytes", "count
 * bytes as they arrive and abort rather than buffer-then-check").
 *
 * Decisions (each one tested in test/unit/decode.test.ts):
 * - Codings are undone in reverse order of listing (RFC 9110 §8.4: they are listed in the
 *   order they were applied). At most {@link MAX_STACKED_CODINGS} of them.
 * - Every layer is bounded, not just the last: an intermediate layer's output counts against
 *   its own counter with the same limit as `decoded`, so a bomb hidden in the middle of
 *   `gzip, gzip` cannot inflate unbounded before the last layer sees it. Where `decoded` is
 *   unbounded (a stream without a total, response/pipeline.ts), so would an intermediate
 *   layer be: such a stream is refused more than one coding (exchange.ts maxStackedCodings;
 *   review 30, finding 1).
 * - Output is counted where zlib produces it (each decoder's readable side is read in
 *   flowing mode, paused after every chunk, with a 1-byte readable high-water mark), so at a
 *   breach everything a decoder ever produced has been counted: a decoder produces at most
 *   one chunk ({@link DECODER_CHUNK_BYTES}) past the limit, then is destroyed at once.
 * - The decoded chunk that crosses the limit is dropped, not split: nothing past the last
 *   whole chunk that fit is yielded (the caller answers with the error either way).
 * - A body its codings cannot undo is `upstream_encoding_invalid`, never a network fault
 *   (`upstream_reset` is left to the source's own errors: a reset or premature close): corrupt
 *   data (a wrong CRC-32 or Adler-32, an invalid block), data not in that coding, a truncated
 *   compressed stream whose body nonetheless ended, and bytes after the end of a layer's
 *   compressed stream. Truncation: the zlib default `finishFlush` (Z_FINISH /
 *   BROTLI_OPERATION_FINISH) is kept on purpose, unlike browsers and undici's fetch
 *   (Z_SYNC_FLUSH), because a truncated body must never look complete (ARCHITECTURE §3).
 * - Bytes after the end, the same for every coding (a new user's hostile trial 8, F9: after
 *   gzip they were `upstream_reset`, after `deflate` and `br` silently dropped): Node's
 *   inflate and brotli decoders stop at their stream's end and leave what follows unread, and
 *   its gunzip reads what follows as the next member (RFC 1952 §2.2: a gzip file is a series
 *   of members), failing on anything else but zero bytes, which it skips as padding. So a
 *   second valid gzip member is data, decoded as part of the body; anything else after the
 *   last member (zero bytes included) or after a deflate or brotli stream (a second stream
 *   included: RFC 9110 §8.4.1 gives each one stream) is an error. Told by each decoder's
 *   `bytesWritten` (the input bytes it consumed) against the bytes written to it, when it ends.
 * - An empty body is empty under any coding (a 202/204 with `Content-Encoding: gzip` is
 *   common): a layer that receives no byte at all produces nothing and is not an error;
 *   except where the caller needs content ({@link DecodeOptions.emptyIsInvalid}: the 2xx
 *   answer to a request), where it is `upstream_encoding_invalid`: no byte is no data in any
 *   coding (Node's decoders fail an empty input "unexpected end of file"). Before, such an
 *   answer was `upstream_not_mcp` (a hostile trial 26, L4 b:
 *   test/regressions/empty-coded-body-reported-not-mcp.test.ts).
 * - `deflate` is zlib-wrapped per RFC 9110 §8.4.1.2; a body without a valid zlib header
 *   (RFC 1950 §2.2) is inflated raw (RFC 1951), as browsers and curl do: servers that send
 *   raw deflate under `deflate` exist (the coding's name says only "deflate"), and refusing
 *   them would refuse answers every browser reads. So raw deflate is data in that coding, not
 *   `upstream_encoding_invalid`; data that is neither (no valid zlib header, and no valid raw
 *   deflate stream either) still is (a hostile trial 26, L4 a: docs/errors.md).
 *
 * Brotli windows (a hostile new user's trial 15, H2): a brotli decoder fills the window its
 * stream header declares (up to 16 MiB; large windows stay disabled) before it hands out a
 * byte, and keeps it while its stream lives, whatever the decoded limit: measured 15.9 MB per
 * decoder from a 3 KB body at lgwin 24, 4.0 MB at lgwin 22, 0.27 MB at lgwin 16. 30
 * standalone GET streams with one `br` layer, kept alive by a comment every 2 s, took a
 * gateway from 94 to 655 MB RSS; `br, br, br, br` x 10 streams, 701 MB; 30 POSTed calls
 * answered by such streams, 94 to 659 MB, `adcp_gateway_agent_buffered_response_bytes` at 0.
 * So:
 * - at most {@link MAX_BROTLI_LAYERS} `br` layer per response (no encoder stacks brotli);
 * - the standalone GET stream and long-lived streams, which live for a session, are not
 *   offered `br` (exchange.ts offeredCodings): a `br` answer there is `unsupported_encoding`;
 * - a `br` layer's memory counts against the agent's `max_buffered_response_bytes` for as
 *   long as its decoder lives: {@link decoderBytes}, 2^WBITS (the window its stream header
 *   declares, RFC 7932 §9.1, read from the layer's first byte: 1 KiB to 16 MiB) +
 *   {@link BROTLI_STATE_BYTES}, charged to the response's {@link DecoderRoom} (its
 *   agent-guard.ts BufferLease) at the body's first byte, before any decoder is made (an
 *   inner `br` at the largest window until its own first byte names its window), and given
 *   back when the decoders are gone. When that charge would take the agent over its cap
 *   while another response's decoders are charged, the first byte waits for room (TCP
 *   back-pressure; BufferLease.mustWaitForDecoders), so an agent's decoders are charged at
 *   most the larger of its cap and one response's 18.75 MiB, however many streams the seller
 *   holds open. Only the requests' answers (a JSON body, a POST's SSE stream) decode `br`,
 *   so every such wait has a deadline: the exchange's `response_deadline_ms` or
 *   `sse_deadline_ms` ends it, its lease released (`over`). The trial rerun, 30 POSTed
 *   calls answered by lgwin-24 streams (16 MB of notifications each, then a comment every
 *   2 s): 94 -> 659 MB RSS before, 95 -> 199 MB after (3 decoding; 27 waiting their turn,
 *   each holding its first chunk; the gauge at 58,986,969 bytes: 3 x 19,660,800 + 4,569).
 * - `gzip` and `deflate` are not charged: their window is at most 32 KiB (RFC 1951), whatever
 *   the seller sends, and a decoder with it filled measured 0.10-0.18 MB RSS with Node's
 *   stream objects (300 open: +32 to +51 MB), the order of an exchange's own objects, which
 *   no cap counts either (100 standalone GET streams: ~0.6 MB each, uncoded), where an
 *   lgwin-24 brotli decoder is about 100 times that and chosen by the seller. And a charge
 *   lasts as long as its decoder: on a GET stream (no deadline; `gzip` is offered there) it
 *   would be held for a session (the review of 9e985ac, which charged 64 KiB per zlib layer:
 *   test/regressions/decoder-wait-has-no-deadline.test.ts).
 * Residual risk, documented (README, docs/configuration.md max_buffered_response_bytes): per
 * agent, one response's decoders may go over the cap (18.75 MiB at most), beside the data the
 * agent's other responses hold up to the cap; while decoders take the agent over its cap, all
 * of its answers, br or not, are received one at a time (agent-guard.ts); gzip and
 * deflate decoders are not counted (above); and a seller that holds `br` streams open holds
 * its agent's decoder room until their `sse_deadline_ms` (an hour by default), so that
 * agent's other `br` answers wait for it, up to their own deadlines (the other agents are
 * not affected). With a cap under two decoders' worth, an agent's `br` answers are decoded
 * one at a time.
 */
import { drainOrClose } from './drain.js';
import { Readable, type Transform, type TransformOptions } from 'node:stream';
import zlib from 'node:zlib';
import { ByteBudget } from './byte-budget.js';
import { LoadShedError, type DecoderCharge, type WatchedBody } from '../admission/agent-guard.js';

export type DecodeFailure =
  | { reason: 'unsupported_encoding'; coding: string }
  | { reason: 'decoded_bytes'; limitBytes: number; observedBytes: number }
  | { reason: 'raw_bytes'; limitBytes: number; observedBytes: number }
  // Corrupt or truncated compressed data, data not in the coding, bytes after the stream's end.
  | { reason: 'upstream_encoding_invalid'; message: string };

/** The codings the gateway can undo, by their canonical (lower-case) name. */
export type ContentCoding = 'gzip' | 'deflate' | 'br';

/**
 * How many codings one response may stack. RFC 9110 sets no maximum; real servers send one.
 * Each layer costs a zlib stream (and a brotli window, up to 16 MiB) and a bounded counter:
 * four allows any sane combination (`deflate, br`, a proxy's extra `gzip`) while a header
 * such as `gzip, gzip, ... x 1000` is refused before a decoder is made. Every layer may
 * produce up to the decoded limit, so each one also multiplies a bomb's work. The number is
 * stated in README, docs/errors.md and docs/configuration.md (`unsupported_encoding`).
 */
export const MAX_STACKED_CODINGS = 4;

/**
 * How many `br` layers one response may stack: one. No encoder stacks brotli, and each layer
 * holds a window of up to 16 MiB (module doc; trial 15, H2: `br, br, br, br` held ~62 MB per
 * stream). More is `unsupported_encoding`, refused before any decoder is made.
 */
export const MAX_BROTLI_LAYERS = 1;

/**
 * Bytes charged for a brotli decoder besides its window: the most its state can hold while
 * one metablock is open (a seller holds that as long as it likes, by not ending the
 * metablock), rounded up to 2.75 MiB. Its prefix-code tables, allocated per metablock: up to
 * 256 trees each for literals, insert-and-copy lengths and distances, of at most 632, 1080
 * and 896 four-byte entries (brotli 1.1.0 c/dec/state.c BrotliDecoderHuffmanTreeGroupInit:
 * the alphabet + 376), 2,670,592 bytes; its context maps (256 block types x 64 + 4 bytes),
 * block-type and length trees (12,336 bytes), the ring's 542-byte write-ahead slack, and the
 * state itself with Node's 16 KiB output buffer.
 */
export const BROTLI_STATE_BYTES = 2.75 * 1024 * 1024;

/** The largest brotli window without large windows (RFC 7932 §9.1: WBITS up to 24), in bytes. */
export const BROTLI_MAX_WINDOW_BYTES = 1 << 24;

/**
 * The window (WBITS) a brotli stream declares in its first byte (RFC 7932 §9.1, read from
 * the least significant bit): 16 when the first bit is 0; else 17 + the next 3 bits when
 * they are not 0 (18..24); else 8 + the 3 after when not 0 or 1 (10..15), 17 when 0.
 * Undefined for 1 (the marker of brotli's large-window extension, which Node's decoder leaves
 * disabled: it fails on it).
 */
export function brotliWindowBits(firstByte: number): number | undefined {
  if ((firstByte & 1) === 0) return 16;
  const high = (firstByte >> 1) & 7;
  if (high !== 0) return 17 + high;
  const low = (firstByte >> 4) & 7;
  if (low === 1) return undefined;
  return low === 0 ? 17 : 8 + low;
}

/**
 * The bytes one decoding layer is charged ({@link DecoderRoom}; module doc): `br`, its
 * declared window (from `firstByte`, the layer's first input byte; the largest while it is
 * unknown or invalid) + {@link BROTLI_STATE_BYTES}: 2.81 MiB at lgwin 16, 3.25 at 19, 6.75 at
 * 22, 18.75 at 24; `gzip` and `deflate`, 0 (module doc: a 32 KiB window at most).
 */
export function decoderBytes(coding: ContentCoding, firstByte?: number): number {
  if (coding !== 'br') return 0;
  const bits = firstByte === undefined ? undefined : brotliWindowBits(firstByte);
  return (bits === undefined ? BROTLI_MAX_WINDOW_BYTES : 2 ** bits) + BROTLI_STATE_BYTES;
}

/**
 * Where a response's decoders are charged: its agent's buffered-bytes lease (agent-guard.ts
 * BufferLease: `chargeDecoders` waits for room when it must, holding the first chunk's bytes
 * meanwhile, and resolves how it ended; `unchargeDecoders` gives bytes back; a trial 15, H2).
 */
export interface DecoderRoom {
  chargeDecoders(n: number, waitingBytes: number, stream?: WatchedBody): Promise<DecoderCharge>;
  unchargeDecoders(n: number): void;
  /** Set once the response was shed (agent-guard.ts load shedding): `retry_after` in whole seconds. */
  readonly shedRetryAfterS?: number | undefined;
}

/** zlib output chunk size in bytes (zlib's own default, Z_DEFAULT_CHUNK): the overshoot unit. */
export const DECODER_CHUNK_BYTES = 16 * 1024;

/**
 * A decoder's readable high-water mark, in bytes. 1 means "stop after one chunk nobody has
 * taken": zlib pauses itself while its readable buffer is at or above this mark, so at most
 * one uncounted chunk waits in it. Set explicitly because Node 22 raised the default stream
 * high-water mark from 16 KiB to 64 KiB.
 */
export const DECODER_READABLE_HIGH_WATER_MARK_BYTES = 1;

/** Longest coding name echoed in a failure (details must stay under 500 bytes, ARCHITECTURE §3). */
const MAX_REPORTED_CODING_CHARS = 64;

/** What a zlib stream is opened for: `deflate` splits into `zlib` (RFC 1950 wrapper) and `deflate-raw`. */
export type DecoderKind = 'gzip' | 'zlib' | 'deflate-raw' | 'br';

/**
 * One decoder: a zlib stream, whose `bytesWritten` is the number of input bytes it has
 * consumed (not merely been given).
 */
export type Decoder = Transform & Pick<zlib.Zlib, 'bytesWritten'>;

/** Opens one decoder. {@link openDecoder} is the real one; tests pass a wrapper to observe the decoders. */
export type OpenDecoder = (kind: DecoderKind) => Decoder;

/** A decoding stage ended with a distinct, reportable failure. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  constructor(
    readonly failure: DecodeFailure,
    options?: { cause?: unknown },
  ) {
    super(describe(failure), options);
  }
}

function describe(failure: DecodeFailure): string {
  switch (failure.reason) {
    case 'unsupported_encoding':
      return `unsupported content coding: ${failure.coding}`;
    case 'upstream_encoding_invalid':
      return `body not decodable by its content coding: ${failure.message}`;
    default:
      return `${failure.reason}: ${failure.observedBytes} bytes observed, limit ${failure.limitBytes}`;
  }
}

const CODING_ALIASES: Readonly<Record<string, ContentCoding>> = {
  gzip: 'gzip',
  'x-gzip': 'gzip', // RFC 9110 §8.4.1.3: recipients SHOULD treat x-gzip as gzip
  deflate: 'deflate',
  br: 'br', // RFC 7932, registered for HTTP by RFC 9110 §18.6
};

function reported(coding: string): string {
  return coding.length > MAX_REPORTED_CODING_CHARS ? `${coding.slice(0, MAX_REPORTED_CODING_CHARS)}...` : coding;
}

/**
 * Canonicalizes a list of coding tokens: trimmed, case-insensitive, `x-gzip` -> `gzip`,
 * empty elements and `identity` dropped (RFC 9110 §5.6.1, §8.4).
 */
function canonicalCodings(
  tokens: readonly string[],
): { ok: true; codings: ContentCoding[] } | { ok: false; failure: DecodeFailure } {
  const codings: ContentCoding[] = [];
  let brotli = 0;
  for (const raw of tokens) {
    const token = raw.trim().toLowerCase();
    if (token === '' || token === 'identity') continue;
    const coding = Object.hasOwn(CODING_ALIASES, token) ? CODING_ALIASES[token] : undefined;
    if (coding === undefined) return { ok: false, failure: { reason: 'unsupported_encoding', coding: reported(token) } };
    if (coding === 'br') brotli++;
    codings.push(coding);
  }
  if (codings.length > MAX_STACKED_CODINGS || brotli > MAX_BROTLI_LAYERS) {
    return { ok: false, failure: { reason: 'unsupported_encoding', coding: reported(codings.join(', ')) } };
  }
  return { ok: true, codings };
}

/**
 * Parses a `Content-Encoding` header into the list of codings to undo, in the order they
 * were applied (RFC 9110 §8.4): the outermost coding is the LAST one listed.
 *
 * - `undefined`, `''`, `identity`: `{ ok: true, codings: [] }` (no decoding).
 * - Several header fields (`string[]`) are one comma-separated list (RFC 9110 §5.3).
 * - Tokens are trimmed and case-insensitive; `x-gzip` is `gzip` (RFC 9110 §8.4.1.3); empty
 *   list elements and `identity` are ignored. Codings come back canonical: `gzip`,
 *   `deflate`, `br`.
 * - An unknown coding (`compress`, `zstd`, `x-foo`, `gzip;q=1`): `ok: false` with
 *   `{ reason: 'unsupported_encoding', coding }` naming it (lower-cased, at most 64
 *   characters). Never a pass-through.
 * - More than {@link MAX_STACKED_CODINGS} codings: `ok: false`, `unsupported_encoding`, with
 *   `coding` the whole canonical list.
 */
export function parseContentEncoding(
  header: string | string[] | undefined,
): { ok: true; codings: string[] } | { ok: false; failure: DecodeFailure } {
  if (header === undefined) return { ok: true, codings: [] };
  const joined = typeof header === 'string' ? header : header.join(',');
  return canonicalCodings(joined.split(','));
}

const DECODER_OPTIONS: zlib.ZlibOptions & zlib.BrotliOptions & TransformOptions = {
  chunkSize: DECODER_CHUNK_BYTES,
  readableHighWaterMark: DECODER_READABLE_HIGH_WATER_MARK_BYTES,
  writableHighWaterMark: DECODER_CHUNK_BYTES,
  // finishFlush left at its default (Z_FINISH / BROTLI_OPERATION_FINISH): truncation is an error.
};

/** Opens the zlib stream for one decoder kind, with the gateway's chunk size and high-water marks. */
export function openDecoder(kind: DecoderKind): Decoder {
  switch (kind) {
    case 'gzip':
      return zlib.createGunzip(DECODER_OPTIONS);
    case 'zlib':
      return zlib.createInflate(DECODER_OPTIONS);
    case 'deflate-raw':
      return zlib.createInflateRaw(DECODER_OPTIONS);
    case 'br':
      return zlib.createBrotliDecompress(DECODER_OPTIONS);
  }
}

/**
 * True when the two bytes open an RFC 1950 zlib stream: compression method 8 (deflate) in
 * the low nibble of CMF, a window of at most 32 KiB (CINFO <= 7), and CMF*256+FLG a multiple
 * of 31. Anything else under `deflate` is taken for raw deflate (RFC 1951), as Chromium and
 * curl do for servers that send it.
 */
function isZlibHeader(cmf: number, flg: number): boolean {
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/**
 * Decodes `source` (the seller's wire bytes) through `codings`, yielding decoded chunks.
 *
 * @param source   the seller's body, chunk by chunk (an undici/Node Readable works)
 * @param codings  as listed in `Content-Encoding` (order applied; see
 *                 {@link parseContentEncoding}); undone last-listed first (RFC 9110 §8.4)
 * @param raw      wire bytes budget; every source chunk is counted as it arrives
 * @param decoded  decoded bytes budget; every chunk the LAST layer produces is counted as it
 *                 is produced. Each earlier layer gets its own counter with `decoded.limit`.
 * @param room     where a `br` layer's memory is charged ({@link DecoderRoom}; module doc):
 *                 the first source byte waits for room for it; none given, nothing is charged
 *                 (unit tests, a gateway without the agent guard, a stream that is not
 *                 offered `br`).
 *
 * Errors (the generator throws; all decoders are destroyed first):
 * - {@link DecodeError} `raw_bytes` (`limitBytes: raw.limit`, `observedBytes: raw.used`):
 *   a source chunk crossed `raw`; that chunk is not decoded.
 * - `decoded_bytes` (`limitBytes: decoded.limit`, `observedBytes`: that layer's count): a
 *   layer's output crossed the limit. The crossing chunk is dropped (nothing of it is
 *   yielded); the decoders are destroyed synchronously, having produced at most
 *   {@link DECODER_CHUNK_BYTES} past the limit.
 * - `upstream_encoding_invalid` (`message`: zlib's, or "bytes after the end of the
 *   compressed stream"): corrupt or truncated compressed data, data not in the coding, bytes
 *   after the end of a layer's stream (a next gzip member aside; module doc).
 * - `unsupported_encoding`: an unknown coding, more than {@link MAX_STACKED_CODINGS} or more
 *   than {@link MAX_BROTLI_LAYERS} `br` (thrown on the first `next()`, before `source` is
 *   touched).
 * - Whatever `source` throws (an aborted upstream request), unchanged.
 * - agent-guard.ts `LoadShedError`: `room` was shed while the first byte waited for it; an
 *   Error ("decoding stopped: its response is over") when `room` was released meanwhile.
 *
 * With no codings (or only `identity`) the source chunks are yielded unchanged (the same
 * Buffer objects: zero copies), counted into both budgets. Backpressure holds end to end:
 * the source is read only while the first decoder accepts input, and a decoder stops after
 * one chunk nobody has taken. When the consumer stops early (`break`, `return`, a throw),
 * every decoder is destroyed at once and `source`'s iterator is closed (`return()`) as soon
 * as a pending read of it settles; a read pending on an idle upstream settles when the
 * caller aborts that request, as it does on every early stop. A Node Readable source is then
 * released ({@link releaseBody}): destroyed, unless it had arrived whole (then it ends).
 */
export function decodeStream(
  source: AsyncIterable<Buffer>,
  codings: readonly string[],
  raw: ByteBudget,
  decoded: ByteBudget,
  room?: DecoderRoom,
  options?: DecodeOptions,
): AsyncGenerator<Buffer> {
  return decodeStreamWith(openDecoder, source, codings, raw, decoded, room, options);
}

/** How {@link decodeStream} reads a body, beyond its codings and bounds. */
export interface DecodeOptions {
  /**
   * The body must hold content (the 2xx answer to a request: pipeline.ts): a coding layer that
   * receives no byte at all fails `upstream_encoding_invalid` ("no gzip data: the body is
   * empty"; an inner layer's: "layer 2 got no byte"), where it otherwise ends empty (module
   * doc). No effect without a coding.
   */
  readonly emptyIsInvalid?: boolean;
}

/** {@link decodeStream} with the decoder factory made explicit (tests observe the decoders through it). */
export async function* decodeStreamWith(
  open: OpenDecoder,
  source: AsyncIterable<Buffer>,
  codings: readonly string[],
  raw: ByteBudget,
  decoded: ByteBudget,
  room?: DecoderRoom,
  options?: DecodeOptions,
): AsyncGenerator<Buffer> {
  const parsed = canonicalCodings(codings);
  if (!parsed.ok) throw new DecodeError(parsed.failure);
  if (parsed.codings.length === 0) {
    let whole = false;
    try {
      for await (const chunk of chunksOf(source)) {
        const breach = countUncodedChunk(raw, decoded, chunk.length);
        if (breach !== undefined) throw breach;
        yield chunk;
      }
      whole = true;
    } finally {
      if (!whole && source instanceof Readable) releaseBody(source);
    }
    return;
  }
  const chain = new DecoderChain(open, parsed.codings.slice().reverse(), decoded, room, options?.emptyIsInvalid === true);
  void chain.pump(source, raw);
  try {
    while (true) {
      const chunk = await chain.next();
      if (chunk === undefined) return;
      yield chunk;
    }
  } finally {
    chain.stop();
  }
}

/**
 * The chunks of `source` for a loop that may stop before its end. A Node Readable is read
 * with `iterator({ destroyOnReturn: false })`, and the caller then closes it with
 * {@link releaseBody}: Node's default iterator destroys a stream left early with a new
 * AbortError whose stack its error handling formats, ~30 µs of a 1 KiB one-event SSE
 * response (issue 5), where the usual early stop (the response event passed) happens on a
 * body that has already arrived whole and needs no abort at all.
 */
function chunksOf(source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  return source instanceof Readable ? (source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) : source;
}

/**
 * Stops reading a seller's body for good (the reader is done with it, at its end or not).
 *
 * - Destroyed already: nothing to do.
 * - Arrived whole (the stream has its end queued: for an undici body, the request completed
 *   and its connection went back to the pool then): the chunks still buffered are dropped and
 *   the stream ends as if read, 'end' then 'close', with no error made and nothing aborted.
 * - Otherwise: destroyed. undici then aborts the request and closes its connection, so a
 *   connection whose response was not read to its end is never reused.
 *
 * Whole is read from the stream's `_readableState.ended` (Node sets it at `push(null)`;
 * the public `readableEnded` waits for the 'end' event, which needs the buffer read).
 */
export function releaseBody(stream: Readable): void {
  if (stream.destroyed) return;
  if ((stream as unknown as { _readableState?: { ended?: boolean } })._readableState?.ended === true) {
    while (stream.read() !== null);
    return;
  }
  stream.destroy();
}

/**
 * Counts one uncoded chunk of `n` bytes into `raw`, then into `decoded` (the same bytes: no
 * coding to undo), as it arrives. The one budget check of every uncoded body reader: the
 * uncoded path of {@link decodeStreamWith}, body-source.ts `readDirect` and `DirectChunks`.
 *
 * Returns undefined while both hold, else the DecodeError to fail with (the caller drops the
 * chunk): `raw_bytes` (`limitBytes: raw.limit`, `observedBytes: raw.used`) when the chunk
 * crosses `raw`, and then it is NOT counted into `decoded`; else `decoded_bytes` (from
 * `decoded` alike). Both counts include the crossing chunk. Written flat (two `take`s, no
 * helper call): callgrind counts it as cheap as the inline checks it replaced.
 */
export function countUncodedChunk(raw: ByteBudget, decoded: ByteBudget, n: number): DecodeError | undefined {
  if (raw.take(n) < n) return budgetError(raw, 'raw_bytes');
  if (decoded.take(n) < n) return budgetError(decoded, 'decoded_bytes');
  return undefined;
}

/** The breach of `budget`: its limit, and its count with the crossing chunk. */
function budgetError(budget: ByteBudget, reason: 'raw_bytes' | 'decoded_bytes'): DecodeError {
  return new DecodeError({ reason, limitBytes: budget.limit, observedBytes: budget.used });
}

/**
 * The decoders of one response, layer 0 first (the outermost coding, listed last). Data
 * flows source -> layer 0 -> ... -> last layer -> `next()`. Every layer's output is counted
 * in its 'data' handler, i.e. as zlib produces it; the last layer pauses after each chunk
 * until the consumer takes it, an earlier layer pauses while the next one's input is full.
 * The first failure (a DecodeError or the source's own error) wins, destroys every decoder
 * and is thrown by `next()`. A layer is over once its decoder has ended AND its input has
 * (its decoder may end first, at its stream's end: {@link decoderEnded}).
 */
class DecoderChain {
  private readonly decoders: (Decoder | undefined)[];
  /** deflate only: the first byte, held until the second one says zlib or raw. */
  private readonly heads: (Buffer | undefined)[];
  /** Per layer: the bytes written to its decoder. */
  private readonly fed: number[];
  /** Per layer: its input has ended (its decoder's `end()` called). */
  private readonly inputEnded: boolean[];
  /** Per layer: its decoder ended before its input did, every byte written to it consumed. */
  private readonly streamEnded: boolean[];
  private readonly budgets: ByteBudget[];
  private readonly ready: Buffer[] = [];
  private ended = false;
  private stopped = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  /** Bytes charged to `room` for the decoders now (module doc); given back when the chain stops. */
  private charged = 0;
  /** The first source byte was seen with a `room` (the charge, if any, was asked for then). */
  private started = false;

  constructor(
    private readonly open: OpenDecoder,
    private readonly codings: readonly ContentCoding[],
    decoded: ByteBudget,
    private readonly room: DecoderRoom | undefined,
    /** DecodeOptions.emptyIsInvalid: a layer that gets no byte fails. */
    private readonly emptyIsInvalid: boolean,
  ) {
    this.decoders = codings.map(() => undefined);
    this.heads = codings.map(() => undefined);
    this.fed = codings.map(() => 0);
    this.inputEnded = codings.map(() => false);
    this.streamEnded = codings.map(() => false);
    // Intermediate layers: same limit as the decoded budget, each with its own count (an
    // unbounded one only on a stream without a total, which has no intermediate layer:
    // exchange.ts maxStackedCodings).
    this.budgets = codings.map((_, i) =>
      i === codings.length - 1 ? decoded : new ByteBudget(decoded.limit, 'decoded_bytes'),
    );
  }

  /** The next decoded chunk, undefined at the end; throws the chain's failure. */
  async next(): Promise<Buffer | undefined> {
    while (true) {
      if (this.stopped) throw this.failure;
      const chunk = this.ready.shift();
      if (chunk !== undefined) return chunk;
      if (this.ended) return undefined;
      this.decoders[this.decoders.length - 1]?.resume();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Stops everything at once (consumer gone); idempotent. */
  stop(): void {
    this.fail(undefined);
  }

  /**
   * Feeds the source into layer 0, counting raw bytes; its first byte waits for room for the
   * decoders ({@link charge}). Never rejects: failures go to `fail`.
   */
  async pump(source: AsyncIterable<Buffer>, raw: ByteBudget): Promise<void> {
    let whole = false;
    try {
      for await (const chunk of chunksOf(source)) {
        if (this.stopped) return; // leaving the loop closes the source's iterator (released below)
        if (raw.take(chunk.length) < chunk.length) return this.fail(budgetError(raw, 'raw_bytes'));
        const room = this.room;
        if (!this.started && chunk.length > 0 && room !== undefined) {
          this.started = true;
          // A stack without br is charged nothing: no await (a gzip answer keeps its cost).
          const n = this.stackBytes(chunk[0]!);
          if (n > 0 && !(await this.charge(room, n, chunk, source))) {
            if (this.stopped) return;
            this.started = false; // the source was aborted while it waited: its next read fails
            continue;
          }
        }
        if (!this.write(0, chunk)) await this.drained(0);
        if (this.stopped) return;
      }
      whole = true;
      if (!this.stopped) this.end(0);
    } catch (err) {
      this.fail(err); // the source's own error, unchanged
    } finally {
      if (!whole && source instanceof Readable) releaseBody(source);
    }
  }

  /** The stack's {@link decoderBytes}, layer 0's from `firstByte` (an inner layer's at the most). */
  private stackBytes(firstByte: number): number {
    let n = 0;
    for (let i = 0; i < this.codings.length; i++) n += decoderBytes(this.codings[i]!, i === 0 ? firstByte : undefined);
    return n;
  }

  /**
   * Charges `n` bytes ({@link stackBytes}) to `room` before the first chunk (`first`: layer
   * 0's first input) is decoded (module doc): true once charged; false when the chain stopped
   * meanwhile, or the source was aborted while the charge waited (nothing charged). Fails the
   * chain when the room was shed (LoadShedError) or released (the response is over) while it
   * waited.
   */
  private async charge(room: DecoderRoom, n: number, first: Buffer, source: AsyncIterable<Buffer>): Promise<boolean> {
    const outcome = await room.chargeDecoders(n, first.length, source instanceof Readable ? source : undefined);
    if (outcome === 'charged') {
      if (this.stopped) room.unchargeDecoders(n);
      else this.charged = n;
      return !this.stopped;
    }
    if (outcome === 'shed') this.fail(new LoadShedError(room.shedRetryAfterS ?? 1));
    else if (outcome === 'over') this.fail(new Error('decoding stopped: its response is over'));
    return false;
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.failure = err;
    for (const decoder of this.decoders) decoder?.destroy();
    if (this.charged > 0) {
      this.room?.unchargeDecoders(this.charged);
      this.charged = 0;
    }
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Writes input to layer `i`; false when the caller must wait for {@link drained}. */
  private write(i: number, chunk: Buffer): boolean {
    if (chunk.length === 0) return true;
    if (this.streamEnded[i]) {
      this.fail(bytesAfterEnd());
      return true;
    }
    let decoder = this.decoders[i];
    if (decoder === undefined) {
      let input = chunk;
      if (this.codings[i] === 'deflate') {
        const head = this.heads[i];
        input = head === undefined ? chunk : Buffer.concat([head, chunk]);
        if (input.length < 2) {
          this.heads[i] = input;
          return true;
        }
        this.heads[i] = undefined;
      }
      decoder = this.start(i, input);
      this.fed[i]! += input.length;
      return decoder.write(input);
    }
    this.fed[i]! += chunk.length;
    return decoder.write(chunk);
  }

  /**
   * Layer `i`'s input has ended. A layer that never received a byte ends empty, or fails
   * where the body must hold content (DecodeOptions.emptyIsInvalid).
   */
  private end(i: number): void {
    let decoder = this.decoders[i];
    const head = this.heads[i];
    if (decoder === undefined && head === undefined && this.emptyIsInvalid) return this.fail(noData(this.codings, i));
    if (decoder === undefined && head !== undefined) {
      this.heads[i] = undefined;
      decoder = this.start(i, head);
      this.fed[i]! += head.length;
      decoder.write(head);
    }
    this.inputEnded[i] = true;
    if (decoder === undefined || this.streamEnded[i]) this.layerEnded(i);
    else decoder.end();
  }

  /**
   * Layer `i`'s decoder ended. It consumed every byte written to it, or the rest follows the
   * end of its compressed stream: Node's inflate and brotli decoders end there, leaving the
   * rest unread; its gunzip goes on into a next gzip member, fails on other bytes and stops
   * before zero bytes (module doc). Ended before its input did, every byte consumed (Node's
   * decoders end early only with bytes left unread; kept exact for one that would not), the
   * layer waits for its input's end: a byte written to it meanwhile follows the end
   * ({@link write}).
   */
  private decoderEnded(i: number, decoder: Decoder): void {
    if (this.stopped) return;
    if (decoder.bytesWritten < this.fed[i]!) return this.fail(bytesAfterEnd());
    if (!this.inputEnded[i]) {
      this.streamEnded[i] = true;
      return;
    }
    this.layerEnded(i);
  }

  private layerEnded(i: number): void {
    if (this.stopped) return;
    if (i + 1 < this.decoders.length) return this.end(i + 1);
    this.ended = true;
    this.notify();
  }

  /** Resolves when layer `i` wants input again, or is gone. */
  private drained(i: number): Promise<void> {
    const decoder = this.decoders[i];
    if (decoder === undefined || this.stopped) return Promise.resolve();
    return drainOrClose(decoder);
  }

  /** Opens layer `i`'s decoder on its first input bytes and wires its output. */
  private start(i: number, firstBytes: Buffer): Decoder {
    const coding = this.codings[i]!;
    const kind: DecoderKind =
      coding !== 'deflate'
        ? coding
        : firstBytes.length >= 2 && isZlibHeader(firstBytes[0]!, firstBytes[1]!)
          ? 'zlib'
          : 'deflate-raw';
    // An inner br layer was charged the largest window: its first byte names its own.
    if (coding === 'br' && i > 0 && this.charged > 0) {
      const over = decoderBytes('br') - decoderBytes('br', firstBytes[0]);
      this.room?.unchargeDecoders(over);
      this.charged -= over;
    }
    const decoder = this.open(kind);
    this.decoders[i] = decoder;
    const budget = this.budgets[i]!;
    const last = i === this.decoders.length - 1;
    decoder.on('error', (err: Error) => {
      this.fail(new DecodeError({ reason: 'upstream_encoding_invalid', message: err.message }, { cause: err }));
    });
    decoder.on('data', (chunk: Buffer) => {
      if (this.stopped) return;
      if (budget.take(chunk.length) < chunk.length) return this.fail(budgetError(budget, 'decoded_bytes'));
      if (last) {
        decoder.pause(); // one chunk at a time: resumed by next() once the consumer took it
        this.ready.push(chunk);
        this.notify();
      } else if (!this.write(i + 1, chunk)) {
        decoder.pause();
        void this.drained(i + 1).then(() => {
          if (!this.stopped) decoder.resume();
        });
      }
    });
    decoder.on('end', () => this.decoderEnded(i, decoder));
    return decoder;
  }
}

/** The failure of bytes after the end of a compressed stream (a next gzip member aside). */
/** The failure of layer `i` (0: the body itself) that received no byte where content is needed. */
function noData(codings: readonly ContentCoding[], i: number): DecodeError {
  const where = i === 0 ? 'the body is empty' : `layer ${i + 1} got no byte`;
  return new DecodeError({ reason: 'upstream_encoding_invalid', message: `no ${codings[i]!} data: ${where}` });
}

function bytesAfterEnd(): DecodeError {
  return new DecodeError({ reason: 'upstream_encoding_invalid', message: 'bytes after the end of the compressed stream' });
}
