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
 *   `gzip, gzip` cannot inflate unbounded before the last layer sees it.
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
 *   common): a layer that receives no byte at all produces nothing and is not an error.
 * - `deflate` is zlib-wrapped per RFC 9110 §8.4.1.2; a body without a valid zlib header
 *   (RFC 1950 §2.2) is inflated raw, as browsers and curl do.
 *
 * Brotli windows (a hostile new user's trial 15, H2): a brotli decoder fills the window its
 * stream header declares (up to 16 MiB; large windows stay disabled) before it hands out a
 * byte, and keeps it while its stream lives, whatever the decoded limit: measured 15.9 MB per
 * decoder from a 3 KB body at lgwin 24, 4.0 MB at lgwin 22, 0.27 MB at lgwin 16 (gzip/deflate
 * windows are 32 KiB: 25-31 KB per decoder). 30 standalone GET streams with one `br` layer,
 * kept alive by a comment every 2 s, took a gateway from 94 to 655 MB RSS; `br, br, br, br` x
 * 10 streams, 701 MB. So:
 * - at most {@link MAX_BROTLI_LAYERS} `br` layer per response (no encoder stacks brotli);
 * - the standalone GET stream and long-lived streams, which live for a session, are not
 *   offered `br` (exchange.ts offeredCodings): a `br` answer there is `unsupported_encoding`.
 * Residual risk, documented: a request's stream (a POST answered with SSE, bounded by its
 * `sse_deadline_ms`) may still hold one brotli window of up to 16 MiB, counted by no bound
 * (30 such streams at lgwin 24: ~646 MB). Offer `br` only to agents that need it.
 */
import { drainOrClose } from './drain.js';
import { Readable, type Transform, type TransformOptions } from 'node:stream';
import zlib from 'node:zlib';
import { ByteBudget } from './byte-budget.js';

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
 * - `unsupported_encoding`: an unknown coding or more than {@link MAX_STACKED_CODINGS}
 *   (thrown on the first `next()`, before `source` is touched).
 * - Whatever `source` throws (an aborted upstream request), unchanged.
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
): AsyncGenerator<Buffer> {
  return decodeStreamWith(openDecoder, source, codings, raw, decoded);
}

/** {@link decodeStream} with the decoder factory made explicit (tests observe the decoders through it). */
export async function* decodeStreamWith(
  open: OpenDecoder,
  source: AsyncIterable<Buffer>,
  codings: readonly string[],
  raw: ByteBudget,
  decoded: ByteBudget,
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
  const chain = new DecoderChain(open, parsed.codings.slice().reverse(), decoded);
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

  constructor(
    private readonly open: OpenDecoder,
    private readonly codings: readonly ContentCoding[],
    decoded: ByteBudget,
  ) {
    this.decoders = codings.map(() => undefined);
    this.heads = codings.map(() => undefined);
    this.fed = codings.map(() => 0);
    this.inputEnded = codings.map(() => false);
    this.streamEnded = codings.map(() => false);
    // Intermediate layers: same limit as the decoded budget, each with its own count.
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

  /** Feeds the source into layer 0, counting raw bytes. Never rejects: failures go to `fail`. */
  async pump(source: AsyncIterable<Buffer>, raw: ByteBudget): Promise<void> {
    let whole = false;
    try {
      for await (const chunk of chunksOf(source)) {
        if (this.stopped) return; // leaving the loop closes the source's iterator (released below)
        if (raw.take(chunk.length) < chunk.length) return this.fail(budgetError(raw, 'raw_bytes'));
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

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.failure = err;
    for (const decoder of this.decoders) decoder?.destroy();
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

  /** Layer `i`'s input has ended. A layer that never received a byte ends empty. */
  private end(i: number): void {
    let decoder = this.decoders[i];
    const head = this.heads[i];
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
function bytesAfterEnd(): DecodeError {
  return new DecodeError({ reason: 'upstream_encoding_invalid', message: 'bytes after the end of the compressed stream' });
}
