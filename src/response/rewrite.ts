/**
 * The rewrite stage: normalizes the tool result inside the seller's answer to the exchange's
 * own request (ARCHITECTURE §1.3, §5). Shared by the JSON and SSE paths.
 *
 * Applies only when the host may read `structuredContent` and `dedupe_text` is not `off`
 * (`exchange.normalize`), and only to the JSON-RPC response carrying the request's id.
 * Where a `CallToolResult` sits in that response depends on the method (MCP spec texts):
 *
 * | request          | revision      | the CallToolResult                                           |
 * | ---------------- | ------------- | ------------------------------------------------------------ |
 * | `tools/call`     | every         | `result` (unless `resultType` says it is not the tool's result: |
 * |                  |               | `"task"` = a task handle, `"input_required"` = MRTR)          |
 * | `tasks/result`   | every         | `result` ("the result structure matches the original request |
 * |                  |               | type"; it carries `_meta["io.modelcontextprotocol/related-task"]`) |
 * | `tasks/get`      | >= 2026-07-28 | `result.result`, only when `result.status` is `"completed"`   |
 * |                  |               | (tasks extension, SEP-2663: `CompletedTask.result`)           |
 *
 * Nowhere else: a task handle (`CreateTaskResult`), a `tasks/get` of a working, failed or
 * cancelled task, a 2025-11-25 `tasks/get` (a bare `Task`, no result), `tasks/list`,
 * notifications (`notifications/tasks` also inlines results, on the subscriptions stream:
 * not a response to the request), list results with their `nextCursor`, and batches all go
 * out as the seller's bytes. Everything not rewritten is returned unchanged
 * (`changed: false`), so the caller sends the seller's original bytes.
 *
 * Number precision: a changed message is re-serialized by the caller (`JSON.stringify`), so
 * every number outside strings (in `structuredContent`, `_meta`...) goes through a
 * JavaScript double; the top-level `id` alone is written back as the seller's bytes
 * (reserialized-message.ts: `7.0` stays `7.0`). When the seller's raw message has a number
 * that can't survive a double, the id included ({@link hasLossyNumber}, over the whole text:
 * `9007199254740993` became `9007199254740992`,
 * test/regressions/big-number-precision.test.ts), nothing is rewritten and the seller's bytes
 * go out. Numbers inside text items are checked by `normalizeToolResult`.
 */
import { deliversTaskResultInTasksGet } from '../mcp/revision.js';
import type { Exchange } from '../exchange.js';
import { isJsonObject, isJsonRpcErrorObject, ownValue } from '../mcp/extract.js';
import { normalizeToolResult } from '../mcp/normalize.js';
import { hasLossyNumber } from '../mcp/json-numbers.js';
import type { TopMembers } from '../mcp/json-scan.js';
import { writtenIdRanges } from '../mcp/written-ids.js';
import { readsAsNoRequest } from '../mcp/repeated-names.js';
import { isRequestId, jsonValueIs } from './json-value-at.js';
import { LIFT_LEVELS, liftOverJsonBound, recordLiftSkippedForRoom } from './rewrite-room.js';

/** Methods whose response `result` is a `CallToolResult`. */
export const TOOL_RESULT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'tasks/result']);

/** The tasks extension's polling method: carries the final `CallToolResult` once completed (2026-07-28 on). */
export const TASKS_GET_METHOD = 'tasks/get';


export interface RewriteOutcome {
  changed: boolean;
  /** The message to send: the input itself when unchanged. */
  message: unknown;
  /** `deduped` or `lifted` when changed. */
  action: 'none' | 'deduped' | 'lifted';
  /**
   * For a lift: the lifted text as written, the object it became (`structuredContent`) and the
   * text's JSON values as its bounds check counted them (undefined when not counted), for the
   * caller that re-serializes the answer (scanned-message.ts rewriteScanned:
   * mcp/reserialized-lift.ts).
   */
  lifted?: { readonly text: string; readonly value: Record<string, unknown>; readonly nodes: number | undefined };
}

/** The outcome of a rewrite not made: `message` as it came. */
export const UNCHANGED = (message: unknown): RewriteOutcome => ({ changed: false, message, action: 'none' });

/**
 * True when `message`, parsed from the JSON text `bytes`, is the JSON-RPC response (result or
 * error) to the exchange's request: an object with exactly one of `result` and `error`
 * (JSON-RPC 2.0 §5: both is no valid response) whose `id` is the request's id exactly
 * (json-value-at.ts isRequestId). A number is compared as written in `bytes`, not as parsed:
 * `JSON.parse` reads `9007199254740992` and `9007199254740993` as one double (a new user's
 * trial: test/regressions/response-id-compared-as-double.test.ts). `members`: the scan's
 * top-level members of `bytes` when the caller has them (their `id` range is used when every
 * key is written plain), else the id is found by a walk (mcp/written-ids.ts).
 */
