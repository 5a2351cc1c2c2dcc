/**
 * What the SSE stage (sse-stage.ts) does with an event's data (whatever the event's name:
 * sse-event-judge.ts namedEvent) that needs more than
 * the cheap tests (it may be the response to the request, or it is too large for
 * json-bounds.ts withinJsonBounds to prove the structure bounds): the same checks and
 * rewrite as before, done on the data's UTF-8 bytes the way the JSON path does them
 * (json-stage.ts), so that a large event costs about what a JSON body does.
 *
 * - Structure bounds: the WebAssembly scan (json-scan.ts), which validates the grammar as it
 *   counts. Data that is not JSON and does not start as a JSON array or object (plain text)
 *   is forwarded as the seller sent it (docs/errors.md): reported failure, plain-text data
 *   holding 65 `[` got `json_depth` (test/regressions/sse-new-user-findings.test.ts). Data
 *   that starts as an array or object but is not JSON gets checkJsonBounds, which counts
 *   past the syntax error: a lenient host parser reads `[NaN, [[[...` on (review of be8fed7).
 *   Such data that may be a response and holds `NaN` or `Infinity` is judged as that lenient
 *   parser reads it (lenientVerdict: a response there is `foreign` or `unsolicited`).
 * - The response: when the scan's top-level members prove the data is (or is not) the
 *   response to the request and the rewrite provably leaves it unchanged, there is no
 *   `JSON.parse`, and its bytes go out as they are (issue 5: "the gateway must not parse
 *   and re-serialize a body it leaves unchanged"). Otherwise it is parsed and rewritten as
 *   before, and a rewritten tool result is spliced into the seller's bytes (splice.ts)
 *   where it can be, instead of re-serialized. A dedupe or lift the scan can decide is
 *   written without parsing, as the JSON path does (scanned-message.ts spliceScanned).
 *
 * - On a request's stream, a message with `result` or `error` that is not the response to the
 *   request (isForeignResponse: another id, no id, both members, a `method` beside them
 *   included), or a batch holding one: verdict `foreign`, never forwarded. So is such a
 *   message that repeats a member name (mcp/repeated-names.ts: `"id":999,"id":1` is the
 *   response to 1 as `JSON.parse` reads it, to 999 for a host that keeps the first member),
 *   the request's own id included, or a batch holding a response and a repeat: told by the
 *   scan, or by counting the parsed members when it cannot tell (the unparsed path is taken
 *   only when it proves no repeat). A request or notification is not judged by its names.
 *   So is a message for the request's own id that is not a well-formed response (rewrite.ts
 *   isWellFormedResponse: `jsonrpc` not `"2.0"`, a `result` that is no object, an `error`
 *   without an integer `code` and a string `message`), and one with neither `result` nor
 *   `error` that names no method (no `method`, or one that is not a non-empty string: rewrite.ts
 *   claimsAnswer, lacksMethod): with an `id`, the request's or another, a Go host reads it as a
 *   response; without one it is no JSON-RPC message at all. The JSON path's judgement, from
 *   the scan's members where they tell (a `result`; no `result`, `error` or method name:
 *   json-value-at.ts isMethodName), else parsed (a new user's trial 8, F5, F13:
 *   test/regressions/malformed-response-for-own-id-forwarded.test.ts; hostile trials:
 *   test/regressions/id-only-message-on-request-stream-passes.test.ts; a review:
 *   test/regressions/seller-message-without-kind-forwarded.test.ts).
 * - On a request's stream, data that would be `foreign` but names no kind of message at all
 *   (kindless-event.ts: an object with no `id`, `method`, `result` or `error` in any case, with
 *   or without `jsonrpc`, or an array of only such objects; `{}`): verdict `kindless`, dropped
 *   (a hostile trial 17, M1:
 *   test/regressions/sdk-example-event-store-priming-replay-fails-call.test.ts).
 * - On the standalone GET stream (`rpc.kind` 'none'), any response ({@link isUnsolicitedResponse}:
 *   a message naming no method included, an id-only one or none at all), or an array holding
 *   one: verdict `unsolicited`, never forwarded (standaloneVerdict).
 *
 * - A message object, or its `error`, of more than 1000 members (wide-answer.ts) is judged
 *   without parsing it (wideVerdict: forwarded unread when the scan reads a request or
 *   notification, else `foreign` / `unsolicited`; a hostile trial 54, F1).
 *
 * Measured on the bench's 1 MiB one-event results: checkJsonBounds + JSON.parse +
 * JSON.stringify + a UTF-8 encode were ~10 ms of the gateway's ~11 ms per request.
 */
