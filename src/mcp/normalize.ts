/**
 * Tool-result normalization (ARCHITECTURE §1.3 and §5): success data ends up in
 * `structuredContent`, and `content[].text` copies of it are replaced by a terse summary.
 *
 * Pure: never mutates its input. Callers decide whether it applies at all (hosts on MCP
 * 2025-06-18 or later, `dedupe_text` not `off`; ARCHITECTURE §5).
 */
import { findLiftableTextOrBound, isAdcpErrorOnly, isJsonObject, ownValue, parsedTextFacts, readTextObject, utf8LengthExceeds, type TextJsonCount } from './extract.js';
import { jsonDeepEqualCount, valueCount, type KeyCounts } from './deep-equal.js';
import { collapsesDuplicateKeys, keyWrittenOnce, topLevelKeyRepeats } from './duplicate-keys.js';
import { hasLossyNumber } from './json-numbers.js';
import { holdsProtoKey, mayHoldProtoKey } from './proto-key.js';
import { holdsLoneSurrogate } from './lone-surrogate.js';
import { SUMMARY_JSON_MAX_BYTES, summarizeStructuredContent } from './summary.js';
import type { TextBoundReason, TextObjectReason } from './types.js';

/** Limits for normalization; the same bounds the gateway applies to whole messages. */
export interface NormalizeOptions {
  /** UTF-8 bytes of one text item; longer text is never parsed (mcp-response-extraction §Size Limits). */
  maxTextBytes: number;
  /** JSON nesting bound for a text item (ARCHITECTURE §5). */
  maxDepth: number;
  /** JSON node bound for a text item (ARCHITECTURE §5). */
  maxNodes: number;
  /**
   * The seller's exact JSON text of this result's `structuredContent`, when the caller has
   * it (the JSON stage's scan, json-scan.ts). A text item equal to it is a copy without
   * being parsed and compared (a seller's `JSON.stringify(structuredContent)` text): the same
   * text parses to the same value. Issue 5 (rewrite path within the parse + stringify floor).
   * A function is asked (once) only for a result with a `structuredContent` object to dedupe
   * against, so that a caller that must walk the bytes to find it (a 2026-07-28 `tasks/get`'s
   * `result.result`: response/scanned-message.ts) walks nothing for any other answer.
   */
  structuredContentText?: string | (() => string | undefined);
  /**
   * The UTF-8 length of content item `index`'s `text` JSON string (quotes included) as the
   * seller wrote it, when the caller located it (the JSON scan's ranges, json-scan.ts
   * ContentItems.texts); undefined when not known: then the length `JSON.stringify` writes is
   * used (what a re-serialized answer carries). For {@link summaryShortens}.
   */
  writtenTextBytes?: (index: number) => number | undefined;
}

/** What {@link normalizeToolResult} did. */
export interface NormalizeOutcome {
  /** The input itself when `changed` is false, else a new result object. */
  result: unknown;
  changed: boolean;
  /** `deduped`: text copies of the seller's structuredContent summarized; `lifted`: structuredContent built from text. */
  action: 'none' | 'deduped' | 'lifted';
  /** Number of text items whose `text` was replaced by a summary. */
  replacedItems: number;
  /**
   * Present only when nothing was lifted and a bound may be why: the result has no
   * `structuredContent`, and the text fallback found no liftable object
   * (extract.ts findLiftableTextOrBound) but skipped a text item that may hold one (it starts
   * with `{`) for a bound: `text_bytes` (over `maxTextBytes` UTF-8 bytes), `json_depth` (over
   * `maxDepth` levels) or `json_nodes` (over `maxNodes` values), that of the first such item
   * (extract.ts readTextObject says exactly which texts; a text over `maxDepth` or `maxNodes`
   * ends the walk: nothing after it is lifted, hostile trial 38, F1). Absent whenever a text
   * was lifted (an item over `maxTextBytes` before it was only skipped, as the spec says), for a result with
   * `structuredContent` or `isError`, and when the lift was refused for another cause (a number
   * that loses digits). The result is then unchanged (`changed: false`, the same object).
   * Also `proto_key` ({@link TextObjectReason}): the first liftable text's object holds a
   * member `__proto__` at some depth, so nothing is lifted (proto-key.ts); and
   * `lone_surrogate`: it holds a lone surrogate in a string or key (lone-surrogate.ts).
   *
   * Source: a reviewer, "a text over the bounds was silently not lifted": the gateway logs it
   * (`text_not_lifted`) and counts it (`adcp_gateway_texts_not_lifted_total`); a hostile trial
   * 24, L1, for `proto_key`; a hostile trial 29, M1, for `lone_surrogate`.
   */
  textNotLifted?: TextBoundReason | TextObjectReason;
  /**
   * For a lift (`action` `lifted`), the lifted text's JSON depth and values as its bounds check
   * counted them (extract.ts TextObjectMatch `json`): what the lift adds to the message's depth
   * and value count, which the caller checks against `max_json_depth` / `max_json_nodes`
   * (response/rewrite.ts, rewrite-room.ts liftOverJsonBound). Undefined otherwise.
   */
  liftedJson?: { readonly depth: number; readonly nodes: number };
  /**
   * For a lift, the lifted item's text as the seller wrote it (its object is the result's new
   * `structuredContent`): where the answer goes out re-serialized, the caller checks what
   * `JSON.stringify` of that object would drop (reserialized-lift.ts; response/scanned-message.ts).
   * Undefined otherwise.
   */
  liftedText?: string;
}

