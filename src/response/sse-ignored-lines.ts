/**
 * The charge for each SSE line eventsource-parser ignores with an error (sse-stage.ts, its
 * parser's `onError`): a line with an unknown field name (`x`, `foo: bar`) or a `retry:` whose
 * value is not all digits. Each such line counts {@link SSE_IGNORED_LINE_CHARGE_BYTES} bytes on
 * top of its own bytes (which are counted as every byte is): against a bounded stream's
 * `max_response_bytes` total (sse-encoding-charge.ts `chargeAdded`: past it, `sse_cumulative`,
 * its `observed_bytes` including the charges), and on a stream without a total (the standalone
 * GET stream, a long-lived one) against its undelivered limit (sse-undelivered.ts `charge`:
 * past it, the plain end `sse_undelivered`). Not at the seller's end (the last line, handed
 * over by SseLineFeeder.finish, ends nothing: the stream is over).
 *
 * Why (hostile trial 52, F2, Medium): the parser builds a `ParseError` (an `Error`) for every
 * such line and calls `onError` with it, even with stack capture off (sse-parser-feed.ts): ~0.4
 * µs per line in the parser, ~0.43-0.54 µs per 2-byte line `x\n` in the stage (bench/sse-loop.ts
 * `--case junk`, below), ~215-270 ns per byte where the seller's ordinary events cost ~0.5-1.5
 * ns per byte (`--case small`, `--case progress`). A GET stream of `x` lines with a 1.1 KB comment every 60 KB (the
 * comment's 64x undelivered credit ahead) held `/healthz` at p50 145-913 ms for 20 s, logged
 * `ok`; 8 calls answered with 3.9 MiB of gzip-coded `x` lines took 12-19 s of CPU in 20 s,
 * within every limit (test/regressions/sse-unknown-field-lines-cost-uncharged.test.ts).
 *
 * The figure: 1,024 bytes, so that an ignored line costs no more per byte charged than the
 * seller's ordinary events cost per byte (bench/sse-loop.ts, compiled, Node 20, 64 KiB chunks,
 * min-median of 15-30 streams, the stage alone): an `x` line 431-537 ns (`--case junk`, a
 * request's stream and the GET stream), so 0.42-0.52 ns per byte charged, against 0.83-1.48 ns
 * per byte for one-line events (`--case small`) and 0.50-1.44 for `event: message`
 * notifications (`--case progress`); 512 would be 0.84-1.05, about equal to the former. A 4
 * MiB bound then admits ~4,000 such lines per stream (~2 ms of CPU), where it admitted 2M; a
 * stream without a total must forward 16 bytes to its host per such line (1,024 /
 * UNDELIVERED_FRAME_CREDIT 64) to go on: an event of ordinary size forgives several.
 * A seller's occasional unknown field costs nothing noticeable. Skipping such lines before
 * the parser was not chosen: it would add a scan of every parsed text on the normal path,
 * where this charge costs nothing (the parser calls `onError` only for these lines).
 */

/** Bytes each line the parser ignores with an error counts on top of its own (module doc). */
export const SSE_IGNORED_LINE_CHARGE_BYTES = 1024;

/**
 * Bytes each event the SSE stage dispatches and drops counts on top of its own bytes, the same
 * way and against the same bounds as {@link SSE_IGNORED_LINE_CHARGE_BYTES} (sse-stage.ts
 * `refused`, through `chargeWork`): an event the parser (or the held-block path) dispatched to
 * the stage's `deliver` that does not go out and leaves the exchange open: a JSON-RPC response
 * where none may pass (`get_stream_response`, `notification_stream_response`), data naming no
 * kind of message (`message_without_kind`), and, on a stream without a total, where a breach
 * drops the event, one over `max_sse_event_bytes` at its dispatch (`sse_event`) or over a
 * structure bound (`json_depth`, `json_nodes`), or no MCP message (`upstream_not_mcp`). Not a
 * connection's first dropped event whose data is an empty object (`{}`, JSON whitespace
 * allowed): an MCP SDK server's priming event, which its event store replays on a resume (one
 * per stream). Not an event the parser never dispatched (skipped over its cap, over the open
 * event's memory bound: their bytes are what they weigh), nor one at the seller's end (the
 * stream is over). Charged once per event, at its dispatch, after its block's bytes are
 * counted and before any byte after it is (sse-chunk-taker.ts takes each parsed block that
 * may be dropped alone): where the stream ends, and `observed_bytes` when a charge takes a
 * bounded stream over, do not depend on how the seller's bytes were cut into chunks
 * (test/regressions/sse-dropped-events-cost-uncharged.test.ts, part 2).
 *
 * Why (hostile trial 52, its leftover, Low): such an event is parsed, its data read as JSON
 * and judged, then counted for the drop's log and metric, and it reached the host as nothing
 * within every bound, counted as its bytes only. bench/sse-loop.ts, compiled, Node 20, 10,000
 * events, 16-64 KiB chunks, min of 30 streams, the stage alone: `--case empty` (a 10-byte
 * `data: {}`) ~0.9 µs on a request's stream and ~1.3-1.8 µs on the GET stream (~90-180 ns per
 * byte); `--case deep --rpc get` (138 bytes, `json_depth`) ~2.0-2.3 µs (~15 ns per byte);
 * forwarded one-line events (`--case small`, `progress`) ~0.5-2 ns per byte. A request's
 * stream took ~400,000 `data: {}` per call at 4 MiB (~0.4 s of CPU), the GET stream ~845,000
 * per undelivered allowance (~1.2 s), and again after each forwarded frame. With the charge such an event
 * costs ~0.9-2 ns per byte counted, as ordinary events do: ~4,050 per 4 MiB bound (~4 ms), on
 * the GET stream ~8,170 per undelivered allowance, each then needing 16 bytes forwarded to the
 * host to go on (a 12-byte `: keepalive` per dropped response no longer does). The figure is
 * the ignored lines' (sse-ignored-lines.ts above): one rule for work on bytes that reach the
 * host as nothing. Cost on the normal path: none (a check on the refusal path only; the
 * `--case small` and `progress` figures do not move, before and after, within the bench's noise).
 */
export const SSE_DROPPED_EVENT_CHARGE_BYTES = 1024;

/** The parser's `ParseError.type` values that {@link SSE_IGNORED_LINE_CHARGE_BYTES} applies to (one `onError` call per line). */
export function isIgnoredLineError(type: string): boolean {
  return type === 'unknown-field' || type === 'invalid-retry';
}
