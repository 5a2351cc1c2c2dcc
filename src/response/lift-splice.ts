/**
 * The lift of a legacy text-only tool result (ARCHITECTURE §5; mcp-response-extraction
 * §Extraction Algorithm step 3) written without `JSON.parse` of the message or of the text:
 * the same bytes the parse path (rewrite.ts -> normalize.ts -> splice.ts) sends, for the
 * answers whose outcome can be told from the scan alone; `undefined` for every other answer,
 * which the caller then takes through the parse path.
 *
 * How: scanned-result.ts answers the parse path's checks from the scan's ranges (the
 * response's `jsonrpc` and id, `isError`, `resultType`, the items' `type`s). The located
 * texts are judged from their bytes (mcp/lift-text.ts: decoded and scanned in WebAssembly,
 * with the top-level members the summary shows). The output is then
 * what splice.ts writes for the lift: the seller's bytes with the lifted item's text replaced
 * by the summary and `,"structuredContent":` + the text's bytes appended to `result`, each raw
 * CR and LF of them written as a space (lift-line-breaks.ts: the same value, and no line break
 * in an SSE event's data).
 *
 * Why (issue 5, the (c) rewrite path must cost no more than decode + parse + stringify +
 * encode of the message, ~5-7 ms per MiB): measured in process on the bench's 1 and 4 MiB
 * legacy messages, the parse path cost ~9-10.5 ms/MiB after the body scan, this one
 * ~1.4-2.4 ms/MiB (decode + scan of the text ~1 ms, the output message most of the rest). Through the gateway, the
 * CPU it adds over the pass-through went from 0.41-0.88× the floor to 0.85-1.75× (1 MiB) and
 * from 0.52-0.65× to 1.03-1.43× (4 MiB), over 4 noisy bench runs.
 *
 * The output is longer than `body` when the text was short (normalize.ts: up to ~220 bytes):
 * whether it fits the limit is the stage's check (rewrite-room.ts), on its length. Whether it
 * stays within `max_json_depth` and `max_json_nodes` is checked here (rewrite-room.ts
 * liftOverJsonBound; a new user's hostile trial, F1).
 *
 * Handled here, the parse path otherwise: what scanned-result.ts handles, with no
 * `structuredContent`, a lifted text with no lone surrogate (neither in its JSON string in the
 * message, which the judge leaves undecided, nor in an escape of its own JSON,
 * mcp/lone-surrogate.ts escapesLoneSurrogate: the parse path does not lift it and says so,
 * `text_not_lifted: "lone_surrogate"`, a hostile trial 29, M1), at most SCAN_TEXT_MEMBERS members,
 * numbers that round-trip and no key that is or may be `__proto__` (the parse path does not
 * lift it and says so, `text_not_lifted: "proto_key"`: a hostile trial 24, L1), and no text
 * item after it that holds an object (it might be a copy, which needs the parsed value to
 * compare).
 *
 * Not lifted: a result with no liftable text is always declined (`undefined`), whatever its
 * texts hold, so the parse path decides it, and it alone records a text skipped for a bound
 * (rewrite.ts -> normalize.ts `textNotLifted`: the exchange line's `text_not_lifted`). A
 * reviewer: "a text over the bounds was silently not lifted"
 * (test/regressions/text-over-bounds-not-lifted-silently.test.ts). So is a result with a text
 * over the depth or node bound before the one that would be lifted (the judge's
 * `TEXT_OVER_BOUND`): the walk ends at such a text, nothing is lifted (hostile trial 38, F1:
 * test/regressions/over-bound-text-passed-over-for-later-text.test.ts); one over the byte
 * bound is passed over, here as there (the judge's `'skip'`, over a structure bound too:
 * test/regressions/text-over-byte-and-structure-bound-declines-fast-lift.test.ts), and counts
 * in neither.
 */
