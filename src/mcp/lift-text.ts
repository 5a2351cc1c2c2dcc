/**
 * Whether a legacy tool result's `content[].text` is liftable (or, for the dedupe of a byte
 * copy of `structuredContent`, what it holds: response/dedupe-splice.ts), decided from the bytes of its
 * JSON string in the seller's message without parsing it (json-scan.ts scanObjectText): the
 * same answer as {@link parseTextObject} + the lift's checks in normalize.ts (not
 * `adcp_error`-only, numbers that round-trip), plus what the summary shows of the object
 * (summary.ts {@link summaryJsonString}: the JSON string of its summary, written by the scan's
 * core for an object with plain ASCII keys, json-scan.ts textSummary, and here otherwise).
 *
 * Why (issue 5, the (c) rewrite path): `JSON.parse` of a 1 MiB text alone costs ~3.7 ms, more
 * than half the decode + parse + stringify + encode floor; the lift writes the text's own
 * bytes as `structuredContent` (response/splice.ts), so the parsed object is never needed.
 */
import { ADCP_ERROR_ONLY, scanObjectText, TEXT_OVER_BOUND, textMembers, textSummary, type ByteRange, type TextMember } from './json-scan.js';
import { jsonString, memberIndexes, repeatedMemberKeys } from './text-members.js';
import { summaryJsonString } from './summary.js';
import type { TextJsonBounds } from './types.js';
import { DEFAULT_MAX_TEXT_BYTES } from './extract.js';
import { hasLossyNumber } from './json-numbers.js';

/** A liftable text: its UTF-8 bytes (the lifted `structuredContent` as written) and its summary. */
export interface LiftableText {
  /** A view valid only until the next call into json-scan.ts (see scanObjectText): copy it before. */
  readonly bytes: Uint8Array;
  /** The summary's JSON string (summary.ts summaryJsonString of the object, quotes included), UTF-8, a copy of its own. */
  readonly summary: Uint8Array;
  /** The object's nesting (`{}` alone: 1), as the scan counted it (json-scan.ts ObjectTextFacts). */
  readonly depth: number;
  /** The object's JSON values, itself included, as the scan counted them. */
  readonly nodes: number;
}

/** Longest `status` string (as written, quotes included) read: a longer one holds more than the 32 characters a summary shows. */
const STATUS_MAX_WRITTEN = 6 * 32 + 2;

/**
 * The text held by the JSON string at `body[range]` (a `content[].text` value of a valid
 * UTF-8 message, quotes included), judged as the lift judges it:
 * - a {@link LiftableText}: `parseTextObject(text, bounds)` gives an object that is not
 *   `adcp_error`-only and whose numbers all round-trip through a double;
 * - {@link TEXT_OVER_BOUND} (`'over_bound'`): the text is within `bounds.maxTextBytes`,
 *   starts as an object and breaks `bounds.maxDepth` or `bounds.maxNodes`: the lift's walk
 *   ends there, nothing after it is lifted (extract.ts findLiftableTextOrBound; hostile trial
 *   38, F1), which the parse path decides and reports (the exchange's `text_not_lifted`); no
 *   copy either;
 * - `'skip'`: `parseTextObject` gives no object, or an `adcp_error`-only one (the text
 *   fallback goes on to the next item). A text over `bounds.maxTextBytes` is one, whatever
 *   it holds (over a structure bound too: the size is checked first, on the decoded bytes, as
 *   extract.ts readTextObject checks it, and such a text does not end the walk). It does not
 *   say whether the byte bound decided: a result with no lifted text goes to the parse path
 *   (lift-splice.ts), where extract.ts readTextObject says so;
 * - `'unknown'`: not decided here (a lone surrogate, more members than the scan records, a
 *   number that loses digits through a double: the lift is refused, normalize.ts; a key at
 *   some depth that is or may be `__proto__`, json-scan.ts ObjectTextFacts.mayHoldProtoKey:
 *   such a text is neither lifted nor a copy, normalize.ts and proto-key.ts, which the parse
 *   path decides and reports, `text_not_lifted: "proto_key"`): the caller takes the parse path.
 *
 * Not judged here: a lone surrogate written as an escape in the text's own JSON (`{"s":"\ud800"}`,
 * the text's bytes holding the six characters): such a text is not lifted (normalize.ts,
 * lone-surrogate.ts), which lift-splice.ts checks of the one text it lifts; a copy holding one
 * is deduped all the same (the seller's `structuredContent` holds it too), so the dedupe's
 * judge costs nothing for it.
 *
 * The summary states no value of a key the object writes more than once (summary.ts
 * SummaryShape.repeated): the lifted or deduped text's bytes go out as `structuredContent`,
 * repeats included, and which value a host reads depends on its parser (a hostile trial 24,
 * L2). The core's writer leaves such an object to the JavaScript one (assembly/text-summary.ts),
 * which reads the repeats from the scan's member table: no pass over the text.
 *
 * `bounds.maxDepth` / `maxNodes` absent means unbounded (parseTextObject checks them only when
 * given, and the scan checks the same grammar `JSON.parse` does).
 */
