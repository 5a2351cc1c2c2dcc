/**
 * The dedupe of a tool result whose `content[].text` repeats its `structuredContent`
 * (ARCHITECTURE §1.3, §5: "strips the duplicated JSON text") written without `JSON.parse` of
 * the message or of the text: the same bytes the parse path (rewrite.ts -> normalize.ts
 * summarizeCopies -> splice.ts) sends, for the answers whose outcome can be told from the scan
 * alone; `undefined` for every other answer, which the caller then takes through the parse
 * path.
 *
 * How: scanned-result.ts answers the parse path's checks from the scan's ranges (the
 * response's `jsonrpc` and id, `isError`, `resultType`, the items' `type`s). Each located
 * text is decoded and scanned from its bytes (mcp/lift-text.ts judgeStringText). A text
 * whose decoded UTF-8 bytes are exactly the seller's bytes of `structuredContent` (what a
 * seller's `JSON.stringify(structuredContent)` gives) is a copy: the same text parses to the same value, which is the parse path's
 * exact-copy rule (normalize.ts `structuredContentText`). Its string is replaced by the
 * summary of that value (summary.ts summarizeShape, from the text's scanned members), as
 * splice.ts writes it, when the summary's JSON string is shorter than the text's JSON string
 * as the seller wrote it (the range's length, at hand); a copy no longer than its summary is
 * kept as written (normalize.ts summaryShortens: a dedupe never grows an answer).
 *
 * Declined (the parse path decides): what scanned-result.ts declines; `structuredContent` not
 * an object; a text holding an object that is not byte-equal to `structuredContent` (it may
 * still be deep-equal: another key order, spacing or number spelling); a text the judge leaves
 * undecided (a lone surrogate, more members than the scan records, a number that loses
 * digits, a key that is or may be `__proto__`: the parse path keeps such a text, proto-key.ts,
 * a hostile trial 24, L1); no copy. A key `structuredContent` writes twice shows no value in
 * the summary (lift-text.ts, summary.ts SummaryShape.repeated; trial 24, L2).
 * Texts that hold no object, are over a bound, or are `adcp_error`-only are no copy in either
 * path (an `adcp_error`-only `structuredContent` is never deduped: no text equal to it is
 * counted, so nothing is found and the parse path leaves it).
 *
 * Why (issue 5, the (b) case): the parse path's `JSON.parse` of the whole message, the
 * copies of the result objects and the object diff of splice.ts were most of the cost of a
 * deduped 1 KiB result, and `JSON.parse` of a 4 MiB one alone ~15 ms.
 */
import type { Exchange } from '../exchange.js';
import { TEXT_OVER_BOUND, type ByteRange, type JsonScanSummary } from '../mcp/json-scan.js';
import { BACKSLASH, CR, LBRACE, LF, SPACE, TAB } from '../mcp/json-bytes.js';
import { judgeStringText } from '../mcp/lift-text.js';
import { isTextItem, scannedToolResult } from './scanned-result.js';
import { bodyPool, type SpliceEdit } from './body-pool.js';

/**
 * The deduped message bytes; `body` itself when every copy is kept (each no longer than its
 * summary: the answer is unchanged); or undefined (the caller takes the parse path).
 *
 * @param body the seller's message bytes; `scan` its successful scan
 */
export function spliceDedupe(exchange: Exchange, body: Buffer, scan: JsonScanSummary): Buffer | undefined {
  const sc = scan.members?.structuredContent;
  if (sc === undefined || body[sc[0]] !== LBRACE) return undefined;
  const found = scannedToolResult(exchange, body, scan);
  if (found === undefined) return undefined;
  const { items, bounds } = found;
  const structured = body.subarray(sc[0], sc[1]);

  // normalize.ts summarizeCopies, from the first item on.
  const edits: SpliceEdit[] = [];
  let insert: Uint8Array[] | undefined; // the summary's JSON string (UTF-8), the same for every copy
  for (let i = 0; i < items.count; i++) {
    const range = items.texts[i];
    // Not a text item, or one whose `text` is no string: neither extracted nor a copy.
    if (range === undefined || !isTextItem(body, items, i)) continue;
    // A long text whose first bytes already tell it apart is judged without decoding it whole.
    if (range[1] - range[0] > PREFIX_CHECK_MIN_BYTES) {
      const prefix = textPrefixVerdict(body, range, structured);
      if (prefix === 'not_object') continue;
      if (prefix === 'differs') return undefined; // an object, not a byte copy: it may still be deep-equal
    }
    const judged = judgeStringText(body, range, bounds);
    // No object, or one over a bound (a byte copy of structuredContent, which the message's bounds held, never is).
    if (judged === 'skip' || judged === TEXT_OVER_BOUND) continue;
    // Compared now: the judged bytes are a view of the scan's memory, which the next judge reuses.
    if (judged === 'unknown' || !structured.equals(judged.bytes)) return undefined;
    insert ??= [judged.summary];
    // A copy no longer than its summary stays as the seller wrote it (normalize.ts summaryShortens).
    if (range[1] - range[0] <= insert[0]!.length) continue;
    edits.push({ start: range[0], end: range[1], insert });
  }
  if (insert === undefined) return undefined;
  return edits.length === 0 ? body : bodyPool.splice(body, edits);
}

