/**
 * Reading a JSON object from the member table of its structure scan (json-scan.ts
 * scanStringText, scanTopMembers) as `JSON.parse` would, without parsing it: its members by
 * key and its string values. Shared by the lift and dedupe judge (lift-text.ts) and the
 * request peek (request/peek.ts).
 */
import type { ByteRange, TextMember } from './json-scan.js';
import { BACKSLASH } from './json-bytes.js';

/**
 * The object `JSON.parse` would build from the text, as member indexes by key: the last of
 * duplicate keys wins and keeps the first one's place (a Map's `set` does both; a Map also
 * keeps `__proto__` as plain data, as JSON.parse does).
 */
export function memberIndexes(view: Buffer, members: readonly TextMember[]): Map<string, number> {
  const byKey = new Map<string, number>();
  for (let m = 0; m < members.length; m++) byKey.set(jsonString(view, members[m]!.key), m);
  return byKey;
}

/**
 * The keys `members` writes more than once (decoded as {@link memberIndexes} decodes them;
 * empty when none repeats). For a caller that found fewer distinct keys than members
 * (`memberIndexes(…).size < members.length`): the summary of a lifted or deduped text shows no
 * value of such a key (summary.ts SummaryShape.repeated; a hostile trial 24, L2).
 */
export function repeatedMemberKeys(view: Buffer, members: readonly TextMember[]): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const m of members) {
    const key = jsonString(view, m.key);
    if (seen.has(key)) repeated.add(key);
    else seen.add(key);
  }
  return repeated;
}

/**
 * The value of the JSON string at `view[start, end)` (quotes included; scanned valid, so no
 * raw control character): what `JSON.parse` gives for its UTF-8 text. Without a backslash
 * that is the UTF-8 text between the quotes (ASCII quotes never split a character, and
 * without `\u` escapes no lone surrogate can appear), decoded without `JSON.parse` (issue 5,
 * 1 KiB legacy results: a key read cost a Buffer view and a parse).
 */
export function jsonString(view: Buffer, [start, end]: ByteRange): string {
  if (hasBackslash(view, start + 1, end - 1)) return JSON.parse(view.toString('utf8', start, end)) as string;
  return view.toString('utf8', start + 1, end - 1);
}

/**
 * Below this many bytes {@link hasBackslash} reads them in a loop; from it on, by the native
 * `indexOf` over a view (a view's allocation is dearer than a short loop).
 */
const NATIVE_SEARCH_MIN_BYTES = 64;

/**
 * Whether `view[from, to)` holds a backslash. A long range is searched natively: a 4.1 MB
 * string id was searched byte by byte in the request peek (hostile trial 58, F5:
 * test/regressions/huge-string-id-compared-char-by-char.test.ts).
 */
function hasBackslash(view: Uint8Array, from: number, to: number): boolean {
  if (to - from >= NATIVE_SEARCH_MIN_BYTES) return view.subarray(from, to).indexOf(BACKSLASH) !== -1;
  for (let i = from; i < to; i++) if (view[i] === BACKSLASH) return true;
  return false;
}

/**
 * For each key of `keys` (plain ASCII, no quotes), the index in `members` of the member
 * `JSON.parse` would keep for it (the last one whose key is that text), or -1 when none; read
 * by comparing bytes, no key decoded. Undefined when a key in `members` holds a backslash: an
 * escaped key may decode to one of `keys` (`"\u0069d"` is `id`), and the caller then decodes
 * them all ({@link memberIndexes}).
 *
 * Why (issue 5, the request peek of a 187-byte `tools/call`): decoding every key into a string
 * and a Map (memberIndexes) was ~45% of the scan reading's time, which made the scan reading
 * dearer than `JSON.parse` of the whole body.
 */
export function plainMemberIndexes(view: Uint8Array, members: readonly TextMember[], keys: readonly Uint8Array[]): number[] | undefined {
  const found = keys.map(() => -1);
  for (let m = 0; m < members.length; m++) {
    const key = members[m]!.key;
    for (let i = key[0] + 1; i < key[1] - 1; i++) if (view[i] === BACKSLASH) return undefined;
    for (let k = 0; k < keys.length; k++) if (jsonStringWrittenAs(view, key, keys[k]!)) found[k] = m;
  }
  return found;
}

/**
 * Whether the JSON string at `view[range]` (quotes included; scanned valid) holds `text`
 * (ASCII): compared as bytes, decoded only when it holds a backslash.
 */
export function jsonStringIs(view: Uint8Array, range: ByteRange, text: string): boolean {
  const [start, end] = range;
  if (end - start === text.length + 2) {
    let same = true;
    for (let i = 0; i < text.length && same; i++) same = view[start + 1 + i] === text.charCodeAt(i);
    if (same) return true;
  }
  return hasBackslash(view, start + 1, end - 1) && jsonString(Buffer.from(view.buffer, view.byteOffset, view.length), range) === text;
}

/**
 * The member of `members` (the members of an object in `view`, as a scan or walk records them,
 * in text order) that `JSON.parse` keeps for the key `key` (ASCII): the last one whose key is
 * `key` once decoded ({@link jsonStringIs}: only a key holding a backslash is decoded);
 * undefined when none is.
 */
export function keptMember<M extends { readonly key: ByteRange }>(view: Uint8Array, members: readonly M[], key: string): M | undefined {
  let kept: M | undefined;
  for (let m = 0; m < members.length; m++) if (jsonStringIs(view, members[m]!.key, key)) kept = members[m];
  return kept;
}

/**
 * Whether the JSON string at `view[range]` (quotes included) is written as exactly the bytes
 * `text` between its quotes: no escape decoded, so `"\u0069d"` is not `id` (for a caller that
 * tells escaped keys apart itself: {@link plainMemberIndexes}, tool-result-ranges.ts);
 * {@link jsonStringIs} decodes.
 */
export function jsonStringWrittenAs(view: Uint8Array, range: ByteRange, text: Uint8Array): boolean {
  const start = range[0];
  if (range[1] - start !== text.length + 2) return false;
  for (let i = 0; i < text.length; i++) if (view[start + 1 + i] !== text[i]) return false;
  return true;
}