import type { Exchange } from '../exchange.js';
import { checkJsonBounds } from '../mcp/json-bounds.js';
import { CR, LBRACE, LBRACKET, LF, SPACE, TAB } from '../mcp/json-bytes.js';
import { scanJson, type JsonScanSummary, type TopMembers } from '../mcp/json-scan.js';
import { claimsResponseInAnyCase, lacksMethodInAnyCase, readsAsNoRequest, repeatsMemberName, type NameFacts } from '../mcp/repeated-names.js';
import { isJsonObject } from '../mcp/extract.js';
import { claimsAnswer, holdsResponse, isResponseToExchange, scannedResponseWellFormed } from './rewrite.js';
import { mayRewrite, rewriteScanned, spliceScanned } from './scanned-message.js';
import { isMethodName, isRequestId } from './json-value-at.js';
import { judgeArrayAnswer } from './array-answer.js';
import type { NotMcpCause } from '../mcp/local-error.js';
import { mayHoldNonFiniteLiteral, parseWithNonFiniteLiterals } from '../mcp/lenient-json.js';
import { isKindlessEventData } from './kindless-event.js';
import { isWideMessage } from './wide-answer.js';

/**
 * What a whole scan read of a message's top level (json-scan.ts scanJson): its top-level
 * members, whether a name repeats, and how many keys its message objects have. A
 * {@link JsonScanSummary} is one: a forward verdict carries the judge's scan itself, no copy
 * of these fields per event (re-read review of 7767818, L1).
 */
export type ScannedMembers = Pick<JsonScanSummary, 'members' | 'repeatedName' | 'messageKeys'>;

/** {@link ScannedMembers} of data that is no JSON object text: no request, no cancellation (server-request-id.ts). */
export const NO_TOP_OBJECT: ScannedMembers = Object.freeze({ members: undefined, repeatedName: false, messageKeys: 0 });

