/**
 * Reads the JSON-RPC facts the gateway needs from the host's request body (id, method,
 * tool name, a `tasks/result`'s taskId) without changing it: the original bytes are what is
 * forwarded.
 *
 * Two readings, one decision ({@link decide}):
 * - the parse: `JSON.parse` of the whole body. It reads a body under
 *   {@link PEEK_SCAN_MIN_BYTES}, every body the scan leaves undecided, and is the reference;
 * - the scan, for larger bodies: the body's structure scan in WebAssembly records the
 *   top-level members (mcp/json-scan.ts scanTopObject); the keys a peek reads are found by
 *   comparing their bytes (mcp/text-members.ts plainMemberIndexes, every key decoded only
 *   when one is escaped; one key of `params`: keptMember, only an escaped key decoded) and only `method`, a string `id`, `params.name` of a `tools/call` and
 *   `params.taskId` of a `tasks/result` are decoded; an object of more members than the scan's
 *   table records (64: at the top, in a batch element, in the `params` of a `tools/call` or a
 *   `tasks/result`, in a response's `error`) is walked for the members a peek reads
 *   (request/message-members.ts readObjectMembers); it leaves undecided invalid JSON and a body
 *   over a bound. Both give the same answer for every body (test/unit/peek-scan.test.ts
 *   compares them).
 *
 * Both readings refuse a message object, the `params` of its `tools/call`, `tasks/result` or `notifications/cancelled`,
 * or its `error`, of more than MAX_MESSAGE_MEMBERS (1000) members, before any other rule of
 * the message: `Invalid Request: the message has 99993 members, more than the 1000 the gateway
 * reads.` (`"params" has …`, `"error" has …`), for the request's id as a names refusal carries
 * it (null when `id` is written twice, for a host's response, or when more than 1000 of its
 * keys may be names and its id is not read); a batch element so wide is refused as any other.
 * The scan reading counts the members in the scan and walks the object's bytes, never
 * `JSON.parse`: before, such an object was left to `JSON.parse` of the whole body, 200-580 ms
 * of the event loop for a 1.09 MB body of 99,993 members (a hostile trial 54:
 * test/regressions/wide-request-object-stalls-event-loop.test.ts; the bound's reasons:
 * message-members.ts).
 *
 * Both readings also refuse a request writing a member the gateway acts on twice or in another
 * case (`"name":"a","Name":"b"` in a `tools/call`'s params; request/repeated-request-names.ts):
 * the scan compares the key bytes of its member table, the parse proves most bodies free of
 * repeats with native searches and reads the keys from the bytes only when they cannot (a
 * hostile new-user trial 11, F1: test/regressions/host-repeated-member-names-bypass-tool-limit.test.ts).
 *
 * Why (issue 5): a large request (a `sync_creatives` with many creatives) was parsed whole,
 * every argument made a JavaScript value, to read three members, with the event loop held
 * meanwhile.
 *
 * Source: gateway issue item 4 ("the gateway reads the JSON-RPC request it forwards so that
 * a limit and an error can be tied to the request"); ARCHITECTURE §3 (refusals); JSON-RPC
 * 2.0 §4 (request object), §5 (response object), §6 (batch).
 */
import { isUtf8 } from 'node:buffer';
import type { BatchRequestRef, RpcPeek } from '../exchange.js';
import { localErrorFormOf } from '../mcp/local-error.js';
import { scanTopObject, TEXT_INVALID, TEXT_OVER_BOUND, type ByteRange, type TextMember } from '../mcp/json-scan.js';
import { peekedCancelledId, type WrittenRequestId } from '../mcp/cancelled-id.js';
import { MAX_MESSAGE_MEMBERS, membersOfScan, objectMembersOf, readObjectMembers, WIDE_MIN_BYTES, wideObjectOf, wideProblem, type ObjectMembers } from './message-members.js';
import { jsonString, jsonStringIs, keptMember, memberIndexes, plainMemberIndexes } from '../mcp/text-members.js';
import { checkJsonBounds, withinJsonBounds, type JsonBoundsLimits } from '../mcp/json-bounds.js';
import { closingQuote, COLON, COMMA, CR, DIGIT_0, DIGIT_9, DOT, LBRACE, LBRACKET, LF, LOWER_E, LOWER_F, LOWER_N, LOWER_T, MINUS, QUOTE, RBRACE, RBRACKET, SPACE, TAB, UPPER_E, isJsonWhitespace } from '../mcp/json-bytes.js';
import { writtenIdRanges } from '../mcp/written-ids.js';
import { idTextOfNumber } from '../mcp/id-text.js';
import { isJsonRpcErrorObject } from '../mcp/extract.js';
import { CANCELLED_PARAMS_NAMES, judgeKeys, mayRepeatNames, namesProblemOfText, PARAMS_NAMES, TOP_NAMES, type NamesProblem } from './repeated-request-names.js';
import type { RequestJsonBounds } from './request-json-bounds.js';
import { BUILTIN_DEFAULTS } from '../config/defaults.js';

/**
 * The peek of a request with no body (GET, DELETE). Not frozen: a frozen object has a hidden
 * class of its own, and it is read where every single-message peek is (exchange.rpc): it has
 * their one shape (RpcPeek: every member written, in one order; a re-read of today's changes,
 * Low: test/regressions/rpc-peek-shapes-differ.test.ts). Its members are readonly to TypeScript.
 */
export const NO_BODY: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined };

/** The method whose `params.taskId` the peek reads (RpcPeek.taskId). */
const TASKS_RESULT = 'tasks/result';
/** The method whose `params.requestId` the gateway reads (mcp/cancelled-id.ts): its `params` are judged as a `tools/call`'s (names, width). */
const CANCELLED = 'notifications/cancelled';

/**
 * The longest `params.taskId` of a `tasks/result` the peek keeps (RpcPeek.taskId), in UTF-16
 * code units (JavaScript string length): a longer one is not kept, and an error the gateway
 * mints for the request then has no `_meta` naming it, rather than echoing a taskId of up to
 * `max_request_bytes` (MCP bounds none; a UUID is 36). Hostile trial 39, item 1.
 */
export const MAX_TASK_ID_CHARS = 1024;

/** `value` when it is a string of at most {@link MAX_TASK_ID_CHARS} characters, else undefined. */
function keptTaskId(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_TASK_ID_CHARS ? value : undefined;
}