export function isResponseToExchange(exchange: Exchange, message: unknown, bytes: Buffer, members: TopMembers | undefined): boolean {
  return matchesRequestAsParsed(exchange, message) && idWrittenAsRequests(exchange, bytes, members);
}

/**
 * For a message whose `id` is the request's as parsed: whether it is the request's id as
 * written in `bytes` too (json-value-at.ts isRequestId; `members` as for
 * {@link isResponseToExchange}). A string or null is exact as parsed; a number only proved
 * the same double.
 */
function idWrittenAsRequests(exchange: Exchange, bytes: Buffer, members: TopMembers | undefined): boolean {
  if (typeof exchange.rpc.id !== 'number') return true;
  return isRequestId(bytes, members?.plainKeys ? members.id : writtenIdRanges(bytes)[0], exchange.rpc);
}

/**
 * {@link isResponseToExchange} on the parsed message alone: the same shape and the same id as
 * a JavaScript value. Exact for a string or null id; for a number a necessary condition only
 * (two numbers that read as one double pass). A message with a `method` beside `result` or
 * `error` is no response, whatever its id (JSON-RPC 2.0 §4, §5; a new user's trial,
 * 2026-12-03: test/regressions/method-and-result-for-own-id-passed-as-answer.test.ts), and
 * neither is one that is not well formed ({@link isWellFormedResponse}). For
 * {@link rewriteResponse}, whose callers have decided the response exactly first.
 */
export function matchesRequestAsParsed(exchange: Exchange, message: unknown): boolean {
  if (exchange.rpc.kind !== 'request' || !isJsonObject(message)) return false;
  return message.id === exchange.rpc.id && hasResponseMembers(message) && isWellFormedResponse(message);
}

/**
 * Whether the response `m` (its members a response's: {@link hasResponseMembers}) is a
 * well-formed JSON-RPC 2.0 response of MCP: `jsonrpc` exactly `"2.0"` (JSON-RPC 2.0 §5), and
 * either a `result` that is an object (every MCP result is one: `null`, a string, an array are
 * none) or an `error` that is an object with an integer `code` and a string `message` (§5.1;
 * mcp/extract.ts isJsonRpcErrorObject, the test a host's responses get: request/peek.ts).
 *
 * The one judgement of a seller's response on every path: the JSON body (json-stage.ts, the
 * scan's fast path through {@link scannedResponseWellFormed}), a request's SSE event
 * (sse-message.ts), a batch's answer (batch-answers.ts). A response to the request that is
 * not well formed answers it with `upstream_not_mcp`. Reported failure (a new user's trial 8,
 * F5, F13): `"error":{"code":"x","message":5}`, `"result":null`, and on SSE `"jsonrpc":"1.0"`
 * or no `jsonrpc`, were forwarded as the call's answer, logged ok; over SSE the MCP SDK client
 * dropped the message and the call hung until its own timeout
 * (test/regressions/malformed-response-for-own-id-forwarded.test.ts).
 */
export function isWellFormedResponse(m: Record<string, unknown>): boolean {
  if (ownValue(m, 'jsonrpc') !== '2.0') return false;
  return Object.hasOwn(m, 'result') ? isJsonObject(m.result) : isJsonRpcErrorObject(ownValue(m, 'error'));
}

/**
 * {@link isWellFormedResponse} from the scan's top-level members of `bytes` (plain keys, no
 * repeated name; exactly one of `result` and `error`, no `method`): the `jsonrpc` value read
 * from its range (json-value-at.ts jsonValueIs), `result` an object when the scan closed it as
 * one (`resultEnd`, the last `result`'s). Undefined for an `error`, whose members the scan does
 * not record: the caller judges the parsed message (an error answer is small and rare; a
 * result pays no new pass: two property reads).
 */
export function scannedResponseWellFormed(bytes: Buffer, members: TopMembers): boolean | undefined {
  if (!jsonValueIs(bytes, members.jsonrpc, '2.0')) return false;
  if (members.hasError) return undefined;
  return members.resultEnd !== undefined;
}

