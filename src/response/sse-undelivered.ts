/**
 * The count of a stream's decoded seller bytes that reached the host as nothing, on a stream
 * without a cumulative bound (the standalone GET stream, a long-lived one: exchange.ts
 * hasCumulativeBound; a bounded stream's total counts every byte already). Used by sse-stage.ts.
 *
 * Shape: one count per connection (a Last-Event-ID reconnect starts a new one at 0), in
 * decoded bytes (what the stage parses: a coded body's decoder output), against `limit`: the
 * exchange's effective `max_response_bytes` (the agent's, or its tool's) plus the stage's
 * per-event cap (`max_sse_event_bytes` + SSE_PENDING_SLACK_BYTES: the bound on the parser's
 * buffer and on a line, sse-stage.ts). The count holds the bytes of the event being read,
 * which its frame clears only once it goes out; with the cap in the limit, an event the cap
 * accepts (its data within `max_sse_event_bytes`, its other lines, line breaks and blank line
 * within the slack) goes out after up to `max_response_bytes` of bytes that reached the host
 * as nothing. Before, the limit was `max_response_bytes` alone, and with `max_sse_event_bytes`
 * unset (equal to it) an event whose data was at the cap ended the stream by itself: its
 * `event:`/`id:` lines and blank line took its block past the limit
 * (test/regressions/get-stream-event-at-cap-ends-stream.test.ts). The limit stays a sum of
 * the exchange's limits: at most twice `max_response_bytes` + 64 KiB.
 * - Counted ({@link take}): every byte the stage takes, each once, as it is taken and before
 *   it is parsed: a range handed to the parser (sse-chunk-taker.ts `take`), a run of blocks forwarded as the
 *   seller's bytes, an id-only block read from its bytes, bytes held for an event that spans
 *   chunks.
 * - Lowered ({@link forwarded}): whenever the stage queues a frame for the host, by
 *   {@link UNDELIVERED_FRAME_CREDIT} (64) x what the frame carries, to 0 at least: an event's
 *   frame as written, its `id:` line aside (the gateway's token: its `event:` line, `data: `
 *   prefixes, data and line breaks; an event with empty data, `data: \n\n`, 8 bytes), a
 *   raw-forwarded run of events' bytes (the same bytes: the raw path forwards only blocks in
 *   the encoder's form), a pending id's token, a comment or `retry:` frame as written. Before,
 *   an event the stage parsed or held was credited its data alone (in UTF-16 units when
 *   parsed), a raw one its block: the same notification forgave less cut inside than whole in
 *   a chunk (test/regressions/get-stream-event-credit-depends-on-chunks.test.ts). So the gateway decodes at most
 *   64 bytes for nothing per byte it forwards, plus the limit: a seller's tiny frames cannot
 *   keep it decoding without end. Heartbeats (`: keepalive`, 12 bytes out, 13 in) forgive 768
 *   bytes each: a stream of them alone, or between events, never ends; an event of 1 KiB
 *   forgives 64 KiB. Before, any frame reset the count: a `:\n` (a review of e72ea9d:
 *   test/regressions/get-stream-tiny-comments-reset-undelivered.test.ts), a `retry:` line or
 *   an event with empty data (`data:\n\n`, hostile trial 40, F1: 4 MiB of deflated junk per
 *   2 bytes sent, 419 MB decoded in 8 s for 200 bytes;
 *   test/regressions/get-stream-empty-events-reset-undelivered.test.ts) every limit bytes kept a
 *   deflate-coded stream decoding ~1000:1 for nothing without end. The stage ends its
 *   pieces at the end of each comment or `retry` line on these streams (sse-frame-lines.ts),
 *   so such a frame lowers the count through its own line and the bytes after it count on,
 *   however the seller's bytes were cut (before, the frame cleared the whole piece it was
 *   parsed in: a comment line inside a block sent whole forgave the block's bytes after it,
 *   cut after that line it did not: test/unit/sse-undelivered-cuts.test.ts); a comment-only
 *   block's blank line counts after its frame. So does the LF of an event's CR LF blank line
 *   (the event goes out at the CR; before, whole, its frame forgave that LF with the block, cut
 *   between the two it did not:
 *   test/regressions/get-stream-crlf-blank-line-lf-undelivered-chunks.test.ts). The stage
 *   takes the parsed blocks of these streams one at a time, so an event's frame lowers the
 *   count by its block's bytes too, and never by a later block's: a run of blocks the planner
 *   sends to the parser for its invalid UTF-8 included (before, taken whole, the frame of an
 *   event in the run forgave the blocks after it, an event dropped there too, and cut in the
 *   run it did not: test/regressions/get-stream-invalid-utf8-run-undelivered-chunks.test.ts).
 * - What it leaves counted: events dropped (a JSON-RPC response on the GET stream,
 *   `get_stream_response`; a breach's drop: `sse_event`, `sse_event_memory`, `json_depth`,
 *   `json_nodes`; data naming no kind of message; each one the parser dispatched also charged
 *   1,024 bytes more, {@link UndeliveredBytes.charge}, but a connection's first `{}`:
 *   sse-ignored-lines.ts SSE_DROPPED_EVENT_CHARGE_BYTES, trial 52's leftover), the bytes skipped of an event over the
 *   per-event cap, lines of unknown fields (`x: ...`; each also charged 1,024 bytes more,
 *   {@link UndeliveredBytes.charge}: sse-ignored-lines.ts), id-only blocks (their id waits for the next event:
 *   sse-stage.ts `onIdOnly`), blank lines, an event's bytes before its blank line.
 * - The bound: the count may reach `limit`; the next byte with no frame before it ends the
 *   stream plainly (outcome `resumable_end`, reason `sse_undelivered`, errors/codes.ts
 *   END_REASONS; the host resumes with Last-Event-ID, a pending id's token written first).
 *   The stage parses a range that crosses it only up to the limit point
 *   ({@link UndeliveredBytes.takeUpToLimit}): an event or comment completed there still goes
 *   out and the count is lowered, with the rest of the range following; nothing past the limit
 *   point is parsed otherwise. So where the
 *   stream ends does not depend on how the seller's bytes were cut into chunks.
 *
 * Why (hostile trial 37, F1, Medium): these streams had no total, and the only bound on bytes
 * decoded for nothing was the skip allowance of one over-cap event (hostile trial 32, L1:
 * `max_response_bytes` skipped after the event's cap broke). 50 events each past the cap but
 * ending within the allowance, deflate-coded, made 404,439 bytes decode to 415,000,450 (1.6 s
 * of the gateway's CPU, 270 bytes to the host); 4 MB JSON-RPC responses dropped from the GET
 * stream, endless unknown-field lines and id-only blocks did the same with nothing skipped
 * (test/regressions/get-stream-undelivered-bytes-unbounded.test.ts). This count replaces that
 * allowance: what an over-cap event skips is counted here with the rest. A seller may still
 * keep the gateway decoding for as long as it forwards at least 1/64 of what it sends (event
 * data, comments): the host then receives bytes, which is what these streams are for, and
 * `sse_idle_timeout_ms` bounds its silence.
 *
 * Cost: an addition per range the stage takes, a store per frame; on these streams a search
 * for the line breaks of each parsed range (sse-frame-lines.ts).
 */