export type PeekResult =
  | { ok: true; peek: RpcPeek }
  | { ok: false; kind: 'parse_error' | 'invalid_request'; message: string; id: string | number | null; idText: string | undefined };

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/**
 * Parses a request body (UTF-8 JSON bytes) into a peek.
 * - not well-formed UTF-8 -> `parse_error`, id null ({@link NOT_UTF8_MESSAGE}), judged first;
 * - over `bounds` (depth or nodes; json-bounds.ts, checked first) -> `invalid_request`
 *   ("over max_json_depth (64)"), id null; no bound when `bounds` is undefined;
 * - not JSON -> `parse_error` (JSON-RPC -32700, HTTP 400);
 * - an object writing `jsonrpc`, `id`, `method`, `params`, `result` or `error`, or in a
 *   `tools/call`'s `params` `name`, twice or as a case variant (escaped keys decoded, ASCII
 *   case and Go's `ſ`/`K` folded: Go's encoding/json matches names case-insensitively) ->
 *   `invalid_request`, judged before the rules below: `Invalid Request: the member "name" of
 *   "params" is written twice ("name", "Name"); send it once.`, for the request's id, id null
 *   when `id` is among the members concerned or for a host's response; a batch element so
 *   written is refused as any other (`batch element 1 is not a JSON-RPC message (the member
 *   ...)`). Source: a hostile new-user trial 11, F1 (a seller reading the first copy ran
 *   another tool than the one whose limits the gateway applied:
 *   test/regressions/host-repeated-member-names-bypass-tool-limit.test.ts);
 * - JSON but not a JSON-RPC message ({@link messageProblem}: not an object, no string `method`
 *   on a non-response, an `id` null on a request (MCP: it MUST NOT be null; {@link ID_NULL_PROBLEM}),
 *   `params` not an object or an array, a response with both `result` and
 *   `error` or a malformed `error`) -> `invalid_request` (-32600, HTTP 400), with the id when
 *   one could be read; id null for a host's response (no `method`, a `result` or an `error`):
 *   its id is one of the server's requests, and MCP Streamable HTTP has a refused response's
 *   error carry no id;
 * - an array (JSON-RPC 2.0 §6) -> `batch` (forwarded and bounded, never rewritten) when every
 *   element is a JSON-RPC message by the rules for a single one (a request, a notification or
 *   a host's response) and none is an `initialize` (MCP 2025-03-26, Lifecycle: "The
 *   initialization request MUST NOT be part of a JSON-RPC batch"); an empty array, or one with
 *   an element that is not (a number, a nested array, `{"a":1}`, an invalid id, `params: 5`)
 *   or is an `initialize` -> `invalid_request`, id null, the message naming the first such
 *   element and why: `Invalid Request: batch element 0 is not a JSON-RPC message (a number,
 *   not an object).` Reported failures (a new user's trials: such bodies reached the seller):
 *   test/regressions/batch-invalid-elements-forwarded.test.ts,
 *   params-not-structured-forwarded.test.ts, host-response-result-and-error-forwarded.test.ts,
 *   batch-initialize-forwarded.test.ts. Whether the host's MCP revision has batches at all is
 *   the handler's check (routing/handler.ts): it is a header's.
 *   A batch's peek keeps the ids of its requests (`batchRequestIds`: each element with a
 *   `method` and an `id`, in order; `idText` as for a single request; beside each, the form of
 *   the error it would get alone, from its method and tool name: mcp/local-error.ts
 *   localErrorFormOf, so that a local error answers each request as it would answer it sent
 *   alone, test/regressions/batch-error-loses-tool-warning.test.ts), from which its SSE
 *   stream's end is judged (response/batch-answers.ts; reported failure:
 *   test/regressions/sse-batch-answer-never-ends-cleanly.test.ts) and its answer checked (a
 *   response for another id, a second one for an id, a JSON answer leaving a request
 *   unanswered: `upstream_not_mcp`; a new user's trial, 2026-12-03:
 *   test/regressions/batch-answer-for-other-ids-forwarded.test.ts), and each request's tool
 *   name (`batchToolNames`: `params.name` of a `tools/call`, undefined for any other request,
 *   in order, one per `batchRequestIds` entry; a notification or a host's response has no
 *   answer to bound and no name there), from which its limits are resolved
 *   (config/resolve.ts resolveBatchLimits; a reviewer: a batch escaped its tools' limits,
 *   test/regressions/batch-escapes-tool-limits.test.ts; a notification tightened them:
 *   test/regressions/batch-notification-tightens-tool-limits.test.ts). Read only for batches.
 * A JSON-RPC *response* sent by the host (answer to a server->client request such as
 * `elicitation/create`) is a valid body: it is forwarded as a `notification`-kind peek.
 */
export function peekJsonRpc(body: Buffer, bounds?: JsonBoundsLimits): PeekResult {
  if (!isUtf8(body)) return refusal('parse_error', NOT_UTF8_MESSAGE, null, undefined);
  return body.length < PEEK_SCAN_MIN_BYTES ? peekByParse(body, bounds) : peekByScan(body, bounds) ?? peekByParse(body, bounds);
}

/**
 * The refusal of a body that is not well-formed UTF-8 (node:buffer `isUtf8`: a stray 0xFF, a
 * Latin-1 `é`, an overlong or surrogate encoding, a sequence cut at the end), judged before
 * anything else ({@link peekJsonRpc}), so for every body a peek reads: a single message, a
 * batch, over or under {@link PEEK_SCAN_MIN_BYTES}, whatever its Content-Type (the app reads
 * any as the message: app.ts), and the id of a refusal read before the peek ({@link requestIdOf}).
 *
 * Why: the readings decode the body with U+FFFD in place of each ill-formed sequence, while its
 * bytes are forwarded as they are, so the gateway and the seller could read different
 * messages: `"name":"small_tool<0xFF>"` matched no configured tool for the gateway, which
 * applied the agent's limits, and a seller decoding leniently (dropping bad bytes) ran
 * `small_tool` past its 500-byte limit (a hostile new-user trial 14, L2:
 * test/regressions/host-body-invalid-utf8-skips-tool-limit.test.ts).
 *
 * Which error: `parse_error` (-32700, id null), not `invalid_request`. RFC 8259 §8.1 has JSON
 * text exchanged between systems "MUST be encoded using UTF-8", so such bytes are no JSON text
 * at all: JSON-RPC 2.0 §5.1 gives -32700 for "Invalid JSON was received by the server" and
 * -32600 for "The JSON sent is not a valid Request object", which presumes a JSON text. No id
 * is read from a text that could not be parsed (JSON-RPC 2.0 §5: null "if there was an error in
 * detecting the id").
 *
 * Cost: one `isUtf8` pass (native, simdutf): 0.06-0.08 µs for a 1 KiB `tools/call` (Node 20,
 * best and worst of 5 loops of 1e6 calls), against ~2 µs for the parse reading of the same
 * body; ~50 µs at 4 MiB (response/json-stage.ts measured the same pass on answers).
 */
/** The message of a body that is no JSON text (either reading). */
const NOT_JSON_MESSAGE = 'Parse error: the request body is not valid JSON.';

const NOT_UTF8_MESSAGE = 'Parse error: the request body is not well-formed UTF-8, which JSON exchanged between systems must be (RFC 8259 §8.1); send it as UTF-8.';

/**
 * The id a refusal of the request `body` carries, read before the request is otherwise
 * judged (an unknown agent, a draining gateway, a request pipelined too deep): the peek's id
 * (with its exact text for a number `JSON.parse` changes), or the id the peek's own refusal
 * would carry (null for a body that is no JSON, a batch, a host's response). Read under the
 * built-in `max_json_depth` / `max_json_nodes` ({@link REFUSAL_ID_BOUNDS}), as any peek is
 * read under its agent's: a body over them is read by the scan only, for its top-level id as
 * an over-bound refusal reads it ({@link idOfOverBoundBody}: no JavaScript value, no
 * `JSON.parse`, null when the scan cannot tell), and `JSON.parse` is reached only for a body
 * within them (a small one, or one the scan leaves undecided: invalid JSON), whose parse is bounded as a known agent's is.
 *
 * Before, it read the body unbounded, and a body the scan found invalid (or could not tell)
 * was `JSON.parse`d whole: 4 MiB of `[` to an unknown agent held the event loop 2 s, every
 * other agent's requests waiting (a review of the request side, M1:
 * test/regressions/unknown-agent-refusal-unbounded-parse.test.ts).
 */
export function requestIdOf(body: Buffer): { id: string | number | null; idText: string | undefined } {
  const peek = peekJsonRpc(body, REFUSAL_ID_BOUNDS);
  return peek.ok ? peek.peek : peek;
}

/**
 * The bounds {@link requestIdOf} reads a body under: the built-in `max_json_depth` and
 * `max_json_nodes` (config/defaults.ts). The id does not depend on them (a body over them
 * has its id read by the scan), only what reading it may cost.
 */
const REFUSAL_ID_BOUNDS: JsonBoundsLimits = Object.freeze({ maxDepth: BUILTIN_DEFAULTS.max_json_depth, maxNodes: BUILTIN_DEFAULTS.max_json_nodes });

/**
 * The id of a refusal made before the request is otherwise judged (`unknown_agent`,
 * `draining`, `pipeline_too_deep`) for a request of HTTP `method` with `body` (as read, a
 * Buffer, or undefined): {@link requestIdOf} of a POST's non-empty body, null for any other
 * method whatever body it has. Only a POST carries a JSON-RPC message (MCP Streamable HTTP:
 * a GET opens or resumes a stream, a DELETE ends the session), so docs/errors.md gives these
 * refusals id null "for a GET, a DELETE, a notification or a batch". Reported failure (a
 * review, Low): a DELETE whose body was `{"jsonrpc":"2.0","id":7,"method":"x"}` was refused
 * for id 7 (test/regressions/delete-body-id-in-refusal.test.ts).
 */
export function refusalIdOf(method: string, body: Buffer | undefined): { id: string | number | null; idText: string | undefined } | null {
  return method === 'POST' && body !== undefined && body.length > 0 ? requestIdOf(body) : null;
}