/** The outcome of {@link inspectEventData}. */
export type EventDataVerdict =
  /** A structure bound broke: `json_depth` or `json_nodes` (limit, observed as json-bounds.ts). */
  | { readonly kind: 'breach'; readonly reason: 'json_depth' | 'json_nodes'; readonly limit: number; readonly observed: number; readonly dataBytes: number }
  /** Not the response: the data goes out as it is, as `bytes` when given (its UTF-8 bytes). */
  | {
      readonly kind: 'forward';
      readonly bytes: Buffer;
      /**
       * What the scan of `bytes` that judged it read (its top-level members, and whether a name
       * repeats); {@link NO_TOP_OBJECT} for data that is no JSON object text (not JSON, lenient
       * JSON, an array or a scalar): server-request-id.ts reads a server request's id (and a
       * seller's cancellation's facts) from it rather than scanning the data again (review of
       * trial 57 F3's fix, and the hot-path review of it: a lenient, wide or array forward was
       * scanned again: test/regressions/server-request-check-rescans-events.test.ts).
       */
      readonly scanned: ScannedMembers;
    }
  /**
   * A message with `result` or `error` on a request's stream that is not the response to the
   * request ({@link isForeignResponse}: another id, no id, both members, a `method` beside them
   * included), or one naming no method (an id-only message, or none at all: rewrite.ts
   * lacksMethod), or a batch holding one (batchVerdict):
   * it must not reach the host; the stage answers the request `upstream_not_mcp`.
   * `dataBytes`: the data's UTF-8 length. `cause`: why, when the error's message says it
   * (mcp/local-error.ts NotMcpCause: `batch_removed`, an array holding the request's
   * response on a host's revision without batches).
   */
  | {
      readonly kind: 'foreign';
      readonly dataBytes: number;
      readonly cause?: NotMcpCause;
      /** A message object (or its `error`) of more than 1000 members (wide-answer.ts): refused unread, never judged `kindless`. */
      readonly wide?: true;
    }
  /**
   * A JSON-RPC response on the standalone GET stream ({@link isUnsolicitedResponse}: a message
   * naming no method included), or an array holding one: it must not reach the host; the
   * stage drops it (`get_stream_response`).
   * `dataBytes`: the data's UTF-8 length.
   */
  | { readonly kind: 'unsolicited'; readonly dataBytes: number }
  /**
   * On a request's stream, data that would be `foreign` but names no kind of JSON-RPC message
   * at all (kindless-event.ts: `{}`, `{"jsonrpc":"2.0"}`): no host reads it as a message; the
   * stage drops it (`message_without_kind`) and the stream goes on.
   * `dataBytes`: the data's UTF-8 length.
   */
  | { readonly kind: 'kindless'; readonly dataBytes: number }
  /**
   * The response to the request: `out` is the data to send (the seller's bytes when not
   * `changed`). `message` is the parsed message as sent, or undefined when it was not parsed
   * (only when the caller said it does not want it). `bytes` and `sellerMessage` are the
   * seller's data and its parsed message (undefined when not parsed), sent instead of `out`
   * and `message` when the rewrite does not fit (rewrite-room.ts, the stage decides).
   */
  | {
      readonly kind: 'response';
      readonly out: Buffer;
      readonly dataBytes: number;
      readonly changed: boolean;
      readonly action: 'none' | 'deduped' | 'lifted';
      readonly message: unknown;
      readonly bytes: Buffer;
      readonly sellerMessage: unknown;
    };

export interface EventDataOptions {
  readonly maxDepth: number;
  readonly maxNodes: number;
  /**
   * The data may be a response (the stage's mayBeResponse): on a stream answering a request,
   * the request's or another id's; on the standalone GET stream, any (standaloneVerdict).
   */
  readonly mayBeResponse: boolean;
  /** The caller needs the parsed response message (PipelineHooks.wantsResponseMessage). */
  readonly wantsMessage: boolean;
}

/**
 * Checks an event's data (whatever its name) and, when it is the response to the exchange's request,
 * rewrites it (module doc). Same verdicts as a validating bounds check + JSON.parse +
 * isResponseToExchange + rewriteResponse on the text; errors: none thrown (invalid JSON is forwarded). `dataBytes`:
 * the UTF-8 encoding of `data` when the caller has it (else it is encoded here); without
 * `data`, valid UTF-8 (decoded here only when the text is needed: a parse).
 */
export function inspectEventData(exchange: Exchange, data: string | undefined, opts: EventDataOptions, dataBytes?: Buffer): EventDataVerdict {
  const verdict = judgeEventData(exchange, data, opts, dataBytes);
  // Refused data that names no kind of message at all is dropped instead (kindless-event.ts;
  // a hostile trial 17, M1). The scan tells the usual case (`{}`: judgeEventData); data it
  // cannot (escaped keys, an array, lenient JSON) is parsed again here, on this path only:
  // the stream would end on it.
  if (verdict.kind !== 'foreign' || verdict.wide === true || !isKindlessEventData(data ?? dataBytes!)) return verdict;
  return { kind: 'kindless', dataBytes: verdict.dataBytes };
}

