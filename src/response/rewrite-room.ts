/**
 * Whether a rewritten answer fits the limits in force; when it does not, the stage sends the
 * seller's answer unchanged instead (it fit: its bytes were counted against the same limits
 * as they arrived), never an error. The rule: **a rewrite is skipped when its output would
 * not fit; the answer then goes out as the seller wrote it.**
 *
 * Only a lift can need it: a dedupe never makes an answer longer (normalize.ts
 * summaryShortens, dedupe-splice.ts, scanned-message.ts rewriteScanned). A lift appends
 * `,"structuredContent":` and the object to `result` and replaces the text by its summary
 * (up to 202 bytes as a JSON string), so a short text makes the answer longer, by up to ~220
 * bytes once per answer; a lift that is re-serialized (parse path, no splice) also respells
 * numbers (`1e20` is written `100000000000000000000`), so its growth has no such bound. The
 * check is on the output's length, whatever made it.
 *
 * Reported failure (review of the dedupe fix): with `max_response_bytes` at the seller's
 * exact answer size, legacy text-only results reached the host 60, 70 and 141 bytes over the
 * limit (72 to 135 with the regression test's answers), as JSON and as a one-event SSE
 * stream (test/regressions/lift-grows-past-limit.test.ts).
 *
 * Cost: one comparison of lengths already known (the output buffer's and the seller's), made
 * only for an answer that was rewritten; no pass over any body.
 */
import type { ByteBudget } from './byte-budget.js';

/**
 * JSON: whether the rewritten body may replace the seller's. The whole body is the answer
 * the host receives, counted against `max_response_bytes` (json-stage.ts).
 *
 * @param outBytes   the rewritten body's length (bytes)
 * @param limitBytes the exchange's `max_response_bytes`
 */
export function bodyRewriteFits(outBytes: number, limitBytes: number): boolean {
  return outBytes <= limitBytes;
}

/**
 * SSE: whether the rewritten data of the response event may replace the seller's data
 * (sse-stage.ts `deliver`, after the event's resume token was counted). True when it is no
 * longer; otherwise the data must fit `max_sse_event_bytes`, and what it adds must fit the
 * stream's cumulative bound on top of the count so far.
 *
 * @param outBytes      the rewritten data's UTF-8 length (bytes)
 * @param sellerBytes   the seller's data's UTF-8 length (bytes; within `maxEventBytes`)
 * @param maxEventBytes the exchange's `max_sse_event_bytes`
 * @param count         the request stream's cumulative count (`max_response_bytes`): the
 *                      seller's bytes through this event (all of the chunk range it was
 *                      dispatched in: never fewer), plus what every resume token and every
 *                      block's re-encoding added (this event's included: sse-stage.ts
 *                      chargeToken, chargeEncoding), seeded from the resumed token's count on a
 *                      `Last-Event-ID` reconnect; undefined on a stream with no cumulative
 *                      bound (the standalone GET stream, which carries no response)
 * @param pendingBytes  bytes of this event the count has yet to get (the LF of a CR LF still
 *                      to come: 0 or 1), counted as the resume tokens count them
 */
export function eventRewriteFits(outBytes: number, sellerBytes: number, maxEventBytes: number, count: ByteBudget | undefined, pendingBytes: number): boolean {
  const added = outBytes - sellerBytes;
  if (added <= 0) return true;
  if (outBytes > maxEventBytes) return false;
  return count === undefined || count.used + pendingBytes + added <= count.limit;
}