/**
 * Smallest body the scan reads (below it, `JSON.parse` costs less than the scan's fixed cost:
 * two WebAssembly passes, the top level and `params`, and every key of both decoded).
 * Measured (Node 20, best of 7 loops, `tools/call` bodies whose arguments are creatives
 * objects), scan time ÷ parse time: 110 bytes 3.17, 285 bytes 1.75, 461 bytes 1.21, 813
 * bytes 0.80, 1.5 KB 0.62, 2.9 KB 0.24, 11.5 KB 0.19; 4 MB 7-11 ms against 49-61 ms. The
 * crossover depends on the shape (`JSON.parse` reads long strings fast); above 1 KiB the
 * scan wins for any shape measured. The bench's 187-byte request is parsed.
 */
export const PEEK_SCAN_MIN_BYTES = 1024;

/**
 * The shortest string id (its bytes between the quotes) whose written bytes the peek keeps
 * (RpcPeek.idWritten): 1 KiB. A shorter one is compared character by character about as
 * cheaply as its copy would cost (hostile trial 58, F5).
 */
export const LONG_ID_BYTES = 1024;

/**
 * {@link peekJsonRpc} from the structure scan's member table (a body that is no JSON, or over
 * a bound, refused as the parse reading refuses it), or undefined when the scan cannot decide
 * (then {@link peekByParse} does): memory cannot grow for the scan. On a JSON text the scan's bounds are
 * checkJsonBounds' (the same depth and value count: test/unit/json-scan-wasm.test.ts), so a
 * body the scan passes is one the parse reading passes too.
 */
export function peekByScan(body: Buffer, bounds?: JsonBoundsLimits): PeekResult | undefined {
  return scanReading(body, bounds ?? UNBOUNDED).result;
}

/** The body's depth and value count, as json-bounds.ts checkJsonBounds measures them. */
interface JsonCounts {
  readonly depth: number;
  readonly nodes: number;
}

/**
 * {@link peekByScan}'s answer (`result`), with the body's counts when the scan read it whole
 * within `bounds` (`counts`; undefined when it was invalid or over a bound), also when the
 * member table cannot decide.
 */
function scanReading(body: Buffer, bounds: JsonBoundsLimits): { result: PeekResult | undefined; counts: JsonCounts | undefined } {
  const scan = scanTopObject(body, bounds);
  // No JSON text, or one over a bound: refused as the parse reading refuses it (over a bound
  // first, then `parse_error`; the scan's verdict is JSON.parse's and its bounds are
  // checkJsonBounds': test/unit/json-scan-wasm.test.ts), by one path, without a parse or a
  // decoding of the body. Before, a body that is no JSON went on to `JSON.parse`, which builds
  // every member of a wide object before it fails: one byte less than trial 54's
  // 99,990-member body held the event loop 140-760 ms (a re-read of its fix, Medium:
  // test/regressions/wide-request-object-stalls-event-loop.test.ts); one over a bound to
  // peekByParse, which decoded it and checked its bounds again (a later re-read).
  if (scan === TEXT_INVALID || scan === TEXT_OVER_BOUND) {
    const over = overBoundRefusal(body, body, bounds);
    // Over a bound for the scan yet within for checkJsonBounds: never; left to the parse reading, as before.
    const result = over ?? (scan === TEXT_INVALID ? refusal('parse_error', NOT_JSON_MESSAGE, null, undefined) : undefined);
    return { result, counts: undefined };
  }
  if (scan === undefined) return { result: undefined, counts: undefined };
  const facts = factsOfScan(body, scan.top, scan.nodes, membersOfScan(body, scan));
  return { result: facts === undefined ? undefined : decide(facts), counts: { depth: scan.depth, nodes: scan.nodes } };
}

/**
 * {@link peekJsonRpc} of a host's request to an agent whose tools may have structure bounds of
 * their own (request/request-json-bounds.ts): the body is held to its tool's
 * `max_json_depth` / `max_json_nodes` when it is a single `tools/call` of a tool in
 * `bounds.tools` (RpcPeek.toolName: a request or a notification), to the agent's otherwise
 * (another method, another tool, a batch). Over them -> `invalid_request`, the message naming
 * the bound applied (`Invalid Request: the request body is over max_json_nodes (200000).`),
 * for the request's id as {@link peekJsonRpc}'s bound refusal is ({@link idOfOverBoundBody}).
 *
 * How, without an unbounded reading: the body is read once under `bounds.widest` (per bound,
 * the largest of the agent's and its tools'), which gives its peek (so its tool name) and, from
 * the scan (bodies of {@link PEEK_SCAN_MIN_BYTES} or more), its depth and value count. Then the
 * bound that applies is checked: nothing more when it is the widest (the call of the tool with
 * the largest bounds); a comparison of the counts the scan gave; else (the parse reading: a
 * small body, or one the scan leaves undecided) withinJsonBounds' proof, then the bounded
 * check (checkJsonBounds, stopping at the bound). A body the reading refuses within the widest
 * (the reading checks it first) that is not JSON, or writes a member the gateway acts on twice
 * or as a case variant (a `params.name`: which tool a seller would run is unknown), gets the
 * reading's own refusal: the parse error, or the refusal naming the member, as an agent with
 * no tools of its own gives them when the body is within its bounds. Any other refused body
 * (over the widest, valid JSON but no JSON-RPC message) is judged on its bound first, as
 * before: its tool is read leniently ({@link refusedBodyFacts}: a `tools/call` with a
 * `params.name` written once), else the agent's bound; only when within it is the reading's
 * own refusal given. Before, a `tools/call` cut in its params, or writing `name` twice, was
 * refused "over max_json_nodes" for the agent's bound though it was within its tool's (a
 * hostile new-user trial 23, L6:
 * test/regressions/truncated-tools-call-reported-over-json-nodes.test.ts).
 *
 * An agent none of whose tools sets other bounds (`bounds.tools` empty: nearly all) is read
 * exactly as before, one {@link peekJsonRpc} under the agent's bounds. Source: a hostile trial
 * 22, F2 (a tool's bounds applied to its results, never to its calls:
 * test/regressions/request-json-bounds-ignore-tool-limits.test.ts).
 */
export function peekRequest(body: Buffer, bounds: RequestJsonBounds): PeekResult {
  if (bounds.tools.size === 0) return peekJsonRpc(body, bounds.agent);
  if (!isUtf8(body)) return refusal('parse_error', NOT_UTF8_MESSAGE, null, undefined);
  const widest = bounds.widest;
  const scanned = body.length < PEEK_SCAN_MIN_BYTES ? undefined : scanReading(body, widest);
  const read = scanned?.result ?? peekByParse(body, widest);
  if (read.ok) {
    const name = read.peek.kind === 'batch' ? undefined : read.peek.toolName;
    const applied = (name === undefined ? undefined : bounds.tools.get(name)) ?? bounds.agent;
    if (applied.maxDepth >= widest.maxDepth && applied.maxNodes >= widest.maxNodes) return read;
    return overBound(body, applied, scanned?.counts) ?? read;
  }
  // The reading checks the widest bounds first, so a body it refuses as no JSON is within them.
  if (read.kind === 'parse_error') return read;
  const refused = refusedBodyScan(body);
  const facts = refused?.facts;
  const counts = scanned?.counts ?? refused?.counts;
  if (facts?.names !== undefined && counts !== undefined && within(counts, widest)) return read;
  const name = facts?.names === undefined ? facts?.toolName : undefined;
  const applied = (name === undefined ? undefined : bounds.tools.get(name)) ?? bounds.agent;
  return overBound(body, applied, counts, facts) ?? read;
}

/** Whether a body of `counts` (its depth and values, as checkJsonBounds measures them) is within both of `bounds`. */
function within(counts: JsonCounts, bounds: JsonBoundsLimits): boolean {
  return counts.depth <= bounds.maxDepth && counts.nodes <= bounds.maxNodes;
}

/**
 * The refusal of `body` when it is over `bounds` (the message naming the first bound it breaks,
 * as checkJsonBounds reads it), else undefined. `counts`: the body's, when a scan measured them
 * (then a body within both is settled without another pass); `facts`: the body's, read by
 * {@link refusedBodyFacts} when the caller has them.
 */
function overBound(body: Buffer, bounds: JsonBoundsLimits, counts: JsonCounts | undefined, facts?: ObjectFacts): PeekResult | undefined {
  if (counts !== undefined ? within(counts, bounds) : withinJsonBounds(body, bounds)) return undefined;
  const b = checkJsonBounds(body, bounds);
  if (b.ok) return undefined;
  const { id, idText } = idOfOverBoundBody(body, facts);
  return refusal('invalid_request', overBoundMessage(b.reason, b.limit), id, idText);
}