/** {@link inspectEventData} before its `kindless` verdict: `foreign` for such data. */
function judgeEventData(exchange: Exchange, data: string | undefined, opts: EventDataOptions, dataBytes?: Buffer): EventDataVerdict {
  const bytes = dataBytes ?? Buffer.from(data!, 'utf8');
  /** The data as text: given, or decoded from its bytes when first needed (valid UTF-8: the caller's precondition). */
  const text = (): string => (data ??= bytes.toString('utf8'));
  const limits = { maxDepth: opts.maxDepth, maxNodes: opts.maxNodes };
  const scan = scanJson(bytes, limits);
  if (!scan.ok) {
    if (scan.reason !== 'syntax') return { kind: 'breach', reason: scan.reason, limit: scan.limit, observed: scan.observed, dataBytes: bytes.length };
    // Not JSON. Data that starts as a JSON array or object may still be read by a lenient
    // parser (`NaN`, `Infinity`: Python's json.loads reads on), so it is counted past the
    // error (checkJsonBounds); anything else is text, forwarded as it is (module doc).
    if (!startsAsContainer(bytes)) return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
    const bounds = checkJsonBounds(bytes, limits);
    if (!bounds.ok) return { kind: 'breach', reason: bounds.reason, limit: bounds.limit, observed: bounds.observed, dataBytes: bytes.length };
    // A response to a lenient host (`NaN`, `Infinity` read as numbers: lenient-json.ts) is judged as one (lenientVerdict).
    if (opts.mayBeResponse && mayHoldNonFiniteLiteral(bytes)) return lenientVerdict(exchange, parseWithNonFiniteLiterals(text()), bytes);
    return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
  }
  if (!opts.mayBeResponse) return { kind: 'forward', bytes, scanned: scan };
  const members = scan.members;
  // A message object (or its `error`) of more than 1000 members is not parsed (wide-answer.ts;
  // a hostile trial 54, F1): a batch's stream aside (its data is parsed: batch-answers.ts).
  if (exchange.rpc.kind !== 'batch' && isWideMessage(bytes, scan)) return wideVerdict(exchange, bytes, scan);
  // No request to answer (the standalone GET stream, a notification's or host response's stream): no response passes.
  if (exchange.rpc.kind === 'none' || exchange.rpc.kind === 'notification') return standaloneVerdict(text, bytes, scan);
  // Only an object can be a response (isResponseToExchange), or hold it: a batch.
  if (members === undefined) return batchVerdict(exchange, text, bytes, scan);
  if (members.plainKeys && !opts.wantsMessage) {
    if (!(members.hasResult || members.hasError)) {
      // No `result` or `error` as written; one named in another case (`"Result"`, `"reſult"`),
      // or an `id` or `method` so (`"ID"`, `"Method"`), is a repeat (mcp/repeated-names.ts),
      // judged on the parsed message (parsedVerdict).
      if (scan.repeatedName) return parsedVerdict(exchange, JSON.parse(text()), bytes, scan);
      // A request or notification only when it names a method (a non-empty string); else an
      // id-only message (the request's id or another) or none at all (rewrite.ts claimsAnswer,
      // lacksMethod): `foreign`, as a JSON body gets upstream_not_mcp for it. Cost: two
      // property reads and two bytes of the method's range (json-value-at.ts isMethodName).
      if (exchange.rpc.kind !== 'request' || isMethodName(bytes, members.method)) return { kind: 'forward', bytes, scanned: scan };
      // No `id` and no `method` written either, and none in another case (a repeat, above): it
      // names no kind of message at all (kindless-event.ts), told from the scan, not parsed.
      return members.id === undefined && !members.hasMethod ? { kind: 'kindless', dataBytes: bytes.length } : { kind: 'foreign', dataBytes: bytes.length };
    }
    // A response repeating a member name (mcp/repeated-names.ts), whatever its id: `foreign`.
    if (scan.repeatedName) return { kind: 'foreign', dataBytes: bytes.length };
    // Another id (json-value-at.ts isRequestId: exactly, a number as written), no id, both
    // `result` and `error`, or a `method` beside them (whatever the id: isForeignResponse):
    // parsed below, and never forwarded.
    if ((members.hasResult && members.hasError) || members.hasMethod || !isRequestId(bytes, members.id, exchange.rpc)) return parsedVerdict(exchange, JSON.parse(text()), bytes, scan);
    // The response to the request, not well formed (rewrite.ts isWellFormedResponse): `foreign`.
    // Undefined (an `error`): judged parsed below.
    const wellFormed = scannedResponseWellFormed(bytes, members);
    if (wellFormed === false) return { kind: 'foreign', dataBytes: bytes.length };
    if (wellFormed === true && scan.namesDistinct) {
      if (!mayRewrite(exchange, scan)) return unchangedResponse(bytes, undefined);
      const spliced = spliceScanned(exchange, bytes, scan);
      if (spliced !== undefined) {
        const changed = spliced.action !== 'none';
        return { kind: 'response', out: spliced.out, dataBytes: bytes.length, changed, action: spliced.action, message: undefined, bytes, sellerMessage: undefined };
      }
    }
  }
  const message: unknown = JSON.parse(text());
  if (!isResponseToExchange(exchange, message, bytes, members) || repeatsMemberName(scan, message)) return parsedVerdict(exchange, message, bytes, scan);
  const { rewritten, out } = rewriteScanned(exchange, message, bytes, scan);
  return { kind: 'response', out, dataBytes: bytes.length, changed: rewritten.changed, action: rewritten.action, message: rewritten.message, bytes, sellerMessage: message };
}

