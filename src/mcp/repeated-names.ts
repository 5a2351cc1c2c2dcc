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
 * A key equal to one of these names only under Go's case folding (`"ID"`, `"Result"`,
 * `"Content"` in `result`, `"TEXT"` in a content item, `"reſult"`, `"iſError"`; not `params`)
 * counts as a repeat of it, alone or beside the name as written: Go's encoding/json, the MCP
 * Go SDK's decoder, matches member names to its struct fields with bytes.EqualFold, the last
 * match winning (golang/go#43664: `{"dist":"ok","Dist":"KO"}` reads `KO`), so a Go host read
 * `{"jsonrpc":"2.0","id":1,"ID":999,"result":...}` as the response to 999, and a lone
 * `"Result"` as a result the gateway never judged (a new user's trial 8, F3:
 * test/regressions/case-variant-member-names-accepted.test.ts). EqualFold is Unicode simple
 * case folding, not only ASCII: `ſ` (U+017F) folds to `s` and `K` (U+212A, Kelvin sign) to
 * `k`, so `"result":{A},"reſult":{B}` read B and `"isError":false,"iſError":true` a tool
 * error (a new user's trial 8, F3 (residual):
 * test/regressions/unicode-fold-member-names-accepted.test.ts); no other character folds to an
 * ASCII letter. Told by the scan (assembly/json-scan.ts caseVariant) for keys written without
 * an escape, and by {@link parsedCaseVariant} for a message the scan cannot prove (an escaped
 * key).
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
  return parsedMessageKeys(parsed) < scan.messageKeys || parsedCaseVariant(parsed);
}

/**
 * True when the JSON-RPC message object `m` (as `JSON.parse` read it) has a `result` or an
 * `error` member in any case (Go's folding: {@link foldsTo}): a response as a Go host reads it
 * (module doc), so judged as one where the gateway judges responses (sse-message.ts,
 * batch-answers.ts). Reads `m`'s keys only when neither is written exactly.
 */