/**
 * Normalizes an MCP tool result (`CallToolResult`).
 *
 * Left unchanged (the same object, `changed: false`, `action: 'none'`):
 * - not an object, `isError` truthy (never strip the error JSON), or `content` not an array;
 * - `structuredContent` present but not a non-array object (array, primitive, `null`: never
 *   changed, ARCHITECTURE §5), or `adcp_error`-only (an error missing its `isError` flag,
 *   whose JSON text hosts read);
 * - nothing to replace or lift.
 *
 * `structuredContent` present (a non-array object): every `type: "text"` item whose text is
 * within the bounds, parses, and is deep-equal (deep-equal.ts jsonDeepEqual) to `structuredContent` gets its
 * `text` replaced by {@link summarizeStructuredContent} (other item fields kept) ->
 * `deduped`, when that makes it shorter ({@link summaryShortens}: a copy no longer than its
 * summary is kept as written, so a dedupe never grows an answer; none replaced: unchanged).
 * A text that is not byte-equal to `opts.structuredContentText` is no copy when that text
 * repeats a member name at any depth (summarizeCopies: a host keeping the first repeat reads
 * another `structuredContent`). When `structuredContent` holds a member `__proto__` at any
 * depth, nothing is replaced (proto-key.ts: the MCP TypeScript SDK client drops that member from
 * `structuredContent`, so a copy, which holds it too, may be the only one such a host reads;
 * checked once per result by a walk of `structuredContent`, only once a copy would be replaced).
 * `structuredContent` itself is never modified.
 *
 * `structuredContent` absent: the first liftable text item (the extraction algorithm's
 * text fallback, {@link findLiftableTextOrBound}, with the same size and structure bounds;
 * `adcp_error`-only objects are not liftable) becomes `structuredContent` (appended as the
 * last key), and that item's text becomes the summary (whatever its length), as does any
 * later text item deep-equal to it that is longer than its summary -> `lifted`. (The lift adds
 * the object once more, so a lifted answer is longer than the seller's when the text was
 * short: by at most `,"structuredContent":` + the summary's JSON string minus the quotes and
 * escapes the text's string spent, under ~220 bytes, once per answer. Pure, this function
 * knows no limit: the JSON and SSE stages send the seller's answer instead of a lift that would
 * not fit `max_response_bytes`, response/rewrite-room.ts, and report it as `text_not_lifted`;
 * rewrite.ts skips one whose message would be over `max_json_depth` / `max_json_nodes`, from
 * `liftedJson`.) Over-bound or non-object text is
 * simply not lifted (no error); when nothing else is lifted either, the outcome says which
 * bound the first such text broke (`textNotLifted`).
 *
 * `__proto__` (proto-key.ts): when the first liftable text's object holds a member
 * `__proto__` at any depth, nothing is lifted (as for a lossy number, below), and the outcome
 * says so (`textNotLifted: 'proto_key'`): lifted, the MCP TypeScript SDK client would read
 * `structuredContent` without that member, and the text, where it reads it, would be the
 * summary. Source: a hostile trial 24, L1.
 *
 * Lone surrogates (lone-surrogate.ts): when the first liftable text's object holds one in a
 * string or key at any depth (`{"s":"\ud800x"}`, an escape no low one follows; a lone low
 * one; or the text itself not well-formed), nothing is lifted either (`textNotLifted:
 * 'lone_surrogate'`): `structuredContent` would carry a lone-surrogate escape, which strict
 * parsers refuse (the MCP Python SDK's: the host lost the whole result), where the text
 * reads fine. Source: a hostile trial 29, M1
 * (test/regressions/lift-lone-surrogate-breaks-python-host.test.ts).
 *
 * Number precision ({@link hasLossyNumber}): a text item whose JSON holds a number that
 * JavaScript numbers can't reproduce exactly (`9007199254740993`, `12345678901234567890`,
 * `0.1000000000000000055511151231257827`) is never a copy and never lifted: once parsed it
 * may compare deep-equal to a less precise `structuredContent`, and it may be the only exact
 * copy of the data. If the first liftable item is such a text, nothing is lifted (a later item
 * is not lifted in its place: the text fallback reads the first), and the outcome says so
 * (`textNotLifted: 'lossy_number'`; hostile trial 39, item 2: it was silent). The seller's own
 * `structuredContent` and the rest of the message are the caller's concern
 * (`rewriteResponse` checks the raw message, and reports a lift refused there the same way).
 *
 * Always: items are never removed or reordered (so `content` never becomes empty), non-text
 * items are untouched, and new objects are built by copying own keys in order
 * (`Object.fromEntries`, which keeps an own `"__proto__"` key as data). The summary's byte
 * count is the UTF-8 length of the text it replaces.
 *
 * The JSON and SSE stages lift most legacy results, and dedupe most byte copies of
 * `structuredContent`, without calling this (response/lift-splice.ts, response/dedupe-splice.ts,
 * which follow these rules from the scan and decline whatever they cannot decide): a change of
 * rule here is a change there too (test/unit/lift-splice.test.ts and
 * test/unit/dedupe-splice.test.ts compare the paths' output).
 */
