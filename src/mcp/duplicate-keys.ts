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
 * Cost: one pass of the bounds scan over the text and one walk of the parsed value; only on
 * the parse path, for a text already found deep-equal (a byte copy of the seller's
 * `structuredContent` never gets here).
 */
import { checkJsonBounds } from './json-bounds.js';

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/**
 * True when `text` (valid JSON, which `JSON.parse` turned into `parsed`) has more values than
 * `parsed`: some object in it repeats a key. Values are counted as json-bounds.ts counts them
 * (every object, array, string, number, boolean and null is one; keys are not).
 */
export function collapsesDuplicateKeys(text: string, parsed: unknown): boolean {
  const scanned = checkJsonBounds(text, UNBOUNDED);
  return scanned.ok && scanned.nodes > valueCount(parsed);
}

/** The number of JSON values in `value` (itself included), walked without recursion. */
export function valueCount(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    count++;
    if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) for (const e of v) stack.push(e);
      else for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return count;
}
