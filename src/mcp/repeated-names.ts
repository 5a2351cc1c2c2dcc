/**
 * Whether a seller's JSON-RPC message (or batch) repeats a member name, as json-scan.ts read
 * it: such a message is no valid answer (`upstream_not_mcp`: docs/errors.md).
 *
 * Why: RFC 8259 §4, "The names within an object SHOULD be unique"; with repeats "the behavior
 * of software that receives such an object is unpredictable": `JSON.parse` keeps the last,
 * other parsers the first, some refuse the text. The gateway judges and rewrites a message as
 * `JSON.parse` reads it, so a seller answering request 1 with
 * `{"jsonrpc":"2.0","id":999,"id":1,"result":...}` passed its "the response to the
 * request's id" check, while a host whose parser keeps the first member reads id 999 and may
 * route the answer to another pending call; with two `result` members such a host reads
 * another result than the one the gateway bounded and rewrote
 * (test/regressions/response-with-repeated-id-member-accepted.test.ts).
 *
 * What counts: any name repeated in a message object (the top-level object, or an object
 * element of a top-level array: a batch's message); inside the last `result`, a repeated
 * `content`, `structuredContent`, `isError` or `resultType`, and inside one of its `content`
 * items a repeated `text` or `type` (the names the rewrite reads: rewrite.ts, splice.ts),
 * when written without an escape.
 *
 * Cost: the scan notes repeats of the names it already compares (json-scan.ts
 * `repeatedName`) and proves most messages free of repeats (`namesDistinct`) in the pass it
 * makes anyway; only a message with a key written with an escape or two names outside the
 * JSON-RPC members needs the parsed message: its own keys counted against the keys written
 * (`messageKeys`), exact whatever the names (an escaped `"\u0069d"` is `id`).
 */
import { scanJson, type JsonScanSummary } from './json-scan.js';
import { isJsonObject } from './extract.js';

/** The scan's facts about member names (a {@link JsonScanSummary} has them). */
export type NameFacts = Pick<JsonScanSummary, 'repeatedName' | 'namesDistinct' | 'messageKeys'>;

/**
 * True when the scanned message repeats a member name (module doc). `parsed`: the message
 * as `JSON.parse` read the same text, needed only when the scan could not tell (neither
 * `repeatedName` nor `namesDistinct`); without it the answer is then false.
 */
export function repeatsMemberName(scan: NameFacts, parsed?: unknown): boolean {
  if (scan.repeatedName) return true;
  if (scan.namesDistinct || parsed === undefined) return false;
  return parsedMessageKeys(parsed) < scan.messageKeys;
}

/**
 * {@link repeatsMemberName} for a caller that has not scanned `bytes` (a JSON text within the
 * structure bounds, which `JSON.parse` read as `parsed`): one scan of them, unbounded. For
 * the rare paths only (a batch's SSE events: response/batch-answers.ts); false for bytes that
 * are not JSON.
 */
export function textRepeatsMemberName(bytes: Uint8Array, parsed: unknown): boolean {
  const scan = scanJson(bytes, UNBOUNDED);
  return scan.ok && repeatsMemberName(scan, parsed);
}

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/** Own keys of the message objects of `parsed`: an object's, or the sum over an array's object elements. */
function parsedMessageKeys(parsed: unknown): number {
  if (!Array.isArray(parsed)) return isJsonObject(parsed) ? Object.keys(parsed).length : 0;
  let keys = 0;
  for (const element of parsed) if (isJsonObject(element)) keys += Object.keys(element).length;
  return keys;
}
