/**
 * Whether a JSON text holds an object with a repeated key, which `JSON.parse` collapsed (the
 * last value wins): the parsed value then has fewer values than the text.
 *
 * Why: the dedupe replaces a text item whose JSON parses to a value deep-equal to
 * `structuredContent` by a summary (normalize.ts summarizeCopies). A text
 * `{"a":"first …","a":2}` beside `structuredContent` `{"a":2}` parses to `{"a":2}`, so it was
 * deduped and "first …" was lost: the text held more than `structuredContent` (a new user's
 * trial, 2026-12-02: test/regressions/dedupe-duplicate-keys-keeps-text.test.ts). Such a text
 * is no copy.
 *
 * Cost: none over the dedupe's own checks when the caller has both counts (the text's from
 * its bounds check, the parsed value's from the deep-equal walk: normalize.ts); else one pass
 * of the bounds scan over the text. Only on the parse path, for a text already found
 * deep-equal (a byte copy of the seller's `structuredContent` never gets here).
 */
import { checkJsonBounds } from './json-bounds.js';

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/**
 * True when `text` (valid JSON, which `JSON.parse` turned into a value of `values` values:
 * deep-equal.ts jsonDeepEqualCount or valueCount) has more values than that reading: some
 * object in it repeats a key. Values are counted as json-bounds.ts counts them (every object,
 * array, string, number, boolean and null is one; keys are not). `textValues`: the text's own
 * count when a bounds check already made it (extract.ts readTextObject `counted`), else the
 * text is scanned here.
 */
export function collapsesDuplicateKeys(text: string, values: number, textValues?: number): boolean {
  if (textValues !== undefined && textValues >= 0) return textValues > values;
  const scanned = checkJsonBounds(text, UNBOUNDED);
  return scanned.ok && scanned.nodes > values;
}