export function normalizeToolResult(result: unknown, opts: NormalizeOptions): NormalizeOutcome {
  const unchanged: NormalizeOutcome = { result, changed: false, action: 'none', replacedItems: 0 };
  if (!isJsonObject(result) || ownValue(result, 'isError')) return unchanged;
  const content = ownValue(result, 'content');
  if (!Array.isArray(content)) return unchanged;

  const structured = ownValue(result, 'structuredContent');
  if (structured !== undefined) {
    if (!isJsonObject(structured) || isAdcpErrorOnly(structured)) return unchanged;
    const given = opts.structuredContentText;
    const structuredText = typeof given === 'function' ? given() : given;
    const { items, replaced } = summarizeCopies(content, 0, structured, opts, -1, structuredText, structuredText);
    if (replaced === 0) return unchanged;
    return { result: copyWith(result, items, undefined), changed: true, action: 'deduped', replacedItems: replaced };
  }

  const lift = findLiftableTextOrBound(result, opts);
  if (lift === null) return unchanged;
  // Nothing liftable, and the first text that may have been is over a bound: say which.
  if (typeof lift === 'string') return { result, changed: false, action: 'none', replacedItems: 0, textNotLifted: lift };
  // findLiftableTextOrBound only matches text items whose own `text` is a string.
  const liftText = ownValue(content[lift.index] as object, 'text') as string;
  if (liftHoldsProtoKey(liftText, lift.value)) return { result, changed: false, action: 'none', replacedItems: 0, textNotLifted: 'proto_key' };
  if (holdsLoneSurrogate(liftText, lift.value)) return { result, changed: false, action: 'none', replacedItems: 0, textNotLifted: 'lone_surrogate' };
  if (mayLoseDigits(liftText, lift.value)) return { result, changed: false, action: 'none', replacedItems: 0, textNotLifted: 'lossy_number' };
  // The lifted text's bytes are what a spliced answer carries as `structuredContent` (splice.ts).
  const { items, replaced } = summarizeCopies(content, lift.index, lift.value, opts, lift.index, undefined, liftText, lift.json?.nodes);
  return { result: copyWith(result, items, lift.value), changed: true, action: 'lifted', replacedItems: replaced, liftedJson: lift.json, liftedText: liftText };
}