import type { Exchange } from '../exchange.js';
import { TEXT_OVER_BOUND, type JsonScanSummary } from '../mcp/json-scan.js';
import { judgeStringText } from '../mcp/lift-text.js';
import { escapesLoneSurrogate } from '../mcp/lone-surrogate.js';
import { isTextItem, scannedToolResult } from './scanned-result.js';
import { bodyPool } from './body-pool.js';
import { SC_MEMBER } from './splice.js';
import { liftedLineBreaksAsSpaces } from './lift-line-breaks.js';
import { LIFT_LEVELS, liftOverJsonBound, recordLiftSkippedForRoom } from './rewrite-room.js';

/**
 * The lifted message bytes, or undefined (the caller takes the parse path); `body` itself
 * when the lift is skipped because the lifted message would be over `max_json_depth` or
 * `max_json_nodes` (rewrite-room.ts liftOverJsonBound, recorded on the exchange as
 * `text_not_lifted`: the only "not lifted" this path decides, from the counts the body's
 * and the text's scans made).
 *
 * @param body the seller's message bytes; `scan` its successful scan
 */
export function spliceLegacyLift(exchange: Exchange, body: Buffer, scan: JsonScanSummary): Buffer | undefined {
  if (scan.members?.structuredContent !== undefined) return undefined;
  const found = scannedToolResult(exchange, body, scan);
  // No `structuredContent` in the scan of a `result` with plain keys (scannedToolResult) is none in the parse either.
  const end = found?.members.resultEnd;
  if (found === undefined || end === undefined) return undefined;
  const { items, bounds } = found;

  // The text fallback's walk (extract.ts findTextObject), then the copies' (normalize.ts summarizeCopies).
  let lift: { index: number; summary: Uint8Array; bytes: Uint8Array; depth: number; nodes: number } | undefined;
  let liftCopied = false;
  for (let i = 0; i < items.count; i++) {
    const range = items.texts[i];
    // Not a text item, or one whose `text` is no string: neither lifted nor a copy.
    if (range === undefined || !isTextItem(body, items, i)) continue;
    if (lift !== undefined && !liftCopied) {
      // The lifted bytes are a view of the scan's memory, which the next scan may overwrite or grow.
      lift.bytes = Buffer.from(lift.bytes);
      liftCopied = true;
    }
    const judged = judgeStringText(body, range, bounds);
    if (judged === 'skip') continue; // no object, or adcp_error-only: neither lifted nor a copy
    // Undecided; a text over a structure bound (no item after it is lifted, which the parse path
    // decides and reports: extract.ts findLiftableTextOrBound, hostile trial 38, F1); or a text
    // after the lifted one (it may be a copy of the lifted object).
    if (judged === 'unknown' || judged === TEXT_OVER_BOUND || lift !== undefined) return undefined;
    // A lone surrogate escape: not lifted, which the parse path decides and reports (normalize.ts).
    if (escapesLoneSurrogate(judged.bytes)) return undefined;
    lift = { index: i, summary: judged.summary, bytes: judged.bytes, depth: judged.depth, nodes: judged.nodes };
  }
  if (lift === undefined) return undefined;
  // The lifted message must stay within the structure bounds the seller's was held to
  // (rewrite-room.ts liftOverJsonBound): else the seller's bytes go out, the skip recorded.
  const over = liftOverJsonBound(LIFT_LEVELS.result, lift, scan.nodes, exchange.limits);
  if (over !== undefined) {
    recordLiftSkippedForRoom(exchange, 'lifted', over);
    return body;
  }

  const { bytes, summary } = lift;
  const text = items.texts[lift.index]!;
  // One copy of each part into the message (no intermediate copy of the lifted bytes).
  const out = bodyPool.splice(body, [
    { start: text[0], end: text[1], insert: [summary] },
    { start: end, end, insert: [SC_MEMBER, bytes] },
  ]);
  // The lifted bytes' line breaks as spaces (lift-line-breaks.ts), as the parse path writes them.
  const at = end + summary.length - (text[1] - text[0]) + SC_MEMBER.length;
  liftedLineBreaksAsSpaces(out, at, at + bytes.length);
  return out;
}
