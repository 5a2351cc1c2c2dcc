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

/** The parser's `ParseError.type` values that {@link SSE_IGNORED_LINE_CHARGE_BYTES} applies to (one `onError` call per line). */
export function isIgnoredLineError(type: string): boolean {
  return type === 'unknown-field' || type === 'invalid-retry';
}
