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
 * µs per line in the parser, ~0.55-0.65 µs per 2-byte line `x\n` in the stage (bench/sse-loop.ts
 * `--case junk`, below), ~300 ns per byte where the seller's ordinary events cost ~1.6-2.3 ns
 * per byte (`--case small`). A GET stream of `x` lines with a 1.1 KB comment every 60 KB (the
 * comment's 64x undelivered credit ahead) held `/healthz` at p50 145-913 ms for 20 s, logged
 * `ok`; 8 calls answered with 3.9 MiB of gzip-coded `x` lines took 12-19 s of CPU in 20 s,
 * within every limit (test/regressions/sse-unknown-field-lines-cost-uncharged.test.ts).
 *
 * The figure: 256 bytes, so that an ignored line costs the gateway about what 256 bytes of
 * ordinary events do (~600 ns / 256 = ~2.3 ns per byte charged, against ~1.6-2.3 ns per byte of
 * one-line events forwarded: measured on the machine of the fix, Node 20, the stage alone).
 * A 4 MiB bound then admits ~16,000 such lines per stream (~10 ms of CPU), where it admitted
 * 2M; a stream without a total must forward 1 byte to its host per 4 ignored lines
 * (256 / UNDELIVERED_FRAME_CREDIT 64) to go on. A seller's occasional unknown field costs
 * nothing noticeable. Skipping such lines before the parser was not chosen: it would add a
 * scan of every parsed text on the normal path, where this charge costs nothing (the parser
 * calls `onError` only for these lines).
 */

/** Bytes each line the parser ignores with an error counts on top of its own (module doc). */
export const SSE_IGNORED_LINE_CHARGE_BYTES = 256;

/** The parser's `ParseError.type` values that {@link SSE_IGNORED_LINE_CHARGE_BYTES} applies to (one `onError` call per line). */
export function isIgnoredLineError(type: string): boolean {
  return type === 'unknown-field' || type === 'invalid-retry';
}