/** The message of a request refused for a structure bound: `Invalid Request: the request body is over max_json_depth (64).` */
function overBoundMessage(reason: 'json_depth' | 'json_nodes', limit: number): string {
  return `Invalid Request: the request body is over max_${reason} (${limit}).`;
}

/**
 * {@link peekJsonRpc} by `JSON.parse` of the whole body: the reference, and the reading of
 * every body the scan leaves undecided.
 */
export function peekByParse(body: Buffer, bounds?: JsonBoundsLimits): PeekResult {
  // Decoded once, for the bounds proof and the parse. A small body is proved within the
  // bounds by counting its brackets (withinJsonBounds); only one that proof cannot settle
  // pays the character scan.
  const text = body.toString('utf8');
  const over = bounds === undefined ? undefined : overBoundRefusal(body, text, bounds);
  if (over !== undefined) return over;
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return refusal('parse_error', NOT_JSON_MESSAGE, null, undefined);
  }
  if (Array.isArray(msg)) return decide({ top: 'array', emptyArray: msg.length === 0, ...elementsOfValues(msg, body, text) });
  if (msg === null || typeof msg !== 'object') return decide({ top: 'scalar' });
  return decide(parsedObjectFacts(msg as Record<string, unknown>, body, text, body));
}

/**
 * The refusal of a body over `bounds` (`invalid_request`, the bound named, the id the scan
 * reads: {@link idOfOverBoundBody}), or undefined when it is within them. `text` is the body
 * decoded, or the body itself when the caller has no decoding (the scan reading): the proof of
 * withinJsonBounds holds on either, and checkJsonBounds (exact) decides what it does not prove,
 * so the answer is the same. Checked before the body is judged JSON or not: a body over a bound
 * is refused for it, valid JSON or not (the bound is proved by counting brackets, json-bounds.ts).
 */
function overBoundRefusal(body: Buffer, text: string | Buffer, bounds: JsonBoundsLimits): PeekResult | undefined {
  if (withinJsonBounds(text, bounds)) return undefined;
  const b = checkJsonBounds(body, bounds);
  if (b.ok) return undefined;
  const { id, idText } = idOfOverBoundBody(body);
  return refusal('invalid_request', overBoundMessage(b.reason, b.limit), id, idText);
}

/**
 * factsOfObject of the parsed object `m`, whose JSON text is `view` (`text` its decoding),
 * with its names problem and its width ({@link wideOfText}); as the scan reading, the facts
 * of an object with more than MAX_MESSAGE_MEMBERS keys that may be names are not read
 * ({@link unreadFacts}). `body`: as factsOfObject's (undefined for a batch element).
 */
function parsedObjectFacts(m: Record<string, unknown>, view: Buffer, text: string, body: Buffer | undefined): ObjectFacts {
  const wide = wideOfText(view, m);
  if (wide?.unread === true) return unreadFacts(wide.problem);
  return factsOfObject(m, body, text, parsedNamesProblem(view, text, m), wide?.problem);
}

/**
 * The {@link ObjectFacts.wide} problem of the parsed message `m` read from its JSON text
 * `view` (an object, JSON whitespace around it allowed): the members written in it, in the
 * `params` object of a `tools/call` or a `tasks/result`, and in a response's `error`, judged
 * by message-members.ts wideObjectOf, as the scan reading counts them and a seller's answer is
 * judged (response/wide-answer.ts); the message object's members by the walk
 * (readObjectMembers), which needs no scan memory (a scan that could not grow it is one reason
 * a body this long is parsed). A text shorter than
 * WIDE_MIN_BYTES holds no object that wide and is not walked (every body under
 * PEEK_SCAN_MIN_BYTES: the parse reading's hot path pays one comparison). `unread`: the
 * message object has more than MAX_MESSAGE_MEMBERS keys that may be names, whose facts the
 * scan reading does not read (its id then null).
 */
function wideOfText(view: Buffer, m: Record<string, unknown>): { problem: string; unread: boolean } | undefined {
  if (view.length < WIDE_MIN_BYTES) return undefined;
  const method = typeof m.method === 'string' ? m.method : undefined;
  const key = method === 'tools/call' || method === TASKS_RESULT || method === CANCELLED ? 'params' : method === undefined ? 'error' : undefined;
  const wide = wideObjectOf(view, readObjectMembers(view, view.indexOf(LBRACE)), key);
  return wide === undefined ? undefined : { problem: wideProblem(wide.of, wide.count), unread: wide.unread };
}

/**
 * The names problem (repeated-request-names.ts) of the object text `view` (decoded: `text`),
 * which `JSON.parse` read as `m`: proved absent by native searches, else read from the bytes.
 */
function parsedNamesProblem(view: Buffer, text: string, m: Record<string, unknown>): NamesProblem | undefined {
  return mayRepeatNames(text, [m]) ? namesProblemOfText(view, m.method) : undefined;
}

/**
 * The facts of a parsed JSON object, read as a JSON-RPC message. `body` (the whole body, whose
 * top-level object `m` is, and `text` its decoding) gives the id's exact text
 * ({@link idTextOf}); undefined for a batch element, whose id the gateway does not keep.
 * `names`: its names problem, read by the caller from the text.
 */
function factsOfObject(m: Record<string, unknown>, body: Buffer | undefined, text: string, names: NamesProblem | undefined, wide: string | undefined): ObjectFacts {
  const hasId = Object.hasOwn(m, 'id');
  const id = hasId && isId(m.id) ? m.id : null;
  const method = typeof m.method === 'string' ? m.method : undefined;
  // JSON has no undefined: `params` is undefined only when absent.
  const params = m.params;
  const paramsStructured = params === undefined || (params !== null && typeof params === 'object');
  let toolName: string | undefined;
  let taskId: string | undefined;
  if (method === 'tools/call' && params !== undefined && paramsStructured) {
    const name = (params as Record<string, unknown>).name;
    if (typeof name === 'string') toolName = name;
  } else if (method === TASKS_RESULT && params !== undefined && paramsStructured) taskId = keptTaskId((params as Record<string, unknown>).taskId);
  const hasError = Object.hasOwn(m, 'error');
  return {
    top: 'object',
    jsonrpcIs20: m.jsonrpc === '2.0',
    method,
    hasId,
    idValid: !hasId || isId(m.id),
    idOutOfRange: typeof m.id === 'number' && !Number.isFinite(m.id),
    id,
    idText: body === undefined ? undefined : idTextOf(body, text, id),
    hasResult: Object.hasOwn(m, 'result'),
    hasError,
    errorWellFormed: method !== undefined || !hasError || isJsonRpcErrorObject(m.error),
    paramsStructured,
    toolName,
    taskId,
    names,
    wide,
  };
}


/** What a reading of the body establishes: the inputs of {@link decide}. */
type BodyFacts =
  | {
      readonly top: 'array';
      readonly emptyArray: boolean;
      /** The first element that is no JSON-RPC message, if any (none in an empty array). */
      readonly badElement: BadElement | undefined;
      /** The ids of the requests among the elements, in order (RpcPeek.batchRequestIds); meaningless when there is a bad element. */
      readonly requestIds: readonly BatchRequestRef[];
      /** Each request's tool name, in order (RpcPeek.batchToolNames); meaningless when there is a bad element. */
      readonly toolNames: readonly (string | undefined)[];
      /** How many elements the array holds (RpcPeek.batchMessages); meaningless when there is a bad element. */
      readonly messages: number;
    }
  | { readonly top: 'scalar' }
  | ObjectFacts;