/**
 * The verdict for data `bytes` (its scan `scan`) whose message object, or its `error`,
 * has more than 1000 members (wide-answer.ts), told without parsing it: a request or
 * notification as the scan reads one (every key plain, no `result` or `error`, no name
 * repeated, a method name: json-value-at.ts isMethodName) is forwarded unread, as one of any
 * width was before (a request or notification is not judged by its other names); anything else
 * is refused as a response the gateway does not read: `foreign` on a request's stream (the
 * stream ends `upstream_not_mcp`, as a JSON body so wide is refused: json-stage.ts), never
 * `kindless`; `unsolicited` where no request awaits a response (dropped).
 */
function wideVerdict(exchange: Exchange, bytes: Buffer, scan: JsonScanSummary): EventDataVerdict {
  const members = scan.members!; // a message object (wide-answer.ts isWideMessage)
  if (members.plainKeys && !members.hasResult && !members.hasError && !scan.repeatedName && isMethodName(bytes, members.method)) return { kind: 'forward', bytes, scanned: scan };
  return exchange.rpc.kind === 'request' ? { kind: 'foreign', dataBytes: bytes.length, wide: true } : { kind: 'unsolicited', dataBytes: bytes.length };
}

/**
 * The verdict for data `bytes` that is no JSON text but that a lenient host reads as `value`
 * (mcp/lenient-json.ts: `NaN`, `Infinity`, `-Infinity` outside strings read as numbers;
 * NOT_LENIENT_JSON when it cannot): on a request's stream `foreign` (never forwarded,
 * upstream_not_mcp for the request's id; a long-lived stream drops it), on the standalone GET
 * stream `unsolicited` (dropped `get_stream_response`), when `value` is a JSON-RPC response as
 * such a host reads one: an object with a `result` or an `error`, or an `id` and no `method`
 * (rewrite.ts claimsAnswer), or an array holding one or an element that is not an
 * object. The request's own response is refused too: the gateway cannot read, bound or
 * rewrite it, and a host that reads it gets an answer past them. Anything else (a request or
 * notification with such a literal, text) is forwarded as the seller sent it, as before.
 *
 * Why: the gateway forwarded such data unread ("data is not required to be JSON"), while
 * Python's `json` and pydantic, the MCP Python SDK's parser, read it as a message. Reported
 * failure (a new user's trial 8, F2): a response for another id with `"score":NaN` went out on
 * a call's stream, one on the standalone GET stream too, and one for the call's own id went out
 * un-normalized, followed by the gateway's `upstream_reset` for the same id
 * (test/regressions/sse-nan-response-forwarded.test.ts).
 */
