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
import { scanTopMembers } from './json-scan.js';
import { repeatedMemberKeys } from './text-members.js';
import { valueCount } from './deep-equal.js';

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

/**
 * Whether `text` (a JSON object text, valid and within the bounds its caller checked, which
 * `JSON.parse` turned into `parsed`) writes a key more than once at its top level: a predicate
 * over keys. Read from the members the WebAssembly scan records (json-scan.ts scanTopMembers,
 * one pass over the text's UTF-8 bytes); for an object of more members than it records, from
 * the value counts ({@link collapsesDuplicateKeys}): when no object of the text repeats a key,
 * none does, else every key is taken as repeated (which one is not known: the summary then
 * shows no value at all, never a wrong one).
 *
 * Why (a hostile trial 24, L2): the summary of a lifted text `{"status":"rejected",
 * "status":"approved",…}` said `status=approved`, `JSON.parse`'s reading, while the lifted
 * `structuredContent` keeps both members as written and a first-wins parser reads `rejected`.
 * The summary now states no value of a key written more than once (summary.ts SummaryShape.repeated).
 * The parse path's summaries (normalize.ts summarizeCopies) call this once per result, only
 * when a summary would show a value; the scan-based ones read the repeats from their own scan
 * of the text (lift-text.ts).
 */
export function topLevelKeyRepeats(text: string, parsed: object): (key: string) => boolean {
  const bytes = Buffer.from(text, 'utf8');
  const scan = scanTopMembers(bytes, UNBOUNDED);
  if (scan?.top === 'object') {
    const { members } = scan;
    // Each key once: no repeat (the common case, no key decoded).
    if (members.length === Object.keys(parsed).length) return NONE;
    const repeated = repeatedMemberKeys(bytes, members);
    return (key) => repeated.has(key);
  }
  return collapsesDuplicateKeys(text, valueCount(parsed)) ? EVERY : NONE;
}

/**
 * True when `text` (a JSON text) provably writes `key` (a summary's shown key: letters, digits,
 * `_.$-`, no character JSON escapes) at most once: `"key"` occurs at most once in it, and it
 * holds no `\u` escape (`escapes`: the caller's `text.includes('\\u')`, read once per text),
 * with which a key may be spelled otherwise. False: it may be written more than once (also a
 * nested key or a string value of the same spelling): the caller asks {@link topLevelKeyRepeats}.
 * Two native searches: the common answer of the summary's repeat question (normalize.ts), without
 * a walk or a scan.
 */
export function keyWrittenOnce(text: string, key: string, escapes: boolean): boolean {
  if (escapes) return false;
  const quoted = `"${key}"`;
  const first = text.indexOf(quoted);
  return first === -1 || text.indexOf(quoted, first + quoted.length) === -1;
}

const NONE = (): boolean => false;
const EVERY = (): boolean => true;
