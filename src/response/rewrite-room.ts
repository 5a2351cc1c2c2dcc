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
 * A lift skipped so is reported, as a lift skipped for a text bound is: the exchange's
 * `textNotLifted` (the exchange line's `text_not_lifted`, the metric
 * `adcp_gateway_texts_not_lifted_total{agent,reason}`) is the limit the lifted answer would
 * have gone over ({@link LiftRoomReason}; {@link recordLiftSkippedForRoom}). Reported failure
 * (a reviewer): such an answer was logged `outcome: ok` with nothing saying a lift had been
 * skipped (test/regressions/lift-skipped-for-room-silent.test.ts).
 *
 * The same rule holds for the structure bounds every seller message is held to,
 * `max_json_depth` and `max_json_nodes` (the lifted object is nested 2 levels below the
 * message's top, and its values are added to the message's): {@link liftOverJsonBound}, checked
 * where the lift is made (lift-splice.ts for the scan path, rewrite.ts rewriteResponse for the
 * parse path; JSON bodies and SSE event data alike), since both bounds are known there; the
 * byte room is the stage's, which knows what the host has received. Reported failure (a new
 * user's hostile trial, F1: test/regressions/lift-exceeds-json-depth-and-nodes.test.ts).
 *
 * Cost: one comparison of lengths already known (the output buffer's and the seller's), made
 * only for an answer that was rewritten, and two integer comparisons of counts the scans
 * already made, only for a lift; no pass over any body.
 */
import type { Exchange } from '../exchange.js';
import type { ByteBudget } from './byte-budget.js';

/**
 * The limit a skipped lift's output would have gone over, named as the config key that sets
 * it (docs/configuration.md; README, Logs): `max_response_bytes`, the lifted JSON body over
 * it, or on SSE the stream's count with the lift's added bytes over it (the same limit as the
 * stream's cumulative bound, `sse_cumulative`, counts it: what the stream has sent before
 * included); `max_sse_event_bytes`, the lifted event data over the per-event bound (SSE only);
 * `max_json_depth` / `max_json_nodes`, the lifted message (JSON body or event data) nested
 * deeper or holding more values than the bound ({@link liftOverJsonBound}: checked where the
 * lift is made, lift-splice.ts and rewrite.ts, before the byte room; depth named first).
 */
export type LiftRoomReason = 'max_response_bytes' | 'max_sse_event_bytes' | 'max_json_depth' | 'max_json_nodes';

/** A JSON text's nesting and value count, as the scans count them (json-scan.ts, json-bounds.ts checkJsonBounds). */
export interface JsonShape {
  /** Nesting of arrays and objects (`{}` alone: 1). */
  readonly depth: number;
  /** JSON values, the top-level one included (object keys not counted). */
  readonly nodes: number;
}

/** Levels above a lifted object in the answer: `structuredContent` of `result` (message, `result`) or of `result.result` (one more). */
export const LIFT_LEVELS = { result: 2, 'result.result': 3 } as const;

/**
 * The structure bound a lift's output message would go over, or undefined when it stays
 * within both: `max_json_depth` when the lifted object, `levels` below the message's top
 * ({@link LIFT_LEVELS}), would nest deeper than it; else `max_json_nodes` when the message's
 * values and the text's together are more than it. A lift over either is skipped as one over
 * `max_response_bytes` is (module doc): the answer goes out as the seller wrote it, and
 * {@link recordLiftSkippedForRoom} names the bound.
 *
 * Computed from what the scans already counted, no pass over any bytes: the output's depth is
 * the larger of the message's (within the bound: the scan refused it otherwise) and `levels +
 * text.depth`; its values are the message's plus the lifted object's (the lifted item's text
 * and any copy's become a summary, a string for a string; a dedupe never adds any, so it needs
 * no check). Exact for the spliced output (the seller's bytes, the text's bytes as
 * `structuredContent`); an upper bound for a re-serialized one, where a repeated member name
 * is written once.
 *
 * Reported failure (a new user's hostile trial, F1): a text holding an object exactly
 * `max_json_depth` (64) deep reached the host 66 deep, and a message of ~100,000 values with a
 * text of 100,000 reached it with 199,986, bytes the gateway refuses from a seller (`json_depth`,
 * `json_nodes`) (test/regressions/lift-exceeds-json-depth-and-nodes.test.ts).
 *
 * @param levels       {@link LIFT_LEVELS}: where the lifted object goes
 * @param text         the lifted text's JSON, as its bounds check counted it
 * @param messageNodes the seller message's values (its scan's); undefined when not counted
 *                     (a caller without a scan: the depth alone is checked)
 * @param limits       the exchange's `max_json_depth` and `max_json_nodes`
 */