/** A JSON object read as a JSON-RPC message. */
interface ObjectFacts {
  readonly top: 'object';
  /** `jsonrpc` is the string `2.0`. */
  readonly jsonrpcIs20: boolean;
  /** `method` when it is a string. */
  readonly method: string | undefined;
  /** An `id` member is present (any value). */
  readonly hasId: boolean;
  /** No `id`, or a string, a finite number or null (null is refused for a request: {@link ID_NULL_PROBLEM}). */
  readonly idValid: boolean;
  /**
   * The `id` is a number outside the range of a double (`1e400`, `-1e400`: JSON.parse reads
   * it as Infinity), so not valid ({@link ID_RANGE_PROBLEM}).
   */
  readonly idOutOfRange: boolean;
  /** The id when valid, else null. */
  readonly id: string | number | null;
  /** The id's JSON text as the host wrote it, when it is a number `JSON.stringify` writes otherwise ({@link idTextOf}). */
  readonly idText: string | undefined;
  /** A `result` member is present (any value). */
  readonly hasResult: boolean;
  /** An `error` member is present (any value). */
  readonly hasError: boolean;
  /**
   * For a message with no `method` and an `error`: that error is an object with an integer
   * `code` and a string `message` (JSON-RPC 2.0 §5.1). True otherwise (not judged).
   */
  readonly errorWellFormed: boolean;
  /** No `params`, or an object or an array (JSON-RPC 2.0 §4.2: a Structured value). */
  readonly paramsStructured: boolean;
  /** `params.name` of a `tools/call` whose params is an object, when a string. */
  readonly toolName: string | undefined;
  /** `params.taskId` of a `tasks/result` whose params is an object, when a string of at most {@link MAX_TASK_ID_CHARS} characters. */
  readonly taskId: string | undefined;
  /**
   * A member the gateway acts on written twice or as a case variant (repeated-request-names.ts),
   * judged before every other rule; undefined when none is.
   */
  readonly names: NamesProblem | undefined;
  /**
   * The message object, the `params` of its `tools/call`, `tasks/result` or `notifications/cancelled`, or its `error`
   * (a response) has more than MAX_MESSAGE_MEMBERS members (message-members.ts): why, as
   * message-members.ts wideProblem says it; judged before every other rule. Undefined otherwise.
   */
  readonly wide: string | undefined;
  /**
   * Of a `notifications/cancelled` read by the scan (not a batch element): its
   * `params.requestId` as written, null when none to match (RpcPeek.cancelledRequestId);
   * absent otherwise.
   */
  readonly cancelledRequestId?: WrittenRequestId | null;
  /** Of a request read by the scan (not a batch element) with a string id of LONG_ID_BYTES or more: its bytes as written (RpcPeek.idWritten). */
  readonly idWritten?: Buffer;
}

/**
 * A batch element refused: its index (0-based) and why, as the refusal's message says it after
 * `batch element <index> `: `is not a JSON-RPC message (<problem>)`, the problem
 * {@link messageProblem}'s or what it is instead of an object; or the `initialize` rule's
 * ({@link INITIALIZE_IN_BATCH}).
 */
interface BadElement {
  readonly index: number;
  readonly why: string;
}

/** Why a batch element that is an `initialize` is refused (MCP 2025-03-26, Lifecycle). */
const INITIALIZE_IN_BATCH = 'is an "initialize" request, which must not be part of a JSON-RPC batch';

function decide(f: BodyFacts): PeekResult {
  if (f.top === 'array') {
    if (f.emptyArray) return refusal('invalid_request', 'Invalid Request: empty JSON-RPC batch.', null, undefined);
    const bad = f.badElement;
    if (bad !== undefined) return refusal('invalid_request', `Invalid Request: batch element ${bad.index} ${bad.why}.`, null, undefined);
    return { ok: true, peek: { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined, batchRequestIds: f.requestIds, batchToolNames: f.toolNames, batchMessages: f.messages } };
  }
  if (f.top === 'scalar') return refusal('invalid_request', 'Invalid Request: a JSON-RPC message must be an object.', null, undefined);
  const { id, idText } = f;
  if (f.wide !== undefined) {
    // For the request's id, as a names refusal carries it.
    const withId = f.names?.idAmbiguous !== true && !isResponse(f);
    return refusal('invalid_request', `Invalid Request: ${f.wide}.`, withId ? id : null, withId ? idText : undefined);
  }
  if (f.names !== undefined) {
    // For the request's id, unless the id is among the names written twice or is a host's response's.
    const withId = !f.names.idAmbiguous && !isResponse(f);
    return refusal('invalid_request', `Invalid Request: ${f.names.problem}.`, withId ? id : null, withId ? idText : undefined);
  }
  const problem = messageProblem(f);
  // An invalid id is null here (ObjectFacts.id): the refusal then carries id null. So does a
  // host's response's: its id names a request of the server's, not one the host awaits
  // (MCP Streamable HTTP: a refused response's error "has no id").
  if (problem !== undefined) {
    const response = isResponse(f);
    return refusal('invalid_request', `Invalid Request: ${problem}.`, response ? null : id, response ? undefined : idText);
  }
  // Every single-message peek writes every member but the batch's, in one order (RpcPeek): one
  // hidden class for the reads of exchange.rpc (a re-read of today's changes, Low:
  // test/regressions/rpc-peek-shapes-differ.test.ts). `idWritten`: a request's with a long string
  // id read by the scan; `cancelledRequestId`: a scanned cancellation's; else undefined.
  // The host answering a server-initiated request: forwarded as is.
  if (f.method === undefined) return { ok: true, peek: { kind: 'notification', id, idText, method: undefined, toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } };
  const idWritten = f.hasId ? f.idWritten : undefined;
  return { ok: true, peek: { kind: f.hasId ? 'request' : 'notification', id, idText, method: f.method, toolName: f.toolName, taskId: f.taskId, idWritten, cancelledRequestId: f.cancelledRequestId } };
}

/**
 * Why an object is no JSON-RPC message, or undefined when it is one: a request or a
 * notification (`jsonrpc` "2.0", a string `method`, a valid id other than null ({@link
 * ID_NULL_PROBLEM}) or none, `params` absent or an
 * object or an array: §4, §4.2), or a response (no `method`; exactly one of `result` and
 * `error`, an `error` being an object with an integer `code` and a string `message`: §5,
 * §5.1; its id not judged). The one rule for a single message and for each element of a batch
 * (§6). For an ordinary request it reads three booleans of the facts, which the readings
 * take from members they look up anyway.
 */
function messageProblem(f: ObjectFacts): string | undefined {
  if (!f.jsonrpcIs20) return '"jsonrpc" must be "2.0"';
  if (f.method === undefined) {
    if (!f.hasResult) return f.hasError ? (f.errorWellFormed ? undefined : ERROR_PROBLEM) : '"method" must be a string';
    return f.hasError ? 'a response must carry "result" or "error", not both' : undefined;
  }
  if (!f.idValid) return f.idOutOfRange ? ID_RANGE_PROBLEM : '"id" must be a string, a number or null';
  if (f.hasId && f.id === null) return ID_NULL_PROBLEM;
  return f.paramsStructured ? undefined : '"params" must be an object or an array';
}

/**
 * Why a request (a `method` and an `id`) whose id is null is refused: MCP (Basic, Requests,
 * every revision) has a request's id a string or an integer that "MUST NOT be null", and an
 * answer for id null matches no call (JSON-RPC 2.0 §5 keeps id null for an error whose
 * request's id could not be read; docs/errors.md: an error for id `null` answers no call), so
 * the seller's answer, and any error the gateway mints for it, would read as the gateway's
 * generic id-null refusals. A single request is refused for id null; a batch holding one is
 * refused whole, as for any bad element ({@link elementWhy}). A notification (no `id` member)
 * and a host's response (its id not judged) are unaffected. Before, such a request was
 * forwarded (a hostile new-user trial 14, L1:
 * test/regressions/host-null-id-request-forwarded.test.ts).
 */
const ID_NULL_PROBLEM = '"id" must not be null (MCP): an answer for id null matches no call; use a string or a number, or leave "id" out for a notification';

const ERROR_PROBLEM = '"error" must be an object with an integer "code" and a string "message"';

/**
 * Why an `id` that is a JSON number outside the range of a double (magnitude 2^1024 or more
 * once rounded: `1e400`, `-1e400`) is refused: every JSON-RPC peer the gateway serves reads
 * ids as doubles (`JSON.parse`, the MCP SDKs), which read it as infinite, so no answer could
 * carry it as a number its host reads back. Before, the message said the id must be a
 * string, a number or null, which such an id is (a hostile new-user trial 13, L2:
 * test/regressions/minted-error-rewrites-host-id.test.ts).
 */
const ID_RANGE_PROBLEM = '"id" is a number outside the range of a double, which reads it as infinite; use a smaller number or a string';

/** The message is a host's response: no string `method`, a `result` or an `error`. */
function isResponse(f: ObjectFacts): boolean {
  return f.method === undefined && (f.hasResult || f.hasError);
}

/**
 * The first element of the parsed batch `batch` that is refused ({@link elementWhy}), if any,
 * and the ids of its requests ({@link isRequest}). `body` is the batch's JSON text (`text` its
 * decoding): a numeric id `JSON.parse` may have changed gets its exact text from it, as
 * {@link idTextOf} reads a single request's.
 */
