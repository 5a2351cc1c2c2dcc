/**
 * The host side of the SSE stage (sse-stage.ts): the stream's head and its frames, written
 * to the host's response.
 *
 * - Head: committed when the writer is made (`reply.hijack()`, the SSE headers), it goes out
 *   with the first bytes written in this turn of the event loop (a one-event answer that
 *   arrived with its head: head, event and end in one socket write); alone at the end of this
 *   turn otherwise (when the stage first waits: {@link SseHostWriter.flushHeadSoon}), so that
 *   the host sees its stream start before the first event of a slow stream. Never the
 *   seller's bytes (re-encoded events, tokens for ids, dropped events, U+FFFD, a final error
 *   event), decided before any event: its digests and ETag never pass (`sellerBytes` false:
 *   headers.ts SELLER_BYTES_HEADERS; a new user's hostile trial 12, M4).
 * - Frames: queued in one SseFrameBatch (sse-encode.ts) while an input chunk is processed,
 *   written to the host together when the chunk is done ({@link SseHostWriter.flush}), before
 *   the next chunk is awaited: batching without delay (one write per event cost more than all
 *   the rest on a stream of small events: bench/README.md "SSE events/s"). Bytes written count
 *   in the exchange's `bytesToHost`.
 * - Back-pressure: past {@link SSE_HOST_BUFFER_BYTES} held by the host's response,
 *   {@link SseHostWriter.needDrain} tells the stage to wait for its drain before reading on.
 * - The plain end ({@link SseHostWriter.end}): the last frames and the end in one socket write.
 *
 * - Deferred head (`onHead` given: a seller's 202 answering a request, sent on as 200:
 *   accepted-answer.ts): committed, `onHead` run, at the body's first byte (after decoding:
 *   the stage calls {@link SseHostWriter.startStream} as it takes a non-empty chunk), or
 *   {@link ACCEPTED_HEAD_WAIT_MS} after the writer is made, or when the stage answers or ends
 *   the stream (an error event, a reset, a timeout, a bound, a shutdown, a body ended after
 *   that wait). From then on the stream is as any other: comments, a cut-off event or a
 *   `retry:` line alone are a stream without its response, `upstream_reset` on the 200. Until
 *   then nothing is written ({@link SseHostWriter.headDeferred}): a body the seller ends with no
 *   byte at all (`Content-Length: 0`, an empty chunked body, a coding with no byte) is an
 *   empty 202, answered as one of any other type is, the gateway's JSON error for the
 *   request's id (sse-stage.ts onUpstreamEnd: `upstream_not_mcp`). Reported failures: hostile
 *   trial 59, F1 (an empty 202 SSE answer went to the host as 200 with `upstream_reset`, warned
 *   and counted: test/regressions/seller-empty-202-sse-answer-sent-as-200.test.ts); review of
 *   its fix, Medium (the head then waited for the first event: a seller sending only
 *   keep-alive comments gave the host no head for up to `sse_deadline_ms`, and Node's fetch,
 *   the MCP SDK client's, gives up after 300 s without one:
 *   test/regressions/seller-202-keepalive-stream-head-withheld.test.ts) and Low (a 202 whose
 *   response event was cut off was `upstream_not_mcp` where the same bytes sent 200 were
 *   `upstream_reset`: test/regressions/seller-202-cut-off-event-reported-empty.test.ts).
 *
 * One writer per stream; nothing allocated per event here (the batch's own buffers aside).
 */
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { GATEWAY_FINISHED } from '../errors/abort.js';
import type { Exchange } from '../exchange.js';
import { hijackAndWriteHead } from './headers.js';
import { SseFrameBatch } from './sse-encode.js';
import { SSE_RESPONSE_HEADERS } from './sse-headers.js';

/**
 * Bytes the host's response may hold (`writableLength`: written to it and not yet sent, the
 * socket's write buffer included) before the SSE stage stops reading the seller until the
 * response drains. At most this plus what one input chunk completes wait per stream: the
 * chunk (a socket read: <= 64 KiB; a decoded piece: <= 16 KiB), or an event held across
 * chunks that it completes (up to `max_sse_event_bytes`, as before this bound).
 *
 * Why not the response's own signal (`write()` false, at the socket's high-water mark: 16 KiB
 * on Node 20, 64 KiB from Node 22, this bound): undici hands the stage one chunk per HTTP
 * chunk of the seller, so one socket read of a stream of ~18 KB seller writes is ~2-3
 * chunks, and on Node 20 each write passed 16 KiB. Waiting for the drain after each one sent
 * every chunk in its own `writev` in a later turn of the event loop. Reading on while under
 * this bound, the chunks of one read leave in one `writev` (corkSocketForThisTick).
 *
 * Measured (issue 5, bench sse-flood: 4 streams of 10,000 ~190-byte events, Node 20, strace):
 * the gateway's `writev` calls carried ~17.7 KB each, as the pass-through's, and now ~62 KB
 * (3.5x fewer per byte); its CPU per event went from 0.94-1.02 to 0.82-0.85 µs
 * (bench/README.md "SSE events/s"). Tests: test/integration/sse-host-backpressure.test.ts.
 */
export const SSE_HOST_BUFFER_BYTES = 64 * 1024;

/**
 * The longest the host's 200 head for a seller's 202 SSE answer waits for the body's first
 * byte or its end (ms; module doc, Deferred head). Long enough for a seller's empty body to
 * end (it comes with its head, or just after); short against the 300 s Node's fetch (the MCP
 * SDK client's) waits for a head, so a stream that is slow to start reaches the host as before
 * the wait (review of hostile trial 59 F1's fix, Medium).
 */
