/**
 * Reading a JSON object from the member table of its structure scan (json-scan.ts
 * scanStringText, scanTopMembers) as `JSON.parse` would, without parsing it: its members by
 * key and its string values. Shared by the lift and dedupe judge (lift-text.ts) and the
 * request peek (request/peek.ts).
 */
import type { ByteRange, TextMember } from './json-scan.js';

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
 * The value of the JSON string at `view[start, end)` (quotes included; scanned valid, so no
 * raw control character): what `JSON.parse` gives for its UTF-8 text. Without a backslash
 * that is the UTF-8 text between the quotes (ASCII quotes never split a character, and
 * without `\u` escapes no lone surrogate can appear), decoded without `JSON.parse` (issue 5,
 * 1 KiB legacy results: a key read cost a Buffer view and a parse).
 */
export function jsonString(view: Buffer, [start, end]: ByteRange): string {
  for (let i = start + 1; i < end - 1; i++) {
    if (view[i] === 0x5c /* backslash */) return JSON.parse(view.toString('utf8', start, end)) as string;
  }
  return view.toString('utf8', start + 1, end - 1);
}
