/**
 * The members of a wide JSON-RPC object the peek reads (request/peek.ts), and the bound on how
 * many it may have.
 *
 * A host's message object (a single request, a batch element), the `params` of a `tools/call`,
 * a `tasks/result` or a `notifications/cancelled`, and a host's response's `error` are the
 * objects the gateway reads members of ("envelope" objects: the tool's `arguments` and `_meta` are never read). Each may
 * have at most {@link MAX_MESSAGE_MEMBERS} members written; one with more is refused
 * `invalid_request` ({@link wideProblem}). The structure scan (mcp/json-scan.ts scanTopObject)
 * records the first 64 members (SCAN_TEXT_MEMBERS) of an object and counts the rest; an
 * object with more is read here ({@link readObjectMembers}), by a walk over its bytes that
 * keeps only the members whose key may be a name the peek reads, so neither reading of the
 * body turns to `JSON.parse` for it. The same bound holds a seller's message object and its
 * `error` (response/wide-answer.ts: `upstream_not_mcp`, told from the scan).
 *
 * Why (a hostile trial 54, Medium): an object of more members than the scan records was left
 * to `JSON.parse` of the whole body, and V8 parses an object of many distinct keys slowly:
 * `{"jsonrpc":"2.0","id":1,"method":"ping","k0":0,…,"k99989":0,"ID":2}` (1.09 MB, inside the
 * default 4 MiB `max_request_bytes` and 100,000-node bound) held the event loop 200-580 ms
 * per request (the same in a `tools/call`'s `params`; ~10 ms in `arguments`, which the scan
 * skips), and two connections sending it took another agent's p99 from 200 ms to 2,704 ms
 * (test/regressions/wide-request-object-stalls-event-loop.test.ts).
 *
 * Why 1000: JSON-RPC 2.0 §4-§5 define six members of a message (`jsonrpc`, `id`, `method`,
 * `params`, `result`, `error`) and three of an error object; MCP's `tools/call` params have
 * four (`name`, `arguments`, `_meta`, `task`), `tasks/result` one (`taskId`) besides `_meta`.
 * A thousand leaves room for any extension a real client writes beside them, and refuses
 * bodies only their author's mistakes or an attack produce. Below it, a wide object costs the
 * walk (linear, no value made); above it, the walk still finds the id for the refusal
 * (unless more than 1000 of its keys may be names: then id null).
 */
import { scanTopObject, TEXT_INVALID, TEXT_OVER_BOUND, type TextMember, type TopMembersScan, type WideTopObjectScan } from '../mcp/json-scan.js';
import { BACKSLASH, closingQuote, firstJsonMember, jsonMemberValue, jsonValueEnd, LBRACE, nextJsonMember } from '../mcp/json-bytes.js';
import { keptMember } from '../mcp/text-members.js';

/**
 * The most members (repeated keys each counted, as written) a host's message object, the
 * `params` of its `tools/call`, `tasks/result` or `notifications/cancelled`, or its response's
 * `error` may have; more ->
 * `invalid_request` (request/peek.ts). Not configurable: JSON-RPC defines six.
 */
export const MAX_MESSAGE_MEMBERS = 1000;

/**
 * The fewest bytes a JSON object of more than {@link MAX_MESSAGE_MEMBERS} members takes:
 * `{`, that many `"":0` and the commas between them, `}`. A shorter text holds no such object
 * (the parse reading looks no further: request/peek.ts).
 */
export const WIDE_MIN_BYTES = 2 + 5 * (MAX_MESSAGE_MEMBERS + 1) - 1;

/** An object's members as {@link readObjectMembers} reads them. */
export interface ObjectMembers {
  /**
   * The members whose key may be a name the peek reads ({@link mayBeName}), in the order
   * written; undefined when there are more than {@link MAX_MESSAGE_MEMBERS} of them (only in an
   * object of more members than that: then refused, and its id not read).
   */
  readonly members: readonly TextMember[] | undefined;
  /** Every member written, repeated keys each counted. */
  readonly count: number;
}