function lenientVerdict(exchange: Exchange, value: unknown, bytes: Buffer): EventDataVerdict {
  const { rpc } = exchange;
  const response = Array.isArray(value) ? value.some((m) => !isJsonObject(m) || claimsAnswer(m)) : isJsonObject(value) && claimsAnswer(value);
  if (!response) return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
  return rpc.kind === 'request' ? { kind: 'foreign', dataBytes: bytes.length } : { kind: 'unsolicited', dataBytes: bytes.length };
}

/**
 * The verdict for a message parsed from `bytes` (its scan `scan`) that is not the response to
 * the request, or repeats a member name: `foreign` when it claims a response or names no
 * method (isForeignResponse, rewrite.ts claimsAnswer), or repeats a name and is a response or
 * names no method as a Go host reads it (mcp/repeated-names.ts: its `result` or `error` named
 * in any case, claimsResponseInAnyCase; `{"jsonrpc":"2.0","ID":999}`, or
 * `"method":"x","METHOD":""`: lacksMethodInAnyCase; such a message repeats a name), else
 * `forward`.
 */
function parsedVerdict(exchange: Exchange, message: unknown, bytes: Buffer, scan: JsonScanSummary): EventDataVerdict {
  const { rpc } = exchange;
  const foreign =
    isForeignResponse(exchange, message, bytes, scan.members) ||
    (isJsonObject(message) && (claimsResponseInAnyCase(message) || (rpc.kind === 'request' && lacksMethodInAnyCase(message))) && repeatsMemberName(scan, message));
  return foreign ? { kind: 'foreign', dataBytes: bytes.length } : { kind: 'forward', bytes, scanned: scan };
}

/**
 * True when `message`, on the stream answering the exchange's single request (`rpc.kind`
 * 'request'), is an object with a `result` or an `error` member that is not the response to
 * the request (rewrite.ts claimsResponse), or one naming no method (rewrite.ts lacksMethod: an
 * id-only message, or no message at all; claimsAnswer covers both). A batch's stream carries
 * several ids and is judged by the same rule against each of them, in sse-stage.ts (batch-answers.ts BatchAnswers.take:
 * `foreign`); an array is not judged here (batchVerdict judges each element); nor is the
 * standalone GET stream (not a request's), where every response is refused (standaloneVerdict).
 *
 * Why it must not reach the host: a client matches a response to its pending request by id
 * alone, so a seller could answer call B on call A's stream, past B's own limits and
 * rewrite (MCP 2025-03-26 Streamable HTTP: a POST's stream carries the response to that
 * POST's request, and its other messages "SHOULD relate to the originating client
 * request"). Reported failure (a new user's trial): an SDK client with two concurrent calls
 * routed such a 200 KB response to call B, whose tool had a 2,000-byte limit, undeduped,
 * while B's own exchange was logged host_aborted
 * (test/regressions/sse-response-for-another-id.test.ts).
 */
export function isForeignResponse(exchange: Exchange, message: unknown, bytes: Buffer, members: TopMembers | undefined): boolean {
  if (exchange.rpc.kind !== 'request' || !isJsonObject(message)) return false;
  return claimsAnswer(message) && !isResponseToExchange(exchange, message, bytes, members);
}