/**
 * Replaces, from `from` on, the text of every text item that parses (within bounds) to a
 * value deep-equal to `structured`, has no lossy number nor repeated key and is longer than its
 * summary ({@link summaryShortens}); the item at `knownCopy` (already
 * parsed and checked by the caller), and any text equal to `structuredText` (the seller's own
 * JSON text of `structured`; its numbers are the caller's raw-message check), are replaced
 * without parsing. Returns the new
 * array (the input array when nothing was replaced) and the count.
 *
 * `writtenStructured`: the JSON text a spliced answer carries as `structuredContent` (the
 * seller's bytes of it, or the lifted text: response/splice.ts), when known. If it repeats a
 * member name at any depth ({@link collapsesDuplicateKeys}), a text that is not byte-equal to
 * `structuredText` is no copy: it was found deep-equal to `JSON.parse`'s reading (the last
 * repeat wins), while a host whose parser keeps the first reads another value in
 * `structuredContent`, and the text may be the one unambiguous statement of the data. A new
 * user's trial: `structuredContent` `{"price":1,"price":2,…}` beside a text `{"price":2,…}`,
 * the text replaced by a summary
 * (test/regressions/dedupe-drops-text-when-structured-content-repeats-names.test.ts). Checked
 * once per result, only for a text already found deep-equal (one bounds scan of that text and
 * a walk of `structured`). A byte copy (`text === structuredText`, and
 * response/dedupe-splice.ts) is as ambiguous as `structuredContent` itself, so removing it
 * loses nothing: that path has no such check and costs nothing more. Unknown (a key written
 * with an escape: a dedupe is then not made at all, response/scanned-message.ts) the check is
 * not needed.
 *
 * The summary states no value (`status=`, an array's `[n]`) of a key `writtenStructured`
 * writes more than once at its top level: which one a host reads depends on its parser, and
 * `JSON.parse`'s reading is only one (a hostile trial 24, L2:
 * test/regressions/summary-states-one-value-of-repeated-key.test.ts). Asked only for a key
 * whose value a summary would show, and told from what is at hand: no repeat at all when the
 * repeated-name check above found none; in a text of at most {@link KEY_SEARCH_MAX_CHARS},
 * none of that key when the text writes it once (duplicate-keys.ts keyWrittenOnce: two
 * searches); else, once per result, none at all when `writtenNodes` (`writtenStructured`'s
 * values as written: the lift's bounds check) equals the values of `structured` (a walk, ~0.2
 * ms per MiB of a get_products text, where the searches took ~0.4), or from the text's
 * top-level members (topLevelKeyRepeats, a scan).
 *
 * The dedupe (`knownCopy` -1) replaces nothing when `structured` holds a member `__proto__` at
 * any depth (proto-key.ts): every copy holds it too (a byte copy, or a deep-equal one: own keys
 * are compared, `__proto__` included), and an SDK host may read it nowhere else. Walked once,
 * when the first copy would be replaced and its text may hold one (proto-key.ts
 * mayHoldProtoKey). A lifted object holds none (the caller's check).
 */
function summarizeCopies(
  content: readonly unknown[],
  from: number,
  structured: Record<string, unknown>,
  opts: NormalizeOptions,
  knownCopy = -1,
  structuredText?: string,
  writtenStructured?: string,
  writtenNodes?: number,
): { items: unknown[]; replaced: number } {
  let items: unknown[] | undefined;
  let replaced = 0;
  let structuredRepeats: boolean | undefined; // collapsesDuplicateKeys(writtenStructured), once needed
  // `structured`'s key counts, read once for all the texts (deep-equal.ts; trial 16, H1).
  let structuredKeyCounts: KeyCounts | undefined;
  // `structured` holds a member `__proto__` (the dedupe only), walked once a copy would be replaced.
  let structuredProto: boolean | undefined;
  // Whether a key repeats at the top level of `writtenStructured`, read once a summary would show its value.
  let keyRepeats: ((key: string) => boolean) | undefined;
  let writtenEscapes: boolean | undefined; // writtenStructured holds a `\u` escape (keyWrittenOnce)
  const repeated =
    writtenStructured === undefined
      ? undefined
      : (key: string): boolean => {
          if (keyRepeats === undefined) {
            if (structuredRepeats === false) keyRepeats = NO_REPEAT;
            else if (writtenStructured.length <= KEY_SEARCH_MAX_CHARS && keyWrittenOnce(writtenStructured, key, (writtenEscapes ??= writtenStructured.includes('\\u')))) return false;
            else keyRepeats = writtenNodes !== undefined && valueCount(structured) === writtenNodes ? NO_REPEAT : topLevelKeyRepeats(writtenStructured, structured);
          }
          return keyRepeats(key);
        };
  for (let i = from; i < content.length; i++) {
    const item = content[i];
    if (!isJsonObject(item) || ownValue(item, 'type') !== 'text') continue;
    const text = ownValue(item, 'text');
    // An exact copy of the seller's structuredContent text needs no parse; the text size bound
    // still applies (invalid UTF-8 decodes to 3-byte U+FFFD: the text can outgrow its bytes).
    const exactCopy = structuredText !== undefined && text === structuredText && !utf8LengthExceeds(text, opts.maxTextBytes);
    if (i !== knownCopy && !exactCopy) {
      // The text's value count, from its bounds check (the repeated-key check below).
      const counted: TextJsonCount = { depth: -1, nodes: -1 };
      const read = readTextObject(text, opts, counted);
      if (read === undefined || typeof read === 'string') continue;
      // The number of values in each, when equal (one walk: the repeated-key checks need it).
      const values = jsonDeepEqualCount(read, structured, (structuredKeyCounts ??= new Map()));
      if (values < 0) continue;
      // Deep-equal as doubles is not equal as written: keep a text more precise than `structured`.
      if (mayLoseDigits(text as string, read)) continue;
      // A text with a repeated key holds a value `structured` has not (duplicate-keys.ts): no copy.
      if (collapsesDuplicateKeys(text as string, values, counted.nodes)) continue;
      // Deep-equal to one reading of a `structuredContent` whose bytes repeat a name: no copy (above).
      structuredRepeats ??= writtenStructured !== undefined && collapsesDuplicateKeys(writtenStructured, values);
      if (structuredRepeats) continue;
    }
    const textBytes = Buffer.byteLength(text as string, 'utf8');
    const summary = summarizeStructuredContent(structured, textBytes, repeated);
    // The lifted item always becomes the summary (the lift's own rule); a copy only when that shortens it.
    if (i !== knownCopy && !summaryShortens(summary, text as string, textBytes, opts.writtenTextBytes?.(i))) continue;
    if (knownCopy === -1 && (structuredProto ??= mayHoldProtoKey(text as string) && holdsProtoKey(structured))) break;
    items ??= content.slice();
    items[i] = Object.fromEntries(Object.entries(item).map(([k, v]) => [k, k === 'text' ? summary : v]));
    replaced++;
  }
  return { items: items ?? (content as unknown[]), replaced };
}