/**
 * Whether the message object `m`, on the stream answering the exchange's single request,
 * claims to be its answer or is no message a host can take for anything but one: it has a
 * `result` or an `error` ({@link claimsResponse}), or it names no method ({@link lacksMethod}:
 * with an `id`, a response as a Go host reads it; without one, no JSON-RPC message at all).
 * Such a message is the response to the request, well formed, or it ends the stream with
 * `upstream_not_mcp`, as a JSON body gets for it. Reported failures: `{"jsonrpc":"2.0","id":1}`
 * was `upstream_not_mcp` as a JSON body and ended the SSE stream as `upstream_reset` (a new
 * user's trial 8, F13: test/regressions/malformed-response-for-own-id-forwarded.test.ts);
 * `{"jsonrpc":"2.0","id":999}` on request 1's stream went out (hostile trials:
 * test/regressions/id-only-message-on-request-stream-passes.test.ts); `{"jsonrpc":"2.0"}` and
 * `{"jsonrpc":"2.0","id":999,"method":""}` went out (a review:
 * test/regressions/seller-message-without-kind-forwarded.test.ts).
 */
export function claimsAnswer(m: Record<string, unknown>): boolean {
  return claimsResponse(m) || lacksMethod(m);
}

/**
 * Whether the JSON-RPC message object `m` names a method: a `method` member whose value is a
 * non-empty string. Only such a message is a request or a notification (JSON-RPC 2.0 §4:
 * `method` is "A String containing the name of the method to be invoked"; no MCP method is
 * empty), and the MCP Go SDK reads an empty method as none (internal/jsonrpc2 DecodeMessage:
 * `wire.Method != ""`; `null` decodes to an empty Go string too). The scan's form:
 * json-value-at.ts isMethodName.
 */
export function namesMethod(m: Record<string, unknown>): boolean {
  const method = ownValue(m, 'method');
  return typeof method === 'string' && method !== '';
}

/**
 * Whether the JSON-RPC message object `m` names no method ({@link namesMethod}: no `method`
 * member, or one that is not a non-empty string: `""`, `null`, a number), whatever else it
 * has: no request or notification then (JSON-RPC 2.0 §4), so a response or nothing (§5).
 *
 * - With an `id` (any value): an id-only message. A client that matches by id takes it for
 *   the answer to its call with that id: the MCP Go SDK reads a message with a non-null id
 *   and no method as a response (internal/jsonrpc2 DecodeMessage), and without `result` and
 *   `error` completes the call with an empty result.
 * - Without one (`{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","params":{}}`,
 *   `{"jsonrpc":"2.0","method":""}`): no JSON-RPC message of any kind; MCP SDK clients fail
 *   to parse it.
 *
 * Either way it is judged as a response wherever the gateway judges responses (claimsAnswer;
 * holdsResponse; batch-answers.ts; the scan's members where they tell: no `result`, `error`
 * or method name): where a request is answered it is no answer, where none is it is dropped or
 * refused. Its names in any case: mcp/repeated-names.ts lacksMethodInAnyCase. A `method`
 * member of any value beside `result` or `error` still makes a message no response
 * ({@link hasResponseMembers}). Reported failures (hostile trials):
 * `{"jsonrpc":"2.0","id":999}` reached the host on request 1's SSE stream, on the standalone
 * GET stream, on a POSTed notification's stream and in its JSON answer, and in a batch's answer
 * (test/regressions/id-only-message-on-request-stream-passes.test.ts); (a review) so did
 * `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","params":{}}`, and, judged a server request and a
 * notification, `{"jsonrpc":"2.0","id":999,"method":""}` and `{"jsonrpc":"2.0","method":""}`
 * (test/regressions/seller-message-without-kind-forwarded.test.ts).
 */
export function lacksMethod(m: Record<string, unknown>): boolean {
  return !namesMethod(m);
}

/**
 * Whether the JSON-RPC message object `m` claims to answer a request: it has a `result` or an
 * `error` member (JSON-RPC 2.0 §5). Such a message is judged as a response everywhere (a
 * request's and a batch's stream, a batch's JSON answer, the standalone GET stream), whatever
 * else it holds; anything else is a request or a notification when it names a method
 * ({@link namesMethod}), else no message ({@link lacksMethod}).
 */
export function claimsResponse(m: Record<string, unknown>): boolean {
  return Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error');
}

/**
 * Whether the parsed JSON value `v` is no request or notification as a host reads it
 * (mcp/repeated-names.ts readsAsNoRequest: a response, a `result` or an `error`, named in any
 * case: a Go host reads `"Result"` and `"reſult"` as `result`; or a message naming no method,
 * {@link lacksMethod}, in any case: an id-only message or none at all) or an array holding
 * one or holding an element that is not an object (no JSON-RPC message; a lenient client may
 * flatten a nested array): what may not pass where no request awaits a response, the
 * standalone GET stream and the answer to a POSTed notification or JSON-RPC response
 * (sse-message.ts standaloneVerdict, json-stage.ts).
 */
