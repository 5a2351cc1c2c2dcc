/**
 * Writes a rewritten tool result as the seller's bytes with only the changed parts
 * replaced, instead of re-serializing the whole message (issue 5: the rewrite path must do
 * no more work than decode + parse + stringify + encode; `JSON.stringify` + encode of a
 * 1 MiB message alone cost ~5 ms).
 *
 * What normalization changes (normalize.ts) is always: the `text` of some `result.content`
 * items (replaced by a summary), and for a lift, `structuredContent` appended as the last
 * key of `result`. The JSON scan (json-scan.ts members) gives the byte range of each item's
 * `text` string and of the `}` closing `result`, so the output is:
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
 * Returns undefined when the change is not of that shape or the scan lacks a range (escaped
 * keys, more items than the scan keeps, a `tasks/get` result), or when the body is not valid
 * UTF-8 (a rewritten body always is): the caller re-serializes.
 */
import { isUtf8 } from 'node:buffer';
import type { TopMembers } from '../mcp/json-scan.js';
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
 * @param body the seller's message bytes, as scanned
 * @param before the parsed message; `after` the rewritten one (rewrite.ts, `result` location)
 */
export function spliceRewrite(body: Buffer, members: TopMembers, before: unknown, after: unknown): Buffer | undefined {
  const items = members.content;
  if (!members.plainKeys || !members.resultPlainKeys || items === undefined || !items.plainKeys) return undefined;
  // A rewritten body is valid UTF-8 (re-serialized from the U+FFFD-decoded parse): invalid
  // bytes kept outside the spliced parts would break that (test/regressions/invalid-utf8.test.ts).
  if (!isUtf8(body)) return undefined;
  if (!isJsonObject(before) || !isJsonObject(after)) return undefined;
  const oldResult = before.result;
  const newResult = after.result;
  if (!isJsonObject(oldResult) || !isJsonObject(newResult)) return undefined;
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
    if (members.resultEnd === undefined || liftedText === undefined) return undefined;
    const sc = newResult.structuredContent;
    const asWritten = liftedTextSplicedAsWritten(liftedText);
    const inserted = !asWritten ? JSON.stringify(sc) : ((isJsonObject(sc) ? parsedTextFacts(sc)?.bytes : undefined) ?? liftedText);
    if (asWritten) json = inserted;
    edits.push({ start: members.resultEnd, end: members.resultEnd, insert: [SC_MEMBER, inserted] });
  }
  if (edits.length === 0) return undefined;
  edits.sort((a, b) => a.start - b.start);
  const out = bodyPool.splice(body, edits);
  if (json !== undefined) {
    // The lift's edit is the last (every text is inside `result`): the seller's bytes from `resultEnd` follow it.
    const end = out.length - (body.length - members.resultEnd!);
    liftedLineBreaksAsSpaces(out, end - (typeof json === 'string' ? Buffer.byteLength(json) : json.length), end);
  }
  return out;
}