export const ACCEPTED_HEAD_WAIT_MS = 1_000;

export class SseHostWriter {
  /** Frames of the input chunk being processed, written to the host together by {@link flush}. */
  readonly batch = new SseFrameBatch();
  /**
   * A flush left the host's response holding {@link SSE_HOST_BUFFER_BYTES} or more: the stage
   * waits for it to drain before the next chunk (and clears this).
   */
  needDrain = false;
  private readonly raw: ServerResponse;
  /** The head has not gone out with bytes written, and the stream is not over. */
  private headPending = true;
  private headTimer: NodeJS.Immediate | undefined = undefined;
  /** The head waits for the body's first byte (module doc, Deferred head): `onHead` until it is committed. */
  private onHead: (() => void) | undefined;
  /** Commits a deferred head {@link ACCEPTED_HEAD_WAIT_MS} after the writer is made (the stage's start). */
  private deferTimer: NodeJS.Timeout | undefined = undefined;

  /**
   * Takes over `reply` and commits the SSE head with `statusCode` (module doc, Head); with
   * `onHead`, later (module doc, Deferred head: at most {@link ACCEPTED_HEAD_WAIT_MS} ms from
   * now), `onHead` called as it is committed.
   */
  constructor(
    private readonly reply: FastifyReply,
    private readonly statusCode: number,
    private readonly exchange: Exchange,
    onHead?: () => void,
  ) {
    this.raw = reply.raw;
    this.onHead = onHead;
    if (onHead === undefined) hijackAndWriteHead(reply, statusCode, SSE_RESPONSE_HEADERS, false);
    else this.deferTimer = setTimeout(() => this.commitAfterWait(), ACCEPTED_HEAD_WAIT_MS);
  }

  /**
   * The deferred head's wait ran out: committed unless the exchange ended or the host's
   * response is already sent or gone meanwhile (the stage's `finally` clears the timer on
   * every path it reaches; this guards one it does not, so a timer never writes a second head:
   * a review of the deferred head, Nit).
   */
  private commitAfterWait(): void {
    this.deferTimer = undefined;
    const raw = this.raw;
    if (this.exchange.finished || raw.headersSent || raw.destroyed) return;
    this.startStream();
  }

  /** The head is deferred and not committed yet: nothing went to the host (module doc, Deferred head). */
  get headDeferred(): boolean {
    return this.onHead !== undefined;
  }

  /**
   * Commits a deferred head now (module doc, Deferred head): the stream is the host's from
   * here; the head goes out with the bytes written in this turn, else alone at its end. O(1),
   * nothing once committed (called per non-empty input chunk).
   */
  startStream(): void {
    const onHead = this.onHead;
    if (onHead === undefined) return;
    this.onHead = undefined;
    this.clearDeferTimer();
    hijackAndWriteHead(this.reply, this.statusCode, SSE_RESPONSE_HEADERS, false);
    onHead();
    this.flushHeadSoon();
  }

  private clearDeferTimer(): void {
    if (this.deferTimer === undefined) return;
    clearTimeout(this.deferTimer);
    this.deferTimer = undefined;
  }

  /** Writes the queued frames to the host, if it can still take them; counts them, and notes when it must drain. */
  flush(): void {
    const raw = this.raw;
    if (raw.writableEnded || raw.destroyed) return;
    // Deferred (module doc): no byte came, so nothing is queued; nothing goes out before the head.
    if (this.onHead !== undefined) return;
    const { bytes, full } = this.batch.flush(raw);
    if (bytes === 0) return;
    this.headSent();
    this.exchange.bytesToHost += bytes;
    if (full && raw.writableLength >= SSE_HOST_BUFFER_BYTES) this.needDrain = true;
  }

  /** The head went out with bytes written, or the stream is over: nothing left for the timers to do. */
  headSent(): void {
    this.headPending = false;
    this.clearDeferTimer();
    if (this.headTimer === undefined) return;
    clearImmediate(this.headTimer);
    this.headTimer = undefined;
  }

  /** The stage waits for the first time: a head not yet sent goes out alone at the end of this turn. */
  flushHeadSoon(): void {
    if (!this.headPending || this.onHead !== undefined || this.headTimer !== undefined) return;
    const raw = this.raw;
    this.headTimer = setImmediate(() => {
      this.headTimer = undefined;
      if (!raw.writableEnded && !raw.destroyed) raw.flushHeaders();
    });
  }

  /**
   * Ends the host's stream plainly: the queued frames, then the end; the exchange finished with
   * `outcome`, its upstream request aborted.
   *
   * Corked through the end: the last events and the end (and a head not sent yet) leave in
   * one socket write (`end()` fully uncorks the connection). The *socket* is corked, not
   * the response: on Node 22 and 24 a corked response holds its chunked writes itself and
   * `end()` sends the terminating chunk before them (nodejs/node#50167), so the host lost
   * the last events and a keep-alive client read them as the next response (found by
   * review, 2026-12-01; the test kit's `end` checks it in every SSE stage test).
   */
  end(outcome: 'ok' | 'rewritten' | 'resumable_end'): void {
    const raw = this.raw;
    const exchange = this.exchange;
    this.startStream();
    const socket = !raw.writableEnded && !raw.destroyed ? raw.socket : null;
    socket?.cork();
    this.flush();
    exchange.finished = true;
    exchange.outcome = outcome;
    exchange.abortUpstream(GATEWAY_FINISHED);
    if (!raw.writableEnded) raw.end();
    else socket?.uncork();
  }
}