export function holdsResponse(v: unknown): boolean {
  if (Array.isArray(v)) return v.some((m) => !isJsonObject(m) || readsAsNoRequest(m));
  return isJsonObject(v) && readsAsNoRequest(v);
}

/**
 * Whether `m`'s members are a response's (its `id` is the caller's to judge): exactly one of
 * `result` and `error`, and no `method` member, whatever its value (an empty one too: JSON-RPC
 * 2.0 §4, §5: a request has no `result` or `error`, a response no `method`; the TypeScript
 * SDK reads `"method":""` as a method; a new user's trial, 2026-12-03:
 * test/regressions/method-and-result-for-own-id-passed-as-answer.test.ts).
 */
export function hasResponseMembers(m: Record<string, unknown>): boolean {
  return Object.hasOwn(m, 'result') !== Object.hasOwn(m, 'error') && !Object.hasOwn(m, 'method');
}

/** What a scan of the raw text already proved about it (the JSON stage's json-scan.ts summary). */
export interface RawTextFacts {
  /**
   * Every number outside strings round-trips (json-scan.ts `numberMayBeLossy: false`): the
   * exact {@link hasLossyNumber} pass over the raw text is skipped.
   */
  readonly numbersRoundTrip?: boolean;
  /**
   * The seller's exact text of the tool result's `structuredContent` in the raw text (at the
   * `CallToolResult`'s location, {@link toolResultLocation}: json-scan.ts members for `result`,
   * mcp/tool-result-ranges.ts for a `tasks/get`'s `result.result`), for the fast copy check of
   * `normalizeToolResult` and its repeated-key rule (normalize.ts summarizeCopies). A function
   * is asked only when a dedupe needs it (normalize.ts NormalizeOptions.structuredContentText).
   */
  readonly structuredContentText?: string | (() => string | undefined) | undefined;
  /**
   * The raw text's JSON values (its scan's node count, json-scan.ts): a lift whose message
   * would hold more than `max_json_nodes` with the lifted object's is skipped
   * (rewrite-room.ts liftOverJsonBound). Unknown: only the depth is checked.
   */
  readonly messageNodes?: number | undefined;
  /**
   * The UTF-8 length of the tool result's `content[index].text` JSON string as written in the
   * raw text, where the caller located it (normalize.ts NormalizeOptions.writtenTextBytes), at
   * the `CallToolResult`'s location as {@link structuredContentText}.
   */
  readonly writtenTextBytes?: ((index: number) => number | undefined) | undefined;
}

/**
 * Normalizes the tool result in `message`, the parsed form of `raw` when given: the exact JSON
 * text it was parsed from (the JSON path's body bytes, the SSE path's event data). Only the
 * response to the request is rewritten: the caller decides that with {@link
 * isResponseToExchange} (its id compared exactly, which needs the raw text); here the parsed
 * id is checked again.
 *
 * A rewrite that would otherwise apply is refused (`changed: false`) when `raw` has a lossy
 * number outside strings (unless `facts.numbersRoundTrip`); checked only after normalization
 * found something to change, so messages left alone cost nothing extra. Without `raw` no such
 * check is made: every stage that re-serializes the outcome must pass it. A lift refused so is
 * recorded (`exchange.textNotLifted = 'lossy_number'`; hostile trial 39, item 2:
 * test/regressions/reserialized-lift-skipped-silently-for-value-outside-text.test.ts).
 *
 * A tool result left unlifted because a text that may hold its JSON was over a bound
 * (normalize.ts `NormalizeOutcome.textNotLifted`) is recorded on the exchange
 * (`exchange.textNotLifted`: the exchange line's `text_not_lifted`, the metric
 * `adcp_gateway_texts_not_lifted_total`). This is the one place the JSON and SSE paths decide
 * that a result is not lifted for a text bound: the scan-based lift (lift-splice.ts) lifts or
 * declines, never decides "not lifted" for a text bound. (A lift made here or there that the stage then skips
 * because its output would not fit is recorded by the stage: rewrite-room.ts
 * recordLiftSkippedForRoom.) Source: a reviewer, "a text over the bounds was silently not lifted".
 *
 * A lift whose message would be over `max_json_depth` or `max_json_nodes` (the lifted object's
 * depth below its place, its values added to `facts.messageNodes`: rewrite-room.ts
 * liftOverJsonBound) is not made (`changed: false`), and recorded as one skipped for room
 * (`text_not_lifted`: the bound's config key), as lift-splice.ts does on the scan path. Source:
 * a new user's hostile trial, F1 (test/regressions/lift-exceeds-json-depth-and-nodes.test.ts).
 */