/** Decoded bytes of a text compared with `structuredContent` before it is decoded whole ({@link textPrefixVerdict}). */
const PREFIX_BYTES = 64;
/**
 * A text whose JSON string (quotes included) is at most this many bytes is judged whole
 * without {@link textPrefixVerdict} first: the judge of a few KiB costs little more than the
 * prefix walk, which is all overhead for a copy (issue 5, 1 KiB (b): ~0.3 µs, ~6% of the
 * dedupe in a loop). The output is the same either way: a text the prefix tells apart is no
 * byte copy, so the judge and the comparison pass over it (no object, or one the parse path
 * passes over too: invalid, over a bound, `adcp_error`-only) or decline the answer
 * (test/unit/dedupe-splice.test.ts). One kind of answer now goes to the parse path where the
 * prefix check let this path answer: a short text that is no object but holds a lone surrogate
 * escape (the judge cannot decode it and says `'unknown'`); slower, not different.
 */
const PREFIX_CHECK_MIN_BYTES = 4096;

/**
 * What the first bytes of the text held by the JSON string at `body[range]` (quotes included,
 * valid UTF-8, scanned valid) say against `expected`, the seller's bytes of
 * `structuredContent` (which start with `{`):
 * - `'not_object'`: its first character after JSON whitespace is not `{` (or there is none):
 *   `parseTextObject` reads no object from it, so it is no copy in either path;
 * - `'differs'`: it starts (after any whitespace) with `{` but its decoded bytes are not
 *   `expected`'s: a pretty-printed or reordered copy, or another object;
 * - `'maybe'`: its first {@link PREFIX_BYTES} decoded bytes are `expected`'s (or a `\u` escape
 *   came first): the full decode decides (judgeStringText).
 *
 * Why (review of the dedupe): a pretty-printed copy was decoded and scanned whole before the
 * comparison declined it, ~15% on top of the parse path that then handles it (0.9 MiB).
 */
function textPrefixVerdict(body: Buffer, range: ByteRange, expected: Buffer): 'not_object' | 'differs' | 'maybe' {
  const end = range[1] - 1;
  let k = 0; // decoded bytes read
  let leadingSpace = false;
  for (let i = range[0] + 1; i < end && k < PREFIX_BYTES; i++, k++) {
    let b = body[i]!;
    if (b === BACKSLASH) {
      const e = body[++i]!;
      if (e === 0x75 /* u */) return 'maybe';
      // \" \\ \/ stand for themselves; the other one-character escapes for control bytes.
      b = e === 0x6e ? LF : e === 0x74 ? TAB : e === 0x72 ? CR : e === 0x62 ? 0x08 : e === 0x66 ? 0x0c : e;
    }
    if (k === 0 || leadingSpace) {
      if (b === SPACE || b === LF || b === CR || b === TAB) {
        leadingSpace = true;
        continue;
      }
      if (b !== LBRACE) return 'not_object';
      // `{` after whitespace: an object, and not `expected`, which starts with `{`.
      if (leadingSpace) return 'differs';
    }
    if (b !== expected[k]) return 'differs';
  }
  if (k === 0 || leadingSpace) return 'not_object'; // empty, or whitespace only
  // Escapes only lengthen a text: one whose string is shorter than `expected` cannot hold it.
  return end - range[0] - 1 < expected.length ? 'differs' : 'maybe';
}