/**
 * The members of the JSON object whose `{` is at `open` in `view` (a valid JSON text: scanned
 * or parsed before; nothing here checks the grammar). Only members whose key
 * {@link mayBeName} are kept (each as the scan's member table has it, `elements` 0), at most
 * {@link MAX_MESSAGE_MEMBERS}: the peek looks up no other key, so its facts are the same as
 * from the full table. Read by the shared walk (mcp/json-bytes.ts firstJsonMember; on invalid
 * JSON its answer, never a throw nor a loop). Cost: one pass over the object's bytes, strings
 * skipped with the native search of closingQuote, no recursion, an entry only per kept member
 * (99,993 members of which none is kept: ~5 ms for 1.09 MB once compiled).
 */
export function readObjectMembers(view: Uint8Array, open: number): ObjectMembers {
  let members: TextMember[] | undefined = [];
  let count = 0;
  for (let key = firstJsonMember(view, open); key >= 0; ) {
    const keyEnd = closingQuote(view, key) + 1;
    if (keyEnd === 0) break;
    const valueStart = jsonMemberValue(view, keyEnd);
    const valueEnd = jsonValueEnd(view, valueStart);
    count++;
    if (members !== undefined && mayBeName(view, key, keyEnd)) {
      if (members.length === MAX_MESSAGE_MEMBERS) members = undefined;
      else members.push({ key: [key, keyEnd], value: [valueStart, valueEnd], first: view[valueStart]!, elements: 0 });
    }
    key = nextJsonMember(view, valueEnd);
  }
  return { members, count };
}

/**
 * The members of the object `view` as its scan `scan` (mcp/json-scan.ts scanTopObject) found
 * them: the member table, or for an object of more members than the table keeps, the walk's
 * ({@link readObjectMembers}: the members whose key may be a name the peek reads, and the count).
 */
export function membersOfScan(view: Buffer, scan: TopMembersScan | WideTopObjectScan): ObjectMembers {
  if (scan.members !== undefined) return { members: scan.members, count: scan.members.length };
  return readObjectMembers(view, view.indexOf(LBRACE));
}

/**
 * The members of the JSON object `view` (valid JSON: the value of a member of a scanned body)
 * as {@link membersOfScan} reads them; undefined when memory cannot grow for the scan.
 */
export function objectMembersOf(view: Buffer): ObjectMembers | undefined {
  const scan = scanTopObject(view, UNBOUNDED);
  return scan === undefined || scan === TEXT_INVALID || scan === TEXT_OVER_BOUND ? undefined : membersOfScan(view, scan);
}

/**
 * How many members (repeated keys each counted) the JSON object `view` (valid JSON, as for
 * {@link objectMembersOf}) has, from its scan alone: no walk for an object wider than the
 * scan's table (~ the scan's cost, where {@link readObjectMembers} over 99,993 members costs
 * ~6 times as much); undefined when memory cannot grow for the scan. Used where only the width
 * is judged (response/wide-answer.ts: a seller's `error`).
 */
export function objectMemberCount(view: Buffer): number | undefined {
  const scan = scanTopObject(view, UNBOUNDED);
  if (scan === undefined || scan === TEXT_INVALID || scan === TEXT_OVER_BOUND) return undefined;
  return scan.members === undefined ? scan.memberCount : scan.members.length;
}

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/** An object of a JSON-RPC message with more than {@link MAX_MESSAGE_MEMBERS} members, as {@link wideObjectOf} finds it. */
export interface WideObject {
  /** Which: the message object, or the object of its `params` or `error` member ({@link wideProblem}'s `of`). */
  readonly of: 'the message' | '"params"' | '"error"';
  /** Its members as written, repeated keys each counted. */
  readonly count: number;
  /**
   * The message object has more than {@link MAX_MESSAGE_MEMBERS} members whose key may be a
   * name ({@link ObjectMembers.members} undefined): its facts, its id among them, are not read.
   */
  readonly unread: boolean;
}