function elementsOfValues(batch: readonly unknown[], body: Buffer, text: string): Elements {
  const requestIds: BatchRequestRef[] = [];
  const toolNames: (string | undefined)[] = [];
  /** Every numeric `id` in the body is written as an integer token (idWrittenAsInteger), once asked. */
  let integerIds: boolean | undefined;
  let ranges: ReturnType<typeof writtenIdRanges> | undefined;
  // Each element's names problem: none when the native searches prove it for the whole text,
  // else read from each element's bytes.
  const objects = batch.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v));
  // Each element's width too: read only in a body long enough to hold a wide object.
  const namesRead = mayRepeatNames(text, objects);
  const elementRanges = namesRead || body.length >= WIDE_MIN_BYTES ? elementRangesOf(body) : undefined;
  for (let index = 0; index < batch.length; index++) {
    const v = batch[index];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { badElement: { index, why: notAMessage(`${kindOfValue(v)}, not an object`) }, requestIds, toolNames, messages: batch.length };
    const m = v as Record<string, unknown>;
    const range = elementRanges?.[index];
    const view = range === undefined ? undefined : body.subarray(range[0], range[1]);
    const names = view === undefined || !namesRead ? undefined : namesProblemOfText(view, m.method);
    const wide = view === undefined ? undefined : wideOfText(view, m);
    const facts = wide?.unread === true ? unreadFacts(wide.problem) : factsOfObject(m, undefined, '', names, wide?.problem);
    const why = elementWhy(facts);
    if (why !== undefined) return { badElement: { index, why }, requestIds, toolNames, messages: batch.length };
    if (!isRequest(facts)) continue;
    toolNames.push(facts.toolName);
    const id = facts.id;
    const form = localErrorFormOf(facts.method, facts.toolName);
    let idText: string | undefined;
    if (typeof id === 'number' && !(isPlainInteger(id) && (integerIds ??= idWrittenAsInteger(text)))) {
      const range = (ranges ??= writtenIdRanges(body))[index];
      idText = range === undefined ? undefined : writtenOtherwise(body, range, id);
    }
    requestIds.push({ id, idText, form });
  }
  return { badElement: undefined, requestIds, toolNames, messages: batch.length };
}

/** The range [start, end) of each element of the JSON array `body` (valid JSON), in order. */
function elementRangesOf(body: Buffer): ByteRange[] {
  const ranges: ByteRange[] = [];
  visitElements(body, (start, end) => ranges.push([start, end]) > 0);
  return ranges;
}

/** What the readings of a batch's elements give ({@link elementsOfValues}, {@link elementsOfText}). */
interface Elements {
  badElement: BadElement | undefined;
  requestIds: BatchRequestRef[];
  toolNames: (string | undefined)[];
  /** How many elements the array holds (its length; the elements visited when one is bad). */
  messages: number;
}

/** A JSON-RPC message that is a request: a `method` and an `id` (JSON-RPC 2.0 §4; a notification has no `id`). */
function isRequest(f: ObjectFacts): boolean {
  return f.method !== undefined && f.hasId;
}

/**
 * Why a batch element (an object) is refused, or undefined: it is no JSON-RPC message
 * ({@link messageProblem}), or it is an `initialize` (MCP 2025-03-26, Lifecycle).
 */
function elementWhy(f: ObjectFacts): string | undefined {
  if (f.wide !== undefined) return notAMessage(f.wide);
  if (f.names !== undefined) return notAMessage(f.names.problem);
  const problem = messageProblem(f);
  if (problem !== undefined) return notAMessage(problem);
  return f.method === 'initialize' ? INITIALIZE_IN_BATCH : undefined;
}

function notAMessage(problem: string): string {
  return `is not a JSON-RPC message (${problem})`;
}

/** A JSON value's kind with its article, as messages name it: `null`, `an array`, `an object`, `a string`, `a number`, `a boolean` (also the probe's cursor row: probe/probe.ts). */
export function kindOfValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return typeof v === 'string' ? 'a string' : typeof v === 'number' ? 'a number' : 'a boolean';
}

/**
 * The top-level id of a body refused for a structure bound (`max_json_depth`,
 * `max_json_nodes`), so the host can match the refusal to its request: JSON-RPC 2.0 §5
 * allows id null only "if there was an error in detecting the id" (reported failure:
 * test/regressions/request-over-json-bound-keeps-id.test.ts). Read by the scan without
 * bounds, as the scan reading reads it: no JavaScript value is made, the depth needs no call
 * stack, and the cost is linear in a body already within `max_request_bytes`. Null when the
 * body is not a JSON object, its id is not a string, a finite number or null, or it is not
 * read (more than MAX_MESSAGE_MEMBERS keys that may be names: message-members.ts).
 */
function idOfOverBoundBody(body: Buffer, facts = refusedBodyFacts(body)): { id: string | number | null; idText: string | undefined } {
  // A host's response, or an id written twice: id null, as decide() refuses them.
  return facts?.idValid === true && !isResponse(facts) && facts.names?.idAmbiguous !== true ? { id: facts.id, idText: facts.idText } : { id: null, idText: undefined };
}

/**
 * The facts of a body read without bounds, for a refusal ({@link idOfOverBoundBody},
 * {@link peekRequest}'s tool name): its top-level object's as the scan reads them; undefined
 * when it is not a JSON object (or memory cannot grow for the scan). Made by the scan (an
 * object of more members than its table records: walked, message-members.ts): no JavaScript
 * value, no call stack for the depth, linear in a body already within `max_request_bytes`.
 */
function refusedBodyFacts(body: Buffer): ObjectFacts | undefined {
  return refusedBodyScan(body)?.facts;
}

/**
 * {@link refusedBodyFacts}, with the body's depth and value count (as checkJsonBounds measures
 * them: the scan read it whole); undefined when those facts are.
 */
function refusedBodyScan(body: Buffer): { facts: ObjectFacts; counts: JsonCounts } | undefined {
  const scan = scanTopObject(body, UNBOUNDED);
  if (typeof scan !== 'object' || scan.top !== 'object') return undefined;
  const facts = objectFactsOfScan(body, membersOfScan(body, scan));
  return facts === undefined ? undefined : { facts, counts: { depth: scan.depth, nodes: scan.nodes } };
}

function refusal(kind: 'parse_error' | 'invalid_request', message: string, id: string | number | null, idText: string | undefined): PeekResult {
  return { ok: false, kind, message, id, idText };
}