// Why a request's stream judges every message that claims a response (rewrite.ts
// claimsResponse), whatever else it holds:
// True when the JSON-RPC message object `message` is refused on a request's stream unless it
// is the response to the request (the caller checks that: rewrite.ts isResponseToExchange, or
// its exact check for a batch's element, array-answer.ts judgeArrayAnswer): it has a `result` or an
// `error` member, whatever its `id`: another id (a client routes it by that id), both
// members (no valid response, whatever its id: JSON-RPC 2.0 §5;
// test/regressions/seller-response-with-result-and-error.test.ts), or no `id` at all
// (JSON-RPC 2.0 §5: a response has one; no client can route it, and a client that reads a
// POST's stream for the message with `result` or `error` would take it for its answer, past
// the rewrite). Reported failure (a reviewer, 2026-12-03): a message with both members and no
// `id` went out whenever the raw fast path left its block unparsed, and one with either
// member and no `id` was forwarded on every path
// (test/regressions/sse-result-and-error-without-id-forwarded.test.ts). Ids compare exactly, as
// the JSON path's answersExchange does: `"1"` is not `1`, `null` is not either, a number as
// written, so `9007199254740992` is not `9007199254740993`
// (test/regressions/response-id-compared-as-double.test.ts).
//
// A `method` member beside `result` or `error` changes nothing: such a message is neither a
// request or notification (JSON-RPC 2.0 §4 has no `result` or `error`) nor a response (§5
// has no `method`), and a client that looks for `result`/`error` first takes it for the
// response to the call with its id. Only a message without `result` and `error` is a request
// or notification, forwarded. Reported failure (a reviewer): `{"id":8,"method":...,"result":...}`
// on request 7's stream was forwarded
// (test/regressions/sse-method-and-result-for-another-id-forwarded.test.ts). With the request's
// own id too: no response (rewrite.ts matchesRequestAsParsed, json-stage.ts answersExchange;
// a new user's trial, 2026-12-03: the SDK client timed out on it on SSE and failed with a
// ZodError on it as JSON: test/regressions/method-and-result-for-own-id-passed-as-answer.test.ts).

/**
 * Data that is valid JSON but not an object: the response when it is a batch (an array)
 * holding the response to the request, as a JSON body holding it is (array-answer.ts
 * judgeArrayAnswer, the one judgement of both paths): on a host's revision with batches
 * (2025-03-26: "These responses MAY be batched") the answer, which ends the stream and goes
 * out as the seller's bytes (batches are never rewritten: rewrite.ts); `foreign` when it holds
 * a response to another id or an element that is no object, or when the host's revision has
 * no batches (2025-06-18 on; a resumed stream's revision is its token's), then with the cause
 * `batch_removed` for the error's message. Anything else (requests and notifications only, a
 * scalar) is forwarded. Sources: array-answer.ts.
 */