/**
 * The first object of the JSON-RPC message `view` (a valid JSON object text, JSON whitespace
 * around it allowed) with more than {@link MAX_MESSAGE_MEMBERS} members: the message object,
 * whose members `top` the caller read ({@link readObjectMembers} or {@link objectMembersOf}),
 * then the object of its member `inner` (the last such member, escaped keys decoded, as
 * `JSON.parse` keeps it: text-members.ts keptMember), when it is an object; undefined when
 * none is, or `inner` is undefined and the message object is not. The one judgement of a
 * host's message (request/peek.ts: `params` of a `tools/call`, `tasks/result` or `notifications/cancelled`, a response's
 * `error`) and a seller's (response/wide-answer.ts: its `error`).
 *
 * The inner object is counted by its structure scan ({@link objectMemberCount}: the WebAssembly
 * scan, in CPU time ~2.2x faster than the walk over a 4 MiB value, ~1.2x over 99,992 small
 * members), by the walk ({@link readObjectMembers}) only when memory cannot grow for the scan;
 * both count the same on valid JSON.
 */
export function wideObjectOf(view: Buffer, top: ObjectMembers, inner: 'params' | 'error' | undefined): WideObject | undefined {
  if (top.members === undefined || top.count > MAX_MESSAGE_MEMBERS) return { of: 'the message', count: top.count, unread: top.members === undefined };
  if (inner === undefined) return undefined;
  const member = keptMember(view, top.members, inner);
  if (member?.first !== LBRACE) return undefined;
  const count = objectMemberCount(view.subarray(member.value[0], member.value[1])) ?? readObjectMembers(view, member.value[0]).count;
  return count > MAX_MESSAGE_MEMBERS ? { of: inner === 'params' ? '"params"' : '"error"', count, unread: false } : undefined;
}

/**
 * The names the peek looks up, lower-cased: request/peek.ts PEEK_KEY_TEXTS, `name`, `taskId`,
 * `requestId`, an error's `code` and `message` (repeated-request-names.ts TOP_NAMES,
 * PARAMS_NAMES and CANCELLED_PARAMS_NAMES among them).
 */
const NAMES = ['jsonrpc', 'method', 'id', 'params', 'result', 'error', 'name', 'taskid', 'requestid', 'code', 'message'];
/** The longest of {@link NAMES}, in characters. */
const LONGEST_NAME = 9;
/** The most bytes a character takes in a JSON string: `\uXXXX`. */
const MAX_CHAR_BYTES = 6;

/**
 * Whether the JSON string `view[start, end)` (a key, quotes included) may decode to, or fold
 * under Go's case folding to, one of {@link NAMES}: a plain ASCII key equal to one but for the
 * case of its letters, or a key holding a backslash or a non-ASCII byte (`\u0069d`; `ſ` and
 * `K` fold to `s` and `k`) of at most {@link LONGEST_NAME} characters' worth of bytes. Any other
 * key is none of them, and the peek does not keep it.
 */
function mayBeName(view: Uint8Array, start: number, end: number): boolean {
  const length = end - start - 2;
  if (length > LONGEST_NAME * MAX_CHAR_BYTES) return false;
  for (let i = start + 1; i < end - 1; i++) if (view[i] === BACKSLASH || view[i]! >= 0x80) return true;
  if (length > LONGEST_NAME) return false;
  for (let n = 0; n < NAMES.length; n++) {
    const name = NAMES[n]!;
    if (name.length !== length) continue;
    let same = true;
    for (let k = 0; k < length && same; k++) same = (view[start + 1 + k]! | 0x20) === name.charCodeAt(k);
    if (same) return true;
  }
  return false;
}

/**
 * Why an object of `count` members, more than {@link MAX_MESSAGE_MEMBERS}, is refused, as
 * the refusal's message says it after `Invalid Request: ` (or a batch element's, inside
 * `is not a JSON-RPC message (...)`): `of` names it. E.g. `the message has 99993 members, more
 * than the 1000 the gateway reads`, `"params" has 99992 members, more than the 1000 the gateway reads`.
 */
export function wideProblem(of: 'the message' | '"params"' | '"error"', count: number): string {
  return `${of} has ${count} members, more than the ${MAX_MESSAGE_MEMBERS} the gateway reads`;
}