export class UndeliveredBytes {
  /** Decoded bytes taken for nothing, as lowered by the frames queued for the host, 0 ..= the limit. */
  private count = 0;

  /** Decoded bytes the count may reach: `max_response_bytes` + the per-event cap. */
  readonly limit: number;

  /**
   * @param maxResponseBytes the exchange's `max_response_bytes` (decoded bytes, >= 1): what may reach the host as nothing before an event
   * @param eventCap         the stage's per-event cap (`max_sse_event_bytes` + SSE_PENDING_SLACK_BYTES): the event's own block
   */
  constructor(maxResponseBytes: number, eventCap: number) {
    this.limit = maxResponseBytes + eventCap;
  }

  /** Bytes the stage may still take with no frame for the host before the stream must end (0 when the next byte would pass the limit). */
  get room(): number {
    return this.limit - this.count;
  }

  /** Counts `n` decoded bytes the stage takes (the caller keeps the count within the limit: {@link room}). */
  take(n: number): void {
    this.count += n;
  }

  /**
   * Counts `n` bytes that are no seller byte: the charge for a line the parser ignored or an
   * event it dispatched that was dropped (sse-ignored-lines.ts), at its line's or event's place. True when they fit under the limit; false
   * otherwise, the count then at the limit (the caller ends the stream, `sse_undelivered`, as
   * at the next byte past it). Charges come between a piece's bytes, counted before it is
   * parsed, and the frame at its end (sse-chunk-taker.ts `take`), so whether a piece ends the
   * stream does not depend on where the seller's bytes were cut: its bytes and charges before
   * its frame are the same however it arrives.
   */
  charge(n: number): boolean {
    if (n > this.room) {
      this.count = this.limit;
      return false;
    }
    this.count += n;
    return true;
  }

  /**
   * A frame carrying `bytes` to the host was queued (an event's frame as written, its `id:` line aside; a raw-forwarded run of
   * events, a pending id's token, a comment or `retry:` frame as written): the count is lowered
   * by {@link UNDELIVERED_FRAME_CREDIT} x those bytes, to 0 at least.
   */
  forwarded(bytes: number): void {
    this.count = Math.max(0, this.count - UNDELIVERED_FRAME_CREDIT * bytes);
  }

  /**
   * {@link forwarded} for a frame of at least `atLeast` bytes whose exact size costs something
   * to compute (an event's: sse-stage.ts `framedEvent`): true, the count set to 0, when
   * `atLeast` brings it there already; false otherwise, the count unchanged (the caller then
   * passes the exact size to {@link forwarded}).
   */
  clearedBy(atLeast: number): boolean {
    if (this.count > UNDELIVERED_FRAME_CREDIT * atLeast) return false;
    this.count = 0;
    return true;
  }

  /**
   * Takes the range `[start, end)`, which holds more than {@link room}, in pieces through
   * `takePiece(from, to, last)` (sse-chunk-taker.ts `take`, which counts the piece before parsing it;
   * `last`: the piece ends the range): the bytes up to the limit point first; when they gave
   * the host a frame (the count is below the limit again) the rest follows, in turn, else `atLimit` is
   * called (the stage ends the stream) and nothing past the limit point is taken. False once
   * a piece returns false or the limit is reached. Each turn takes at least one byte unless
   * the count is at the limit, which ends it: at most `end - start` turns.
   */
  takeUpToLimit(start: number, end: number, takePiece: (from: number, to: number, last: boolean) => boolean, atLimit: () => void): boolean {
    let from = start;
    while (end - from > this.room) {
      const cut = from + this.room;
      if (cut > from && !takePiece(from, cut, false)) return false;
      // No frame in those bytes: the count is at the limit, and the next byte passes it.
      if (this.room === 0) {
        atLimit();
        return false;
      }
      from = cut;
    }
    return takePiece(from, end, true);
  }
}

/**
 * Undelivered bytes a frame forgives per byte it carries to the host (module doc, "Lowered"):
 * 64, so that a seller's heartbeats (`: keepalive`, 768 bytes forgiven for the 12 bytes
 * written) never end a stream, while what a seller's tiny frames keep the gateway decoding is
 * at most 64 bytes per byte the host receives.
 */
export const UNDELIVERED_FRAME_CREDIT = 64;