export function rewriteResponse(exchange: Exchange, message: unknown, raw?: string | Uint8Array, facts: RawTextFacts = {}): RewriteOutcome {
  const { rpc } = exchange;
  if (!exchange.normalize || rpc.method === undefined) return UNCHANGED(message);
  const location = toolResultLocation(rpc.method, exchange.protocolVersion);
  // The caller decided that this is the response (isResponseToExchange, the id exactly).
  if (location === undefined || !matchesRequestAsParsed(exchange, message)) return UNCHANGED(message);
  const m = message as Record<string, unknown>;
  const result = Object.hasOwn(m, 'result') ? m.result : undefined;
  if (!isJsonObject(result)) return UNCHANGED(message);

  let toolResult: unknown;
  if (location === 'result') {
    // A tools/call answered with a task handle or an MRTR input request is not the tool's result.
    if (Object.hasOwn(result, 'resultType') && result.resultType !== 'complete') return UNCHANGED(message);
    toolResult = result;
  } else {
    if (result.status !== 'completed' || !Object.hasOwn(result, 'result')) return UNCHANGED(message);
    toolResult = result.result;
  }

  const { limits } = exchange;
  const { structuredContentText, writtenTextBytes } = facts;
  const out = normalizeToolResult(toolResult, {
    maxTextBytes: limits.max_response_bytes,
    maxDepth: limits.max_json_depth,
    maxNodes: limits.max_json_nodes,
    ...(structuredContentText !== undefined ? { structuredContentText } : {}),
    ...(writtenTextBytes !== undefined ? { writtenTextBytes } : {}),
  });
  if (!out.changed) {
    // Not lifted because of a bound: the JSON and SSE stages both decide it here (lift-splice.ts declines every result it does not lift).
    if (out.textNotLifted !== undefined) exchange.textNotLifted = out.textNotLifted;
    return UNCHANGED(message);
  }
  // The caller would re-serialize the whole message through doubles: refuse if that loses
  // digits. A lift refused so says why (`text_not_lifted`; hostile trial 39, item 2: it was
  // silent); a dedupe has no such field.
  if (raw !== undefined && !facts.numbersRoundTrip && hasLossyNumber(raw)) {
    if (out.action === 'lifted') exchange.textNotLifted = 'lossy_number';
    return UNCHANGED(message);
  }
  // A lifted message over max_json_depth / max_json_nodes: skipped, the seller's bytes go out (rewrite-room.ts).
  if (out.liftedJson !== undefined) {
    const over = liftOverJsonBound(LIFT_LEVELS[location], out.liftedJson, facts.messageNodes, limits);
    if (over !== undefined) {
      recordLiftSkippedForRoom(exchange, out.action, over);
      return UNCHANGED(message);
    }
  }
  const nextResult = location === 'result' ? out.result : copyReplacing(result, 'result', out.result);
  const outcome: RewriteOutcome = { changed: true, message: copyReplacing(m, 'result', nextResult), action: out.action };
  if (out.liftedText !== undefined) {
    // normalize.ts appends the lifted object as the tool result's `structuredContent`.
    const value = (out.result as Record<string, unknown>).structuredContent as Record<string, unknown>;
    outcome.lifted = { text: out.liftedText, value, nodes: out.liftedJson?.nodes };
  }
  return outcome;
}

/**
 * Where the `CallToolResult` sits in the response to `method` for a host on `protocolVersion`:
 * `result`, `result.result` (a completed task in a 2026-07-28 `tasks/get`), or nowhere.
 */
export function toolResultLocation(method: string, protocolVersion: string): 'result' | 'result.result' | undefined {
  if (TOOL_RESULT_METHODS.has(method)) return 'result';
  if (method === TASKS_GET_METHOD && deliversTaskResultInTasksGet(protocolVersion)) return 'result.result';
  return undefined;
}

/** A copy of `obj` (own keys, in order) with `key` replaced. Never Object.assign seller data (ARCHITECTURE §5 prototype trap). */
function copyReplacing(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const next: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    Object.defineProperty(next, k, { value: k === key ? value : obj[k], enumerable: true, writable: true, configurable: true });
  }
  return next;
}