export function liftOverJsonBound(
  levels: number,
  text: JsonShape,
  messageNodes: number | undefined,
  limits: { readonly max_json_depth: number; readonly max_json_nodes: number },
): LiftRoomReason | undefined {
  if (levels + text.depth > limits.max_json_depth) return 'max_json_depth';
  if (messageNodes !== undefined && messageNodes + text.nodes > limits.max_json_nodes) return 'max_json_nodes';
  return undefined;
}

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
 * SSE: the bound the rewritten data of the response event would go over in place of the
 * seller's data (sse-stage.ts `deliver`, after the event's resume token was counted), or
 * undefined when it may replace it. What the rewrite adds to the host's stream is its data's
 * bytes and its framing's: each LF of event data starts a `data: ` line (6 bytes,
 * sse-encoded-size.ts encodedEventBytes). When that is more than nothing, it must fit the
 * stream's cumulative bound on top of the count so far (else `'max_response_bytes'`); and
 * longer data must fit `max_sse_event_bytes` (else `'max_sse_event_bytes'`; a bound on the
 * data alone). The stream's bound is named first when both would be broken: an unset
 * `max_sse_event_bytes` is the response limit, so a one-event answer at exactly
 * `max_response_bytes` breaks both, and raising `max_response_bytes` is what makes room then
 * (as on the JSON path, which names it too).
 *
 * Why the framing (a read-only review, M1): a lift wrote a text's LFs raw, each a `data: `
 * line on the host's stream that only the data's length was checked for: 100,000 of them
 * took an answer bounded at 300,000 bytes to 700,209
 * (test/regressions/sse-lift-newlines-exceed-max-response-bytes.test.ts). A lift now adds no
 * line break (lift-line-breaks.ts); the framing is charged all the same.
 *
 * @param out           the rewritten data: its UTF-8 length (bytes) and its `data:` lines
 *                      (sse-encoded-size.ts dataLineCount)
 * @param seller        the seller's data, alike (its bytes within `maxEventBytes`)
 * @param maxEventBytes the exchange's `max_sse_event_bytes`
 * @param count         the request stream's cumulative count (`max_response_bytes`): the
 *                      seller's bytes through this event (all of the chunk range it was
 *                      dispatched in: never fewer), plus what every resume token and every
 *                      block's re-encoding added (this event's included: sse-event-ids.ts
 *                      chargeToken, sse-encoding-charge.ts), seeded from the resumed token's count on a
 *                      `Last-Event-ID` reconnect; undefined on a stream with no cumulative
 *                      bound (the standalone GET stream, which carries no response)
 * @param pendingBytes  bytes of this event the count has yet to get (the LF of a CR LF still
 *                      to come: 0 or 1), counted as the resume tokens count them
 */
export function eventRewriteOverBound(out: EventData, seller: EventData, maxEventBytes: number, count: ByteBudget | undefined, pendingBytes: number): LiftRoomReason | undefined {
  const added = eventRewriteAddedBytes(out, seller);
  if (count !== undefined && added > 0 && count.used + pendingBytes + added > count.limit) return 'max_response_bytes';
  return out.bytes > seller.bytes && out.bytes > maxEventBytes ? 'max_sse_event_bytes' : undefined;
}

/** An event's data as the encoder frames it: its UTF-8 length and its `data:` lines (sse-encoded-size.ts dataLineCount). */
export interface EventData {
  readonly bytes: number;
  readonly lines: number;
}

/** What the host's stream gets more (less, when negative) with the data `out` in place of `seller`: data and `data: ` prefixes. */
export function eventRewriteAddedBytes(out: EventData, seller: EventData): number {
  return out.bytes - seller.bytes + DATA_PREFIX_BYTES * (out.lines - seller.lines);
}

/** `data: `: what each `data:` line adds to an event's data on the host's stream (sse-encoded-size.ts encodedEventBytes). */
const DATA_PREFIX_BYTES = 6;

/**
 * Records a rewrite skipped because its output would go over `reason`'s limit (the
 * seller's answer goes out instead): when it was a lift (`action` `'lifted'`), the exchange's
 * `textNotLifted` is `reason`. Only a lift can be skipped so (a dedupe never grows an
 * answer); any other `action` records nothing. A lift that was made has no text-bound
 * reason to overwrite (rewrite.ts records one only for a result it does not lift).
 */
export function recordLiftSkippedForRoom(exchange: Exchange, action: string, reason: LiftRoomReason): void {
  if (action === 'lifted') exchange.textNotLifted = reason;
}