export function claimsResponseInAnyCase(m: Record<string, unknown>): boolean {
  if (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error')) return true;
  for (const key of Object.keys(m)) if (foldsTo(key, 'result') || foldsTo(key, 'error')) return true;
  return false;
}

/**
 * True when the JSON-RPC message object `m` (as `JSON.parse` read it) may name no method as
 * one host or another reads it (response/rewrite.ts lacksMethod, under Go's folding): it has
 * no `method` member whose value is a non-empty string, or a member named `method` in another
 * case (`"Method"`, `"METHOD"`) whose value is not one. A Go host matches the name in any case
 * and keeps the last match, so `{"jsonrpc":"2.0","id":999,"method":"x","METHOD":""}` is a
 * message with id 999 and no method to it, a response (MCP Go SDK internal/jsonrpc2
 * DecodeMessage: "no method, should be a response"; with neither `result` nor `error` it
 * completes the pending call with that id, an empty result); without an id such a message is
 * none at all. So the gateway judges it as rewrite.ts lacksMethod does for the names as
 * written. Reported failures: `{"jsonrpc":"2.0","ID":1}` reached the host on request 1's SSE
 * stream, where `{"jsonrpc":"2.0","id":1}` ended it `upstream_not_mcp` (a new user's trial 8,
 * F3 (residual): test/regressions/unicode-fold-member-names-accepted.test.ts);
 * `{"jsonrpc":"2.0","id":999}`, `"ID":999`, went out on request 1's stream (hostile trials:
 * test/regressions/id-only-message-on-request-stream-passes.test.ts); an empty method was
 * read as one (a review: test/regressions/seller-message-without-kind-forwarded.test.ts).
 */
export function lacksMethodInAnyCase(m: Record<string, unknown>): boolean {
  let named = false;
  for (const key of Object.keys(m)) {
    if (key !== 'method' && !foldsTo(key, 'method')) continue;
    const value = m[key];
    if (typeof value !== 'string' || value === '') return true;
    if (key === 'method') named = true;
  }
  return !named;
}

/**
 * True when a host may read the JSON-RPC message object `m` (as `JSON.parse` read it) as no
 * request or notification: a response ({@link claimsResponseInAnyCase}: a `result` or an
 * `error`), or a message naming no method ({@link lacksMethodInAnyCase}: with an `id` a
 * response as a Go host reads it, without one no JSON-RPC message at all; JSON-RPC 2.0 §4).
 * What may not pass where no response is awaited (the standalone GET stream, a POSTed
 * notification's answer), and what must be the response to the request, or to a batch's,
 * where one is (sse-message.ts, batch-answers.ts, rewrite.ts holdsResponse).
 */
export function readsAsNoRequest(m: Record<string, unknown>): boolean {
  return claimsResponseInAnyCase(m) || lacksMethodInAnyCase(m);
}

/** Names whose case variants count as repeats (module doc), lower-cased, by the object they are judged in. */
const MESSAGE_NAMES = ['jsonrpc', 'id', 'method', 'result', 'error'];
const RESULT_NAMES = ['content', 'structuredContent', 'isError', 'resultType'];
const ITEM_NAMES = ['text', 'type'];

/**
 * A key of the parsed message that names a judged member only under Go's case folding
 * (module doc): in a message object (the object, or an object element of an array), in the
 * top-level object's `result`, or in one of that result's `content` items, as the scan
 * compares them (assembly/json-scan.ts caseVariant).
 */
function parsedCaseVariant(parsed: unknown): boolean {
  if (Array.isArray(parsed)) return parsed.some((element) => isJsonObject(element) && hasVariant(element, MESSAGE_NAMES));
  if (!isJsonObject(parsed)) return false;
  if (hasVariant(parsed, MESSAGE_NAMES)) return true;
  const result = parsed.result;
  if (!isJsonObject(result)) return false;
  if (hasVariant(result, RESULT_NAMES)) return true;
  const content = result.content;
  return Array.isArray(content) && content.some((item) => isJsonObject(item) && hasVariant(item, ITEM_NAMES));
}

/**
 * `o` has a key naming a JSON-RPC message member (`jsonrpc`, `id`, `method`, `result`,
 * `error`), as written or under Go's case folding ({@link foldsTo}): what makes an object a
 * message for some reader. Also read by response/ack-body.ts.
 */
export function namesMessageMember(o: Record<string, unknown>): boolean {
  for (const name of MESSAGE_NAMES) if (Object.hasOwn(o, name)) return true;
  return hasVariant(o, MESSAGE_NAMES);
}

/** The members that give a message its kind (JSON-RPC 2.0 §4, §5): `jsonrpc` aside, which every message and no kind has. */
const KIND_NAMES = ['id', 'method', 'result', 'error'];

/**
 * `o` has a key naming a member that gives a JSON-RPC message a kind (`id`, `method`,
 * `result`, `error`), as written or under Go's case folding ({@link foldsTo}): without one no
 * reader takes `o` for a request, a notification or a response (`{}`, `{"jsonrpc":"2.0"}`,
 * `{"jsonrpc":"2.0","params":{}}`), whatever else it holds. Read by
 * response/kindless-event.ts.
 */
export function namesKindMember(o: Record<string, unknown>): boolean {
  for (const name of KIND_NAMES) if (Object.hasOwn(o, name)) return true;
  return hasVariant(o, KIND_NAMES);
}

function hasVariant(o: Record<string, unknown>, names: readonly string[]): boolean {
  for (const key of Object.keys(o)) for (const name of names) if (foldsTo(key, name)) return true;
  return false;
}

/**
 * `key` is `name` under Go's case folding (bytes.EqualFold: Unicode simple case folding) but not
 * as written. Also read by the host request's check (request/repeated-request-names.ts). `name` is ASCII letters, and the characters that fold to an ASCII letter are its
 * two cases, `ſ` (U+017F) for `s` and `K` (U+212A) for `k` (module doc): each one UTF-16 unit,
 * so the lengths match. `| 0x20` maps exactly `A`-`Z` onto `a`-`z` among letters.
 */
export function foldsTo(key: string, name: string): boolean {
  if (key.length !== name.length || key === name) return false;
  for (let i = 0; i < key.length; i++) {
    const a = key.charCodeAt(i);
    const b = name.charCodeAt(i) | 0x20;
    if ((a | 0x20) !== b && !(a === LONG_S && b === S) && !(a === KELVIN && b === K)) return false;
  }
  return true;
}
/** `ſ` (U+017F LATIN SMALL LETTER LONG S), `K` (U+212A KELVIN SIGN), and the letters they fold to. */
const LONG_S = 0x17f;
const KELVIN = 0x212a;
const S = 0x73;
const K = 0x6b;

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