function batchVerdict(exchange: Exchange, text: () => string, bytes: Buffer, names: NameFacts): EventDataVerdict {
  if (exchange.rpc.kind !== 'request' || firstByte(bytes) !== LBRACKET) return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
  const message: unknown = JSON.parse(text());
  if (!Array.isArray(message)) return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
  const held = judgeArrayAnswer(exchange, message, bytes, names);
  if (held === 'answer') return unchangedResponse(bytes, message);
  if (held === 'batch_removed') return { kind: 'foreign', dataBytes: bytes.length, cause: 'batch_removed' };
  return held === 'foreign' ? { kind: 'foreign', dataBytes: bytes.length } : { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
}

/**
 * The verdict on the standalone GET stream (the exchange's `rpc.kind` 'none': a GET without
 * `Last-Event-ID`, or one resuming that stream with its token; routing/handler.ts
 * rpcOfResumedStream), and on the stream answering a POSTed notification or JSON-RPC response
 * (`rpc.kind` 'notification', resumed or not: no request awaits a response there either; a new
 * user's trial 8, F4: test/regressions/notification-answer-carries-response-forwarded.test.ts),
 * for JSON data `bytes` (its scan `scan`, whose `members` are undefined when not an
 * object): `unsolicited` when it is a JSON-RPC response ({@link isUnsolicitedResponse}) or an
 * array holding one, else `forward`. Parsed only when the scan cannot tell: an array, or an
 * object with a key written with an escape.
 *
 * Why: MCP Streamable HTTP (2025-03-26, 2025-06-18, "Listening for Messages from the Server"):
 * on the stream a GET opens, "The server MUST NOT send a JSON-RPC response on the stream
 * unless resuming a stream associated with a previous client request." A client matches a
 * response to its pending call by id alone, whatever stream brought it. Reported failure (a
 * new user's trial: a seller answered a pending call on the standalone GET stream): the seller
 * held back its POST answer to `tools/call` id 1 and pushed a ~42 KB response for id 1 on the
 * GET stream; the MCP SDK client took it as its call's result, 4x the tool's 10,000-byte limit,
 * its duplicated text not removed (test/regressions/get-stream-answers-pending-call.test.ts).
 */
function standaloneVerdict(text: () => string, bytes: Buffer, scan: JsonScanSummary): EventDataVerdict {
  const members = scan.members;
  let unsolicited: boolean;
  if (members === undefined) {
    if (firstByte(bytes) !== LBRACKET) return { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
    const message: unknown = JSON.parse(text());
    // An element that is not an object (a nested array) is no message either: dropped as a response would be.
    return Array.isArray(message) && holdsResponse(message) ? { kind: 'unsolicited', dataBytes: bytes.length } : { kind: 'forward', bytes, scanned: NO_TOP_OBJECT };
  }
  if (members.plainKeys) {
    // A `result` or `error` (or a `method`) named in another case is a repeat (`repeatedName`):
    // parsed. A message naming no method (an id-only message, or none at all: rewrite.ts
    // lacksMethod): two property reads and two bytes (json-value-at.ts isMethodName).
    unsolicited = members.hasResult || members.hasError || !isMethodName(bytes, members.method) || (scan.repeatedName && isUnsolicitedResponse(JSON.parse(text())));
  } else {
    unsolicited = isUnsolicitedResponse(JSON.parse(text()));
  }
  return unsolicited ? { kind: 'unsolicited', dataBytes: bytes.length } : { kind: 'forward', bytes, scanned: scan };
}

/**
 * True when `message` (a parsed JSON-RPC message) is a response as a client reads one: an
 * object with a `result` or an `error` member, whatever its `id` (absent or `null`
 * included) and whether or not a `method` is beside them (JSON-RPC 2.0 §4 gives a request or
 * notification neither member; a client that looks for them first takes such a message for
 * a response: rewrite.ts claimsResponse), the member named in any case: a Go host reads
 * `"Result"` and `"reſult"` as `result` (mcp/repeated-names.ts claimsResponseInAnyCase; a new
 * user's trial 8, F3 and F3 (residual): test/regressions/case-variant-member-names-accepted.test.ts,
 * unicode-fold-member-names-accepted.test.ts); or an object naming no method, in any case
 * (mcp/repeated-names.ts lacksMethodInAnyCase: with an `id` the MCP Go SDK reads it as a
 * response with that id, hostile trials:
 * test/regressions/id-only-message-on-request-stream-passes.test.ts; without one it is no
 * JSON-RPC message at all, and an empty `method` names none, a review:
 * test/regressions/seller-message-without-kind-forwarded.test.ts). On the standalone GET
 * stream no response is allowed (standaloneVerdict).
 */
export function isUnsolicitedResponse(message: unknown): boolean {
  return isJsonObject(message) && readsAsNoRequest(message);
}

/** The response verdict for data the rewrite leaves as the seller wrote it. */
function unchangedResponse(bytes: Buffer, message: unknown): EventDataVerdict {
  return { kind: 'response', out: bytes, dataBytes: bytes.length, changed: false, action: 'none', message, bytes, sellerMessage: message };
}

/** The data's first character after JSON whitespace starts an array or an object. */
function startsAsContainer(bytes: Buffer): boolean {
  const c = firstByte(bytes);
  return c === LBRACKET || c === LBRACE;
}

/** The data's first byte after JSON whitespace (undefined when none): a bracket's byte comes only from that bracket. */
function firstByte(bytes: Buffer): number | undefined {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return c;
  }
  return undefined;
}
