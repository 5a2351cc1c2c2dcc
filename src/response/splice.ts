/**
 * Writes a rewritten tool result as the seller's bytes with only the changed parts
 * replaced, instead of re-serializing the whole message (issue 5: the rewrite path must do
 * no more work than decode + parse + stringify + encode; `JSON.stringify` + encode of a
 * 1 MiB message alone cost ~5 ms).
 *
 * What normalization changes (normalize.ts) is always: the `text` of some `content` items of
 * the tool result (`result`, or a 2026-07-28 `tasks/get`'s `result.result`: rewrite.ts
 * toolResultLocation), replaced by a summary, and for a lift, `structuredContent` appended as
 * the last key of the tool result. The JSON scan (json-scan.ts members) gives the byte range
 * of each item's `text` string and of the `}` closing `result` for the first
 * SCAN_CONTENT_ITEMS items; past them, and inside `result.result`, a walk of the bytes does
 * (mcp/tool-result-ranges.ts, {@link spliceTarget}; review 38). The output is:
 *
 *   seller bytes up to item k's text | JSON string of the summary | seller bytes ... |
 *   `,"structuredContent":` + the lifted JSON text | `}` closing result | the rest
 *
 * The lifted JSON text is the seller's own text item (the value normalization parsed it
 * into is exactly what a host's JSON.parse reads back), each raw CR and LF of it written as a
 * space (lift-line-breaks.ts: JSON whitespace either way; in an SSE event's data a line break
 * broke the host's parse, or cost a `data: ` line the bounds did not count), unless the text
 * is not well-formed (UTF-8 could not carry it: a lone code unit that the text's JSON pairs with an escape, such
 * as `<U+D800>\udc00`): then `JSON.stringify` of the parsed value. A text whose parsed value
 * holds a lone surrogate is never lifted (mcp/lone-surrogate.ts: a strict parser would refuse
 * the `\ud800` either way writes).
 *
 * Everything else keeps the seller's bytes: whitespace (a line break aside, in the lifted
 * text), key order, number spellings. So the
 * output parses (JSON.parse) to the re-serialized rewrite except where the seller's own
 * bytes say more than a re-serialization would: `-0` stays `-0` (re-serialized: `0`), and a
 * duplicate key stays in place (an earlier `content` or `text` of the seller's is kept as
 * written; JSON.parse reads the last one, which is the one rewritten). Found in review.
 * Returns undefined when the change is not of that shape or a key on the way is written with
 * an escape (it may be another `result`, `content` or `text`), or when the body is not valid
 * UTF-8 (a rewritten body always is): the caller then re-serializes a lift and sends a dedupe
 * unchanged (scanned-message.ts rewriteScanned). Before review 38 it also declined a text past
 * the scan's first 16 items and any `tasks/get` result, which then went out re-serialized, the
 * seller's `structuredContent` and `_meta` re-spelled
 * (test/regressions/dedupe-past-sixteen-items-respells-structured-content.test.ts).
 */
import { isUtf8 } from 'node:buffer';
import { SCAN_CONTENT_ITEMS, type ByteRange, type ContentItems, type TopMembers } from '../mcp/json-scan.js';
import { locateToolResult, type ToolResultLocation } from '../mcp/tool-result-ranges.js';
import { isJsonObject, parsedTextFacts } from '../mcp/extract.js';
import { bodyPool, type SpliceEdit } from './body-pool.js';
import { liftedLineBreaksAsSpaces } from './lift-line-breaks.js';

/**
 * Whether {@link spliceRewrite} writes a lifted text's own characters as `structuredContent`:
 * unless it is not well-formed (UTF-8 cannot carry it; lifted only when its object holds no
 * lone surrogate, mcp/lone-surrogate.ts), where it writes `JSON.stringify` of the parsed
 * object (scanned-message.ts then checks what that drops: mcp/reserialized-lift.ts).
 */
export function liftedTextSplicedAsWritten(text: string): boolean {
  return text.isWellFormed();
}

/** What a lift appends to `result` before the lifted JSON text. */
export const SC_MEMBER = Buffer.from(',"structuredContent":');

/**
 * Where the tool result is in the seller's bytes, as {@link spliceRewrite} needs it: from the
 * scan's members for a `result` of at most {@link SCAN_CONTENT_ITEMS} items (no extra work),
 * else from a walk of the bytes (mcp/tool-result-ranges.ts: a `result` with more items, a
 * 2026-07-28 `tasks/get`'s `result.result`). Asked only once a rewrite needs it (an answer that
 * was rewritten, or a `result.result` whose dedupe reads the seller's bytes: scanned-message.ts).
 */
export interface SpliceTarget {
  /** Every key on the way to the tool result, of it and of its `content` items is written plain (an escaped key may be another member). */
  readonly plainKeys: boolean;
  /** Offset of the `}` closing the tool result. */
  readonly resultEnd: number | undefined;
  /** The tool result's `content` items' `text` ranges (all of them). */
  readonly content: ContentItems | undefined;
  /** Range of the tool result's `structuredContent` value, or undefined. */
  readonly structuredContent: ByteRange | undefined;
}

