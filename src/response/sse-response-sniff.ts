/**
 * What an SSE event's data may be, read from its text or its UTF-8 bytes without parsing it:
 * whether it may be a JSON-RPC response ({@link mayBeResponse}: a `result` or `error` key in
 * any case the hosts fold, or a backslash) and whether it may name no method
 * ({@link mayLackMethod}: no object or array, or not provably a request or notification).
 * The SSE stage (sse-stage.ts, its event judgement) parses an event's data only where one of
 * them is true and responses are judged on the stream (a request's, a batch's, the standalone
 * GET stream, a POSTed notification's); batch-answers.ts uses the same test. Both are
 * conservative: a false positive only costs a parse, a false negative would forward a
 * response unjudged. The sources of their rules (reported failures, regression tests) are in
 * each function's doc.
 */
import { BACKSLASH, CR, LBRACE, LBRACKET, LF } from '../mcp/json-bytes.js';

/**
 * False when the JSON text `data` cannot parse to a JSON-RPC response, so it need not be
 * parsed at all: a response has a `result` or an `error` member (JSON-RPC 2.0 §5), and the
 * text of such a key holds `result` / `error` unless written with escapes (`\u0072` is the
 * only kind that can spell a letter; RFC 8259 §7). Conservative: any text holding `resul`,
 * `erro` or a backslash may be a response (a progress notification saying "no results" is
 * parsed, and found not to be one). Not a syntax check: invalid JSON is forwarded either way.
 * In any case, as Go's encoding/json (the MCP Go SDK's decoder) folds it: `"Result"` is
 * `result` (mcp/repeated-names.ts; a new user's trial 8, F3:
 * test/regressions/case-variant-member-names-accepted.test.ts), and so is `"reſult"`, `ſ`
 * (U+017F) folding to `s` (F3 (residual):
 * test/regressions/unicode-fold-member-names-accepted.test.ts; `error` has no `s` or `k`, the
 * letters other characters fold to); the case-insensitive search runs only when the
 * lower-case one found nothing.
 */
export function mayBeResponse(data: string | Buffer): boolean {
  if (typeof data === 'string') return data.indexOf('\\') !== -1 || RESPONSE_KEYS_ANY_CASE.test(data);
  // UTF-8 bytes: an ASCII letter's byte comes only from that letter. The keys first: in a
  // response they come early, and the backslash search reads the whole data when there is none.
  if (data.indexOf('resul') !== -1 || data.indexOf('erro') !== -1 || data.indexOf(BACKSLASH) !== -1) return true;
  return RESPONSE_KEY_BYTES_ANY_CASE.test(data.toString('latin1'));
}
/**
 * Prefixes of both keys, in any case (a faster scan than the quoted keys: fewer candidate
 * positions; false positives only cost a parse): ASCII case, and `ſ` for the `s` of `result`.
 */
const RESPONSE_KEYS_ANY_CASE = /re(?:s|\u017f)ul|erro/i;
/**
 * The same on the Latin-1 text of UTF-8 bytes: a byte >= 0x80 folds to no ASCII letter, and
 * `ſ` is the bytes C5 BF (`\xc5` also matches `\xe5` here: a false positive, a parse).
 */
const RESPONSE_KEY_BYTES_ANY_CASE = /re(?:s|\xc5\xbf)ul|erro/i;

/**
 * False when the event data `data` (its text, or its UTF-8 bytes) is no JSON object or array
 * (its first character is none of `{`, `[` and JSON whitespace: text or a scalar, which the
 * gateway forwards as such and no host reads as a message), or provably names a method
 * (rewrite.ts namesMethod: a top-level `method` whose value is a non-empty string), so that,
 * holding no response key ({@link mayBeResponse}), it is a request or a notification: it
 * starts with `{"method":"` or `{"jsonrpc":"2.0","method":"` (as the MCP SDKs write a
 * notification: the TypeScript SDK `method` first, the Go, Python and Java SDKs after
 * `"jsonrpc":"2.0"`; the first member, or the one after a string, is a top-level one) and a
 * character other than `"` follows, and it holds no other `"method` in any ASCII case (a later `method` is the one `JSON.parse`
 * keeps, a Go host reads `"METHOD"` as `method`; `method` has no `s` or `k`, the letters
 * other characters fold to; a key written with `\u` escapes is {@link mayBeResponse}'s).
 * True for anything else (another member order, spaces, a request written `id` first,
 * text): such data may name no method, so where responses are judged it is judged, whether
 * it has a top-level non-empty `method` being the scan's to tell (sse-message.ts). A message
 * with neither `result` nor `error` that names no method is no request or notification
 * (rewrite.ts lacksMethod): with an `id` a host reads it as a response, without one it is no
 * message at all.
 *
 * Reported failures: `{"jsonrpc":"2.0","id":1}` ended request 1's stream `upstream_reset`
 * after going out as it was, where a JSON body is `upstream_not_mcp` (a new user's trial 8,
 * F13: test/regressions/malformed-response-for-own-id-forwarded.test.ts);
 * `{"jsonrpc":"2.0","id":999}` went out on request 1's stream, on the standalone GET stream
 * and in a batch's answer, and so did such a message whose bytes held `method` elsewhere
 * (`"params":{"method":"x"}`), which the MCP Go SDK reads as a response (hostile trials:
 * test/regressions/id-only-message-on-request-stream-passes.test.ts); `{"jsonrpc":"2.0"}`,
 * `{"jsonrpc":"2.0","params":{}}`, `{"jsonrpc":"2.0","method":""}` and
 * `{"jsonrpc":"2.0","id":999,"method":""}` went out on every stream (a review:
 * test/regressions/seller-message-without-kind-forwarded.test.ts). It replaces the test for
 * an `"id` (four backward searches), which an id-only message needed and a kindless one
 * escapes.
 *
 * Cost, on the events that are parsed anyway (raw blocks are proved so by the planner:
 * sse-raw-events.ts RawEventLimits.methodNamed) and hold neither response key prefix: a
 * prefix compare (up to 27 characters) and two native searches (`"m`, `"M`) past it, plus a
 * 5-character compare per hit (`"message"` and the like); an event that fails the proof (a
 * request written `id` first, a notification with spaces or another member order) costs one
 * WebAssembly scan of its data, as an event holding `"id` did before.
 */