export function judgeStringText(body: Uint8Array, range: ByteRange, bounds: TextJsonBounds): LiftableText | typeof TEXT_OVER_BOUND | 'skip' | 'unknown' {
  const limits = { maxDepth: bounds.maxDepth ?? Infinity, maxNodes: bounds.maxNodes ?? Infinity };
  // The byte bound first (scanObjectText: null over it), as readTextObject checks it.
  const scan = scanObjectText(body, range, limits, bounds.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES);
  if (scan === undefined) return 'unknown';
  if (scan === TEXT_OVER_BOUND) return scan;
  if (scan === null) return 'skip';
  const { bytes, depth, nodes } = scan;
  // Plain ASCII keys: the core writes the summary from its member table, no key made a string.
  const written = textSummary(bytes.length);
  if (written === ADCP_ERROR_ONLY) return 'skip';
  if (written !== undefined) {
    // A `__proto__` member, or a key that may spell one: the parse path decides (normalize.ts).
    if (scan.mayHoldProtoKey || (scan.numberMayBeLossy && hasLossyNumber(bytes))) return 'unknown';
    return { bytes, summary: Buffer.from(written), depth, nodes };
  }
  const members = textMembers();
  // One Buffer view of the text for every key and value read below (not one per read).
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const byKey = memberIndexes(view, members);
  const keys = objectKeys(byKey);
  // A key written more than once: its value is not shown (rare: decoded again only then).
  const repeats = byKey.size < members.length ? repeatedMemberKeys(view, members) : undefined;
  if (keys.length === 1 && keys[0] === 'adcp_error') return 'skip';
  if (scan.mayHoldProtoKey) return 'unknown';
  // The scan flags a long number or an exponent; the exact check decides (normalize.ts mayLoseDigits).
  if (scan.numberMayBeLossy && hasLossyNumber(bytes)) return 'unknown';
  const member = (key: string): TextMember | undefined => {
    const m = byKey.get(key);
    return m === undefined ? undefined : members[m];
  };
  const shape = {
    keys,
    status: stringValue(view, member('status')),
    arrayLength: (key: string) => {
      const m = member(key);
      return m !== undefined && m.first === 0x5b /* [ */ ? m.elements : undefined;
    },
    repeated: repeats && ((key: string) => repeats.has(key)),
  };
  return { bytes, summary: Buffer.from(summaryJsonString(shape, bytes.length)), depth, nodes };
}

/**
 * `Object.keys` of the object memberIndexes (text-members.ts) describes: the keys in the Map's order,
 * except that array-index keys (`"0"`, `"7"`; only a key starting with a digit can be one)
 * come first in ascending order, as `Object.keys` lists them.
 *
 * Why a Map and not a prototype-less object (issue 5, 1 KiB (b) and (c)): `Object.keys` of
 * that dictionary-mode object was the largest line of a 1 KiB dedupe; judgeStringText of
 * the bench's 1 KiB (b) text went from ~2.26 to ~1.84 µs.
 */
function objectKeys(byKey: Map<string, number>): string[] {
  const keys = [...byKey.keys()];
  for (const key of keys) {
    const c = key.charCodeAt(0);
    if (c >= 0x30 && c <= 0x39) return Object.keys(Object.fromEntries(byKey));
  }
  return keys;
}

/** The member's string value when it is a string short enough to be shown, else undefined (a summary shows neither). */
function stringValue(view: Buffer, m: TextMember | undefined): string | undefined {
  if (m === undefined || m.first !== 0x22 /* " */ || m.value[1] - m.value[0] > STATUS_MAX_WRITTEN) return undefined;
  return jsonString(view, m.value);
}