function isId(v: unknown): v is string | number | null {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * The JSON text of the body's top-level `id` (`body` as UTF-8 bytes, `text` decoded) when it
 * is a number that `JSON.stringify` writes otherwise ({@link writtenOtherwise}): one
 * `JSON.parse` changed (`9007199254740993` read as `9007199254740992`,
 * `0.99999999999999999999` as `1`, `1e-400` as `0`), or only spelled another way (`1.0`,
 * `1E2`, `0.1e1`, `-0`, which JSON.stringify writes `1`, `100`, `1`, `0`). Every answer the
 * gateway mints carries it byte for byte (errors/json-rpc-text.ts), and a seller's answer is
 * matched to it by its exact value (response/json-value-at.ts isRequestId: `1` answers
 * `1.0`); undefined otherwise (the id is the text JSON.stringify writes).
 *
 * Why the spellings too: docs/errors.md has a minted error carry the id "as the host wrote
 * it", and it did only for the numbers a double changes: `1.0`, `1E2`, `-0` and `0.1e1`
 * came back `1`, `100`, `0` and `1`, while `12345678901234567891` and `-1e-400` came back as
 * written (a hostile new-user trial 13, L2: test/regressions/minted-error-rewrites-host-id.test.ts).
 *
 * Cost: a string id, or a safe integer written as digits (every real id), reads no more of
 * the body than {@link idWrittenAsInteger}'s searches; any other number is found by a walk
 * (mcp/written-ids.ts: keys written with escapes, duplicate keys as JSON.parse reads them).
 */
function idTextOf(body: Buffer, text: string, id: string | number | null): string | undefined {
  if (typeof id !== 'number' || (isPlainInteger(id) && idWrittenAsInteger(text))) return undefined;
  const range = writtenIdRanges(body)[0];
  return range === undefined ? undefined : writtenOtherwise(body, range, id);
}

/**
 * A safe integer other than `-0`: the only text of it as an integer token (`-`, digits, no
 * leading zero: the JSON grammar) is the one JSON.stringify writes; `-0` is written `0`.
 */
function isPlainInteger(id: number): boolean {
  return Number.isSafeInteger(id) && !Object.is(id, -0);
}

/**
 * Proves, with native string searches and no scan, that the top-level `id` of the JSON text
 * `text` (a request `JSON.parse` read, whose `id` is a safe integer) is written as an integer
 * token (`-`, digits): exact then, as no other text of a safe integer is. The proof: no `\u`
 * escape occurs, so a key that decodes to `id` is written `"id"` (and those four characters
 * cannot occur inside another string); and every `"id"` key whose value is a number has an
 * integer token, the top-level one among them. False when it cannot tell (the caller then
 * walks the body): a `\u` escape anywhere, an `id` number with a fraction or an exponent at
 * any depth. Cost: one search for `\u` and one per `"id"` (one in a usual request).
 */
function idWrittenAsInteger(text: string): boolean {
  if (text.includes('\\u')) return false;
  for (let at = text.indexOf('"id"'); at !== -1; at = text.indexOf('"id"', at + 4)) {
    let i = at + 4;
    while (isJsonWhitespace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== COLON) continue; // the string "id" as a value
    i++;
    while (isJsonWhitespace(text.charCodeAt(i))) i++;
    let c = text.charCodeAt(i);
    if (c === MINUS) c = text.charCodeAt(++i);
    if (c < DIGIT_0 || c > DIGIT_9) continue; // not a number
    while (c >= DIGIT_0 && c <= DIGIT_9) c = text.charCodeAt(++i);
    // After the digits of a valid text: a delimiter, or the `.`, `e` or `E` of a longer number.
    if (c === DOT || c === LOWER_E || c === UPPER_E) return false;
  }
  return true;
}


/**
 * The number text at `range` of `body` (an id, read by JSON.parse as `id`) when
 * `JSON.stringify(id)` is another text, else undefined: the text a minted answer must carry
 * instead ({@link idTextOf}; the rule: mcp/id-text.ts idTextOfNumber).
 */
function writtenOtherwise(body: Buffer, range: ByteRange, id: number): string | undefined {
  return idTextOfNumber(body.toString('latin1', range[0], range[1]), id);
}

// ---------------------------------------------------------------------------------------
// The scan reading

/**
 * The facts from the scan's member table (offsets in `body`), read as `JSON.parse` keeps the
 * members (mcp/text-members.ts: the last of duplicate keys wins, escaped keys decoded; a name
 * the gateway acts on written twice or as a case variant is judged from the same table:
 * repeated-request-names.ts judgeKeys); or
 * undefined when memory cannot grow for the scan of the `params` of a `tools/call`, or of a
 * response's `error`. A non-empty array has its elements read ({@link elementsOfText}).
 */
function factsOfScan(body: Buffer, top: 'object' | 'array' | 'scalar', nodes: number, members: ObjectMembers): BodyFacts | undefined {
  if (top === 'array') return nodes === 1 ? { top, emptyArray: true, badElement: undefined, requestIds: [], toolNames: [], messages: 0 } : { top, emptyArray: false, ...elementsOfText(body) };
  if (top === 'scalar') return { top };
  return objectFactsOfScan(body, members);
}

/** The top-level keys a peek reads, in the order of objectFactsOfScan's indexes. */
const PEEK_KEY_TEXTS = ['jsonrpc', 'method', 'id', 'params', 'result', 'error'];
const PEEK_KEYS = PEEK_KEY_TEXTS.map((key) => Buffer.from(key));

/**
 * The member `key` (ASCII) that `JSON.parse` keeps of the object scanned as `members` in
 * `view` (text-members.ts keptMember: keys compared as written, only an escaped key decoded),
 * when its value is a string. keptMember rather than plainMemberIndexes with decodedIndexes
 * for one key: no array of indexes, no Map of every key when one key is escaped (a loop over a
 * 2- and a 41-member object: ~37 vs ~77 ns, ~0.97 vs ~1.15 µs; escaped keys alike).
 */
function stringMember(view: Buffer, members: readonly TextMember[], key: string): TextMember | undefined {
  const member = keptMember(view, members, key);
  return member !== undefined && member.first === QUOTE ? member : undefined;
}
/**
 * The most bytes a JSON string of {@link MAX_TASK_ID_CHARS} characters takes between its
 * quotes: each UTF-16 code unit at most 6 (`\uXXXX`). A longer `taskId` is not decoded.
 */
const MAX_TASK_ID_TEXT_BYTES = 6 * MAX_TASK_ID_CHARS;
/** The method nearly every request has: read without making a string (jsonStringIs). */
const TOOLS_CALL = 'tools/call';

/** The member at index `i` of plainMemberIndexes' or decodedIndexes' answer; undefined for -1 (none). */
function memberAt(members: readonly TextMember[], i: number): TextMember | undefined {
  return i < 0 ? undefined : members[i];
}

/** plainMemberIndexes' answer for objects with escaped keys: every key decoded (memberIndexes). */
function decodedIndexes(view: Buffer, members: readonly TextMember[], keys: readonly string[]): number[] {
  const byKey = memberIndexes(view, members);
  return keys.map((key) => byKey.get(key) ?? -1);
}

/**
 * {@link factsOfScan} of an object (a whole body, or a batch element: a request's tool name
 * is kept too, for the batch's limits: RpcPeek.batchToolNames). `element`: `body` is a batch
 * element's bytes, so a cancellation's `requestId` is not kept for it (RpcPeek.cancelledRequestId:
 * only a whole body's, which routing/handler.ts looks up).
 */
function objectFactsOfScan(body: Buffer, object: ObjectMembers, element = false): ObjectFacts | undefined {
  const members = object.members;
  let wide = object.count > MAX_MESSAGE_MEMBERS ? wideProblem('the message', object.count) : undefined;
  // More than MAX_MESSAGE_MEMBERS members whose key may be a name: refused for id null, the id not read.
  if (members === undefined) return unreadFacts(wide!);
  const at = plainMemberIndexes(body, members, PEEK_KEYS) ?? decodedIndexes(body, members, PEEK_KEY_TEXTS);
  const jsonrpc = memberAt(members, at[0]!);
  const method = memberAt(members, at[1]!);
  const idMember = memberAt(members, at[2]!);
  const params = memberAt(members, at[3]!);
  const hasResult = at[4]! >= 0;
  const hasError = at[5]! >= 0;
  const methodText = method !== undefined && method.first === QUOTE ? (jsonStringIs(body, method.value, TOOLS_CALL) ? TOOLS_CALL : jsonString(body, method.value)) : undefined;
  let id: string | number | null = null;
  let idValid = true;
  let idOutOfRange = false;
  let idText: string | undefined;
  let idWritten: Buffer | undefined;
  if (idMember !== undefined) {
    const first = idMember.first;
    if (first === QUOTE) {
      id = jsonString(body, idMember.value);
      // A long id's bytes as written, copied (RpcPeek.idWritten): a seller's echo is compared as bytes.
      // The copy is held for the exchange's life beside the id's string (RpcPeek.id, kept too),
      // about doubling what a long id holds, and is not counted in the exchange's buffer lease
      // (exchange.ts openBufferLease): bounded by the body, at most the agent's max_request_bytes
      // (4 MiB by default; a re-read of today's changes, Nit).
      const [from, to] = idMember.value;
      if (to - from - 2 >= LONG_ID_BYTES && !element) idWritten = Buffer.from(body.subarray(from + 1, to - 1));
    }
    else if (first === LOWER_N) id = null;
    else if (first === MINUS || (first >= DIGIT_0 && first <= DIGIT_9)) {
      // A JSON number's text is a JavaScript numeric literal with the same value (`Number`
      // and `JSON.parse` round alike; too large a magnitude is Infinity in both).
      const written = body.toString('latin1', idMember.value[0], idMember.value[1]);
      const n = Number(written);
      if (Number.isFinite(n)) {
        id = n;
        // As idTextOf: the text when JSON.stringify writes the number otherwise.
        idText = idTextOfNumber(written, n);
      } else {
        idValid = false;
        idOutOfRange = true;
      }
    } else idValid = false; // an object, an array, true or false
  }
  // A response's error, judged only for a message with no method (the parse's factsOfObject).
  const errorMember = methodText === undefined ? memberAt(members, at[5]!) : undefined;
  let errorWellFormed = true;
  if (errorMember !== undefined) {
    const error = errorObjectOfText(body, errorMember);
    if (error === undefined) return undefined;
    errorWellFormed = error.wellFormed;
    wide ??= error.wide;
  }
  let names = judgeKeys(body, members, TOP_NAMES, undefined);
  let toolName: string | undefined;
  let taskId: string | undefined;
  let cancelledRequestId: WrittenRequestId | null | undefined;
  // The params of a tools/call (its tool's name), a tasks/result (its taskId: rare on the scan's
  // path, a body of 1 KiB or more) or a notifications/cancelled (its requestId: names only).
  if ((methodText === 'tools/call' || methodText === TASKS_RESULT || methodText === CANCELLED) && params !== undefined && params.first === LBRACE) {
    const view = body.subarray(params.value[0], params.value[1]);
    const inner = objectMembersOf(view);
    if (inner === undefined) return undefined;
    if (inner.count > MAX_MESSAGE_MEMBERS) wide ??= wideProblem('"params"', inner.count);
    // Undefined members (more than MAX_MESSAGE_MEMBERS keys that may be names): refused for its width, nothing read.
    const paramsMembers = inner.members ?? [];
    if (methodText === 'tools/call') {
      const name = stringMember(view, paramsMembers, 'name');
      if (name !== undefined) toolName = jsonString(view, name.value);
      names ??= judgeKeys(view, paramsMembers, PARAMS_NAMES, 'params');
    } else if (methodText === CANCELLED) {
      names ??= judgeKeys(view, paramsMembers, CANCELLED_PARAMS_NAMES, 'params');
      // Its requestId, for routing/handler.ts (mcp/cancelled-id.ts cancelledRequestIdOf): not scanned again there.
      if (inner.members !== undefined && !element) cancelledRequestId = peekedCancelledId(view, inner.members);
    } else {
      const member = stringMember(view, paramsMembers, 'taskId');
      if (member !== undefined && member.value[1] - member.value[0] - 2 <= MAX_TASK_ID_TEXT_BYTES) taskId = keptTaskId(jsonString(view, member.value));
    }
  }
  return {
    top: 'object',
    jsonrpcIs20: jsonrpc !== undefined && jsonrpc.first === QUOTE && jsonStringIs(body, jsonrpc.value, '2.0'),
    method: methodText,
    hasId: idMember !== undefined,
    idValid,
    idOutOfRange,
    id: idValid ? id : null,
    idText,
    hasResult,
    hasError,
    errorWellFormed,
    paramsStructured: params === undefined || params.first === LBRACE || params.first === LBRACKET,
    toolName,
    taskId,
    names,
    wide,
    cancelledRequestId,
    idWritten,
  };
}

/**
 * The facts of a message object refused for its width (`wide`) whose members are not read
 * (message-members.ts ObjectMembers.members undefined): no id, so the refusal carries id null
 * (JSON-RPC 2.0 §5: null when the id could not be detected).
 */
function unreadFacts(wide: string): ObjectFacts {
  return {
    top: 'object',
    jsonrpcIs20: false,
    method: undefined,
    hasId: false,
    idValid: true,
    idOutOfRange: false,
    id: null,
    idText: undefined,
    hasResult: false,
    hasError: false,
    errorWellFormed: true,
    paramsStructured: true,
    toolName: undefined,
    taskId: undefined,
    names: undefined,
    wide,
  };
}

/**
 * isJsonRpcErrorObject (mcp/extract.ts) of the member `error` of `body`, read from its bytes (the last of
 * duplicate keys, escaped keys decoded, as JSON.parse keeps them), and its width problem when it
 * has more than MAX_MESSAGE_MEMBERS members ({@link ObjectFacts.wide}); undefined when memory
 * cannot grow for its scan.
 */
function errorObjectOfText(body: Buffer, error: TextMember): { wellFormed: boolean; wide: string | undefined } | undefined {
  if (error.first !== LBRACE) return { wellFormed: false, wide: undefined };
  const view = body.subarray(error.value[0], error.value[1]);
  const inner = objectMembersOf(view);
  if (inner === undefined) return undefined;
  const wide = inner.count > MAX_MESSAGE_MEMBERS ? wideProblem('"error"', inner.count) : undefined;
  if (inner.members === undefined) return { wellFormed: false, wide };
  const byKey = memberIndexes(view, inner.members);
  const code = inner.members[byKey.get('code') ?? -1];
  const message = inner.members[byKey.get('message') ?? -1];
  if (code === undefined || message === undefined || message.first !== QUOTE) return { wellFormed: false, wide };
  if (code.first !== MINUS && (code.first < DIGIT_0 || code.first > DIGIT_9)) return { wellFormed: false, wide };
  // A JSON number's text is a JavaScript numeric literal with the value JSON.parse gives it.
  return { wellFormed: Number.isInteger(Number(view.toString('latin1', code.value[0], code.value[1]))), wide };
}

/**
 * The first element of the JSON array `body` that is refused ({@link elementWhy}), and the
 * ids of its requests, read from its bytes as {@link elementsOfValues} reads the parsed array:
 * an element that is not an object is told by its first byte; an object under
 * {@link PEEK_SCAN_MIN_BYTES} is parsed (the same trade as for a whole body), a larger one
 * scanned ({@link objectFactsOfScan}).
 * Stops at the first such element.
 */
function elementsOfText(body: Buffer): Elements {
  let index = 0;
  let badElement: BadElement | undefined;
  const requestIds: BatchRequestRef[] = [];
  const toolNames: (string | undefined)[] = [];
  visitElements(body, (start, end) => {
    const facts = factsOfElement(body, start, end);
    const why = typeof facts === 'string' ? facts : elementWhy(facts);
    if (why !== undefined) badElement = { index, why };
    else if (typeof facts !== 'string' && isRequest(facts)) {
      toolNames.push(facts.toolName);
      requestIds.push({ id: facts.id, idText: facts.idText, form: localErrorFormOf(facts.method, facts.toolName) });
    }
    index++;
    return why === undefined;
  });
  return { badElement, requestIds, toolNames, messages: index };
}

/**
 * The facts of the batch element `body[start, end)`, or why it is refused when it is no
 * object. Its id's exact text (`idText`) is read from the element's own bytes, as a single
 * request's from the body's.
 */
function factsOfElement(body: Buffer, start: number, end: number): ObjectFacts | string {
  const first = body[start]!;
  if (first !== LBRACE) return notAMessage(`${kindOfFirstByte(first)}, not an object`);
  const view = body.subarray(start, end);
  if (end - start >= PEEK_SCAN_MIN_BYTES) {
    const members = objectMembersOf(view);
    const facts = members === undefined ? undefined : objectFactsOfScan(view, members, true);
    if (facts !== undefined) return facts;
  }
  const text = view.toString('utf8');
  // An object (its first byte is `{`; the body is valid JSON).
  return parsedObjectFacts(JSON.parse(text) as Record<string, unknown>, view, text, view);
}

/** {@link kindOfValue} of a JSON value that is no object, from its first byte. */
function kindOfFirstByte(first: number): string {
  if (first === LBRACKET) return 'an array';
  if (first === QUOTE) return 'a string';
  if (first === LOWER_N) return 'null';
  return first === LOWER_T || first === LOWER_F ? 'a boolean' : 'a number';
}

/**
 * Calls `visit` with each element of the JSON array `body` (a whole JSON text the scan read
 * as a non-empty array, so valid: nothing here checks the grammar), as the range
 * [start, end) of its value without the whitespace around it, in order, until `visit`
 * returns false. Strings are skipped with {@link closingQuote} (native `indexOf`); every other
 * byte is looked at once.
 */
function visitElements(body: Buffer, visit: (start: number, end: number) => boolean): void {
  let depth = 0;
  let start = -1;
  let end = -1;
  // Only whitespace comes before the top-level `[`.
  for (let i = body.indexOf(LBRACKET) + 1; i < body.length; i++) {
    const b = body[i]!;
    if (b === SPACE || b === LF || b === CR || b === TAB) continue;
    if (depth === 0) {
      if (b === COMMA || b === RBRACKET) {
        if (!visit(start, end) || b === RBRACKET) return;
        start = -1;
        continue;
      }
      if (start < 0) start = i;
    }
    if (b === QUOTE) i = closingQuote(body, i);
    else if (b === LBRACE || b === LBRACKET) depth++;
    else if (b === RBRACE || b === RBRACKET) depth--;
    end = i + 1;
  }
}