export function mayLackMethod(data: string | Buffer): boolean {
  if (typeof data === 'string') {
    if (!mayOpenContainer(data.charCodeAt(0))) return false;
    const from = data.startsWith(METHOD_FIRST) ? METHOD_FIRST.length : data.startsWith(METHOD_AFTER_JSONRPC) ? METHOD_AFTER_JSONRPC.length : -1;
    if (from === -1 || from >= data.length || data.charCodeAt(from) === QUOTE) return true;
    for (const key of QUOTE_MS) {
      for (let at = data.indexOf(key, from); at !== -1; at = data.indexOf(key, at + 1)) if (foldedTextAt(data, at + 2)) return true;
    }
    return false;
  }
  if (!mayOpenContainer(data[0])) return false;
  const from = bytesStartWith(data, METHOD_FIRST_BYTES) ? METHOD_FIRST_BYTES.length : bytesStartWith(data, METHOD_AFTER_JSONRPC_BYTES) ? METHOD_AFTER_JSONRPC_BYTES.length : -1;
  if (from === -1 || from >= data.length || data[from] === QUOTE) return true;
  for (const key of QUOTE_M_BYTES) {
    for (let at = data.indexOf(key, from); at !== -1; at = data.indexOf(key, at + 1)) if (foldedBytesAt(data, at + 2)) return true;
  }
  return false;
}
/** The data prefixes that prove a top-level `method` ({@link mayLackMethod}), its value's `"` last. */
const METHOD_FIRST = '{"method":"';
const METHOD_AFTER_JSONRPC = '{"jsonrpc":"2.0","method":"';
const METHOD_FIRST_BYTES = Buffer.from(METHOD_FIRST, 'latin1');
const METHOD_AFTER_JSONRPC_BYTES = Buffer.from(METHOD_AFTER_JSONRPC, 'latin1');
/** `"m` and `"M`: where a `"method` key in any ASCII case may start. */
const QUOTE_MS = ['"m', '"M'];
const QUOTE_M_BYTES = QUOTE_MS.map((key) => Buffer.from(key, 'latin1'));
/** `ethod`, the letters of `method` after its `m`. */
const ETHOD = 'ethod';
const QUOTE = 0x22;

/** `c`, the data's first character (undefined or NaN: none), may begin a JSON object or array: `{`, `[`, JSON whitespace. */
function mayOpenContainer(c: number | undefined): boolean {
  return c === LBRACE || c === LBRACKET || c === 0x20 || c === 0x09 || c === LF || c === CR;
}

/** `data` starts with `prefix`. */
function bytesStartWith(data: Buffer, prefix: Buffer): boolean {
  if (data.length < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (data[k] !== prefix[k]) return false;
  return true;
}
/** `text` holds {@link ETHOD} at `at` in any ASCII case (`| 0x20` maps only `A`-`Z` onto letters). */
function foldedTextAt(text: string, at: number): boolean {
  if (at + ETHOD.length > text.length) return false;
  for (let k = 0; k < ETHOD.length; k++) if ((text.charCodeAt(at + k) | 0x20) !== ETHOD.charCodeAt(k)) return false;
  return true;
}
/** The same on bytes. */
function foldedBytesAt(data: Buffer, at: number): boolean {
  if (at + ETHOD.length > data.length) return false;
  for (let k = 0; k < ETHOD.length; k++) if ((data[at + k]! | 0x20) !== ETHOD.charCodeAt(k)) return false;
  return true;
}