/**
 * Whether replacing a copy's `text` by `summary` makes the item shorter: the summary's JSON
 * string (quotes included; it holds nothing JSON escapes, summary.ts summaryJsonString) has
 * fewer UTF-8 bytes than the text's JSON string as the seller wrote it (`written`, when the
 * caller located it) or else as `JSON.stringify` writes it. A copy no longer than its summary
 * is kept as written, so a dedupe never grows an answer (reported failure: 20,000 copies of
 * `{"a":1}`, 700,075 bytes from the seller, reached the host as 1,340,075 bytes, over the
 * per-call limit it was within; test/regressions/dedupe-summary-longer-than-text.test.ts).
 * dedupe-splice.ts applies the same rule to the seller's bytes.
 *
 * Constant time for a text longer than any summary (`textBytes`, its UTF-8 length, already
 * measured, bounds its JSON string from below); a shorter one is measured (at most ~200
 * characters).
 */
function summaryShortens(summary: string, text: string, textBytes: number, written: number | undefined): boolean {
  if (written === undefined && textBytes + 2 > SUMMARY_JSON_MAX_BYTES) return true;
  // Not located: the length a re-serialization writes (a short text here: at most ~200 characters).
  const length = written ?? Buffer.byteLength(JSON.stringify(text), 'utf8');
  return length > SUMMARY_JSON_MAX_BYTES || Buffer.byteLength(summary, 'utf8') + 2 < length;
}

/**
 * Whether `text` (which parsed into `parsed`) holds a number a double cannot reproduce
 * ({@link hasLossyNumber}); skipped when the scan of a long text already proved none can
 * (extract.ts parsedTextFacts).
 */
function mayLoseDigits(text: string, parsed: object): boolean {
  return !parsedTextFacts(parsed)?.numbersRoundTrip && hasLossyNumber(text);
}

/**
 * Whether the text to lift (which parsed into `parsed`) holds a member `__proto__` at any
 * depth (proto-key.ts): walked only when it may, as the scan of a long text already told
 * (extract.ts parsedTextFacts) or else a search of the text.
 */
function liftHoldsProtoKey(text: string, parsed: object): boolean {
  const may = parsedTextFacts(parsed)?.mayHoldProtoKey ?? mayHoldProtoKey(text);
  return may && holdsProtoKey(parsed);
}

/** No key repeats (summary.ts SummaryShape.repeated). */
const NO_REPEAT = (): boolean => false;

/**
 * Longest `writtenStructured` (UTF-16 units) whose repeats a summary's key is searched for
 * (summarizeCopies; duplicate-keys.ts keyWrittenOnce): longer, a walk or a scan once per
 * result costs less than two searches per key.
 */
const KEY_SEARCH_MAX_CHARS = 4096;

/** A copy of `result` (own keys, in order) with `content` replaced and, when given, `structuredContent` appended. */
function copyWith(result: Record<string, unknown>, content: unknown[], structured: Record<string, unknown> | undefined): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(result)) {
    if (key === 'content') entries.push([key, content]);
    else if (structured === undefined || key !== 'structuredContent') entries.push([key, value]);
  }
  if (structured !== undefined) entries.push(['structuredContent', structured]);
  return Object.fromEntries(entries);
}