/**
 * The {@link SpliceTarget} of the tool result at `location` in `body` (its scan's `members`);
 * undefined when the bytes do not place it (no object there).
 */
export function spliceTarget(body: Buffer, members: TopMembers, location: ToolResultLocation): SpliceTarget | undefined {
  const items = members.content;
  // A message key written with an escape: no walk either (its plainKeys would be false too).
  if (location === 'result' && (!members.plainKeys || items === undefined || items.count <= SCAN_CONTENT_ITEMS)) {
    const plainKeys = members.plainKeys && members.resultPlainKeys && items !== undefined && items.plainKeys;
    return { plainKeys, resultEnd: members.resultEnd, content: items, structuredContent: members.structuredContent };
  }
  // Ranges past the scan's first items, or inside `result.result`: one walk, the seller's `structuredContent` jumped over.
  const located = locateToolResult(body, location, members.plainKeys ? members.structuredContent : undefined);
  return located && { plainKeys: located.plainKeys, resultEnd: located.end, content: located.content, structuredContent: located.structuredContent };
}

/**
 * @param body the seller's message bytes, as scanned; `target` where its tool result is ({@link spliceTarget})
 * @param before the parsed message; `after` the rewritten one (rewrite.ts, the tool result at `location`)
 */
export function spliceRewrite(body: Buffer, target: SpliceTarget, location: ToolResultLocation, before: unknown, after: unknown): Buffer | undefined {
  const items = target.content;
  if (!target.plainKeys || items === undefined) return undefined;
  // A rewritten body is valid UTF-8 (re-serialized from the U+FFFD-decoded parse): invalid
  // bytes kept outside the spliced parts would break that (test/regressions/invalid-utf8.test.ts).
  if (!isUtf8(body)) return undefined;
  const oldResult = toolResultIn(before, location);
  const newResult = toolResultIn(after, location);
  if (oldResult === undefined || newResult === undefined) return undefined;
  const oldContent = oldResult.content;
  const newContent = newResult.content;
  if (!Array.isArray(oldContent) || !Array.isArray(newContent) || oldContent.length !== items.count || newContent.length !== items.count) return undefined;

  const edits: SpliceEdit[] = [];
  let liftedText: string | undefined;
  for (let i = 0; i < newContent.length; i++) {
    if (newContent[i] === oldContent[i]) continue;
    const range = items.texts[i];
    const oldText = (oldContent[i] as Record<string, unknown>).text;
    const newText = (newContent[i] as Record<string, unknown>).text;
    if (range === undefined || typeof oldText !== 'string' || typeof newText !== 'string') return undefined;
    liftedText ??= oldText;
    edits.push({ start: range[0], end: range[1], insert: [JSON.stringify(newText)] });
  }
  const oldKeys = Object.keys(oldResult);
  const newKeys = Object.keys(newResult);
  const lifted = newKeys.length === oldKeys.length + 1 && newKeys[newKeys.length - 1] === 'structuredContent' && !Object.hasOwn(oldResult, 'structuredContent');
  if (!lifted && newKeys.length !== oldKeys.length) return undefined;
  for (let k = 0; k < oldKeys.length; k++) if (oldKeys[k] !== newKeys[k]) return undefined;
  // The text's own bytes when the lift writes them as written (JSON.stringify's never hold a raw line break).
  let json: string | Buffer | undefined;
  if (lifted) {
    if (target.resultEnd === undefined || liftedText === undefined) return undefined;
    const sc = newResult.structuredContent;
    const asWritten = liftedTextSplicedAsWritten(liftedText);
    const inserted = !asWritten ? JSON.stringify(sc) : ((isJsonObject(sc) ? parsedTextFacts(sc)?.bytes : undefined) ?? liftedText);
    if (asWritten) json = inserted;
    edits.push({ start: target.resultEnd, end: target.resultEnd, insert: [SC_MEMBER, inserted] });
  }
  if (edits.length === 0) return undefined;
  edits.sort((a, b) => a.start - b.start);
  const out = bodyPool.splice(body, edits);
  if (json !== undefined) {
    // The lift's edit is the last (every text is inside `result`): the seller's bytes from `resultEnd` follow it.
    const end = out.length - (body.length - target.resultEnd!);
    liftedLineBreaksAsSpaces(out, end - (typeof json === 'string' ? Buffer.byteLength(json) : json.length), end);
  }
  return out;
}

/** The tool result object at `location` in a parsed message, or undefined. */
function toolResultIn(message: unknown, location: ToolResultLocation): Record<string, unknown> | undefined {
  if (!isJsonObject(message)) return undefined;
  let result = message.result;
  if (location === 'result.result') result = isJsonObject(result) ? result.result : undefined;
  return isJsonObject(result) ? result : undefined;
}

