/**
 * What a lifted text would lose if its object went out re-serialized (`JSON.stringify` of the
 * value `JSON.parse` made of it) instead of as the text's own bytes.
 *
 * A lift (normalize.ts) puts the text's object into `structuredContent` and replaces the text
 * by a summary. Where the answer is spliced (response/splice.ts, lift-splice.ts: a
 * `tools/call` or `tasks/result` `result`, or a 2026-07-28 `tasks/get`'s `result.result`, with
 * plain keys) `structuredContent` is the text's bytes, so every host reads there what it read
 * in the text. Where it is re-serialized (a result with a key written with an escape, a body
 * that is not valid UTF-8, a text that is not well-formed: response/scanned-message.ts
 * rewriteScanned) two things a
 * host could read in the text are in nothing it receives:
 *
 * - a repeated key (`{"status":"rejected","status":"approved"}`, at any depth, the second
 *   spelled plainly or with escapes): `JSON.parse` keeps the last member, so the first one's
 *   value, which a first-wins parser reads (RFC 8259 §4 leaves it open), is gone;
 * - a negative zero (`-0`, `-0.0`, `-0e3`): `JSON.stringify(-0)` writes `0`, the sign lost.
 *
 * Such a text is not lifted there (`text_not_lifted`: {@link ReserializedLiftReason}). Every
 * other change of spelling keeps the value: `1.0` and `1E2` are the JSON numbers `1` and
 * `100` (written so), escapes in strings decode to the same characters; numbers a double
 * cannot hold are refused before (json-numbers.ts hasLossyNumber), as is a `__proto__` member
 * (proto-key.ts).
 *
 * Source: a hostile trial 26, L1: a `tasks/get` lift of `{"status":"rejected",
 * "status":"approved",…}` gave the host `"structuredContent":{"status":"approved",…}` and a
 * summary; `{"neg":-0.0}` became `{"neg":0}`
 * (test/regressions/tasks-get-lift-loses-repeated-key-and-negative-zero.test.ts).
 */
import { valueCount } from './deep-equal.js';
import { collapsesDuplicateKeys } from './duplicate-keys.js';
import type { ReserializedLiftReason } from './types.js';

/**
 * Why the lifted `text`, which `JSON.parse` read as `value`, must not be lifted re-serialized,
 * or undefined when nothing is lost. `textValues`: the text's JSON values as written (the
 * lift's bounds check, normalize.ts `liftedJson.nodes`), when counted; else the text is
 * scanned (duplicate-keys.ts collapsesDuplicateKeys). A repeated key is told first.
 *
 * Cost: one walk of `value` (deep-equal.ts valueCount: its values counted, each compared
 * with -0); only for a lift that goes out re-serialized, which costs a
 * `JSON.stringify` of the whole message anyway.
 */
export function reserializedLiftLoss(text: string, value: object, textValues: number | undefined): ReserializedLiftReason | undefined {
  const facts = { negativeZero: false };
  const values = valueCount(value, facts);
  if (collapsesDuplicateKeys(text, values, textValues)) return 'repeated_key';
  return facts.negativeZero ? 'negative_zero' : undefined;
}
