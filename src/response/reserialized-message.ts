/**
 * The JSON text of a rewritten message that goes out re-serialized (scanned-message.ts
 * rewriteScanned: a lift the splice declines, a key written with an escape or a body that is
 * not valid UTF-8; until review 38 also a 2026-07-28 `tasks/get` and any dedupe), with its `id`
 * written as the seller wrote it: the seller's bytes of the id, not `JSON.stringify`'s writing
 * of its parsed value.
 *
 * Why: the parsed id has the request's value (rewrite.ts isResponseToExchange), but
 * `JSON.stringify` respelled it: `7.0`, `7e0`, `0.7e1` went out as `7`, the string
 * `"a\u0022b"` as `"a\"b"`. A host that matches ids by their text (the reason minted errors
 * keep the host's id bytes: errors/json-rpc-text.ts) missed the answer, and the splice path,
 * which keeps the seller's bytes, answered the same message with other id bytes than this
 * one. Reported failure (a review, N1; the differential fuzz's "respelled ids"):
 * test/regressions/reserialized-answer-respells-seller-id.test.ts.
 *
 * Cost: only on this path, which stringifies the whole message anyway: the id's range from the
 * scan's members when every top-level key is written plain, else one walk of the bytes
 * (mcp/written-ids.ts writtenIdRanges; a key written with an escape is what sent the message
 * here in the first place, often).
 */
import type { TopMembers } from '../mcp/json-scan.js';
import { writtenIdRanges } from '../mcp/written-ids.js';
import { isJsonObject } from '../mcp/extract.js';

/**
 * `JSON.stringify(message)`, but the value of its top-level `id` member written as in `bytes`,
 * the seller's JSON text `message` was rewritten from (`members`: its scan's top-level
 * members, when the scan recorded them). `message` keeps the seller's top-level members (a
 * copy with `result` replaced: rewrite.ts copyReplacing), so its `id` is the seller's, read
 * from its last `id` member as `bytes` writes it; a key written twice never reaches here
 * (scanned-message.ts refuses a re-serialization that would drop one). Where `bytes` writes no
 * number or string id (`null`, which reads back the same), the text is JSON.stringify's.
 *
 * The id's text is decoded as UTF-8 as the message was (an ill-formed byte in a string id
 * becomes U+FFFD, as everywhere else in the re-serialized text). Every other member is
 * written by `JSON.stringify`, in the same order it writes them (own enumerable keys).
 */
export function stringifyWithSellerId(message: unknown, bytes: Buffer, members: TopMembers | undefined): string {
  if (!isJsonObject(message) || !Object.hasOwn(message, 'id')) return JSON.stringify(message);
  const range = members?.plainKeys ? members.id : writtenIdRanges(bytes)[0];
  if (range === undefined) return JSON.stringify(message);
  const idText = bytes.toString('utf8', range[0], range[1]);
  let out = '';
  for (const key of Object.keys(message)) {
    const value: string | undefined = key === 'id' ? idText : JSON.stringify(message[key]);
    if (value === undefined) continue; // as JSON.stringify skips it (no parsed value is one)
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${value}`;
  }
  return `{${out}}`;
}
