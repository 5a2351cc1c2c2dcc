/**
 * The request a host's `notifications/cancelled` names (MCP 2025-03-26 and later, "Cancellation":
 * `params.requestId`, "the ID of the request to cancel", a string or a number), located in the
 * notification's bytes, to be compared with a request's id as a seller's response id is
 * (response/json-value-at.ts isRequestId: a string the same string, escapes decoded; a number
 * the same value exactly as written, `1.0` names `1`, `9007199254740993` does not name
 * `9007199254740992`; a string never a number).
 *
 * Used by routing/in-flight-requests.ts (trial 17, L1: a cancelled call later got a made-up
 * `upstream_reset` error for an id its client had already dropped).
 */
import type { ByteRange, TextMember } from './json-scan.js';
import { memberIndexes, plainMemberIndexes } from './text-members.js';
import { DIGIT_0, DIGIT_9, LBRACE, MINUS, QUOTE } from './json-bytes.js';
import { objectMembersOf } from '../request/message-members.js';
import type { RpcPeek } from '../exchange.js';
const PARAMS_KEY = [Buffer.from('params')];
const REQUEST_ID_KEY = [Buffer.from('requestId')];

/** A `requestId` as written: its JSON value at `range` of `bytes`. */
export interface WrittenRequestId {
  readonly bytes: Buffer;
  readonly range: ByteRange;
}

/**
 * `params.requestId` of the JSON-RPC notification `body` (a JSON object text the request peek
 * read as a `notifications/cancelled`: request/peek.ts), as written. Undefined when there is
 * none to match: no `params` object, no `requestId`, one that is neither a string nor a number.
 * Members are read as the peek reads them (request/message-members.ts objectMembersOf: the
 * scan's table, or for an object of more members than it keeps, the walk's name-like keys), so
 * the answer is the same whichever path reads the body (the peek's result, a fresh
 * scan of a body the peek parsed or of a copy, a seller's event) for any object of up to the
 * peek's MAX_MESSAGE_MEMBERS (1000) members that may be names; more than that -> undefined.
 * Before, a `params` or top level of more than 64 members gave undefined to every path but the
 * peek's scan (a review of e6f624a: test/regressions/wide-cancel-id-depends-on-path.test.ts).
 * Escaped keys decoded, as `JSON.parse` reads them. A `requestId` written twice or in another
 * case never gets here: the peek refuses it (request/repeated-request-names.ts; hostile trial
 * 55, F5), as it refuses `params` of more than 1000 members.
 *
 * `peeked`: the request peek's result for `body` (request/peek.ts), when the caller has it.
 * Cost: none when that peek read the body by its scan (every body of request/peek.ts
 * PEEK_SCAN_MIN_BYTES or more, a BOM-led one's subarray too): it scanned `params` already and
 * left what it found on its result (RpcPeek.cancelledRequestId: {@link peekedCancelledId};
 * before, a WeakMap keyed by the body Buffer held it: a re-read of 7767818, L2).
 * Otherwise (no peek given, a small body the peek parsed) two scans, the body's and its
 * `params`' (each with the walk of message-members.ts readObjectMembers too for an object of
 * more than 64 members). A seller's
 * event does not come here: response/server-request-id.ts sellerCancelledIdOf reads the SSE
 * judge's scan (its facts and `TopMembers.params`, the range of the top-level `params` value;
 * only text data gets a scan of its own) and scans that `params` once by
 * {@link requestIdInParams} (a re-read of 7767818, M3: it scanned the top level again). Before, a 4 MB
 * cancellation was scanned twice more after the peek's own scans, ~15-45 ms of the event loop
 * per cancellation (a review of the cancellation path:
 * test/regressions/cancel-body-scanned-again-after-peek.test.ts).
 */
export function cancelledRequestIdOf(body: Buffer, peeked?: RpcPeek): WrittenRequestId | undefined {
  const known = peeked?.cancelledRequestId;
  if (known !== undefined) return known ?? undefined;
  return requestIdInParams(body, memberNamed(body, 'params', PARAMS_KEY)?.value);
}

/**
 * {@link cancelledRequestIdOf} once the notification's `params` value is found (`params`: the
 * byte range in `body` of the value of the `params` member that `JSON.parse` keeps, from a scan
 * of `body`; undefined when there is none): its `requestId` as written, or undefined as there
 * (also when that value is no object). One scan, of the `params` value alone. For a caller that
 * scanned `body`'s top level already (response/server-request-id.ts sellerCancelledIdOf, from
 * the SSE judge's scan: TopMembers.params).
 */
export function requestIdInParams(body: Buffer, params: ByteRange | undefined): WrittenRequestId | undefined {
  if (params === undefined || body[params[0]] !== LBRACE) return undefined;
  const view = body.subarray(params[0], params[1]);
  const scan = scanMembers(view);
  return scan === undefined ? undefined : requestIdIn(view, scan);
}

/**
 * What the request peek (request/peek.ts) leaves on its result (RpcPeek.cancelledRequestId)
 * for a `notifications/cancelled` whose `params` object it scanned (its bytes `params`, its
 * members `members` in text order): the `requestId` as written, or null when there is none to
 * match. {@link cancelledRequestIdOf} given that peek answers it with no scan of its own.
 */
export function peekedCancelledId(params: Buffer, members: readonly TextMember[]): WrittenRequestId | null {
  return requestIdIn(params, members) ?? null;
}

/** The `requestId` member of the `params` object `view` scanned as `members`, when a string or a number. */
function requestIdIn(view: Buffer, members: readonly TextMember[]): WrittenRequestId | undefined {
  const member = keptMemberNamed(view, members, 'requestId', REQUEST_ID_KEY);
  if (member === undefined) return undefined;
  const first = member.first;
  return first === QUOTE || first === MINUS || (first >= DIGIT_0 && first <= DIGIT_9) ? { bytes: view, range: member.value } : undefined;
}

function memberNamed(view: Buffer, key: string, keyBytes: readonly Uint8Array[]): TextMember | undefined {
  const members = scanMembers(view);
  return members === undefined ? undefined : keptMemberNamed(view, members, key, keyBytes);
}

/**
 * The members of the object `view` as the peek reads them (request/message-members.ts
 * objectMembersOf: one scan, counted by {@link cancelledIdScanCount}, and for an object wider
 * than the scan's table the walk's name-like keys); undefined when more than 1000 of its keys
 * may be names, or memory cannot grow for the scan. A `view` that is no object has no members.
 */
function scanMembers(view: Buffer): readonly TextMember[] | undefined {
  scans++;
  return objectMembersOf(view)?.members;
}

/** The member `JSON.parse` keeps for `key` (`keyBytes`: its bytes) of the object `view` scanned as `members`. */
function keptMemberNamed(view: Buffer, members: readonly TextMember[], key: string, keyBytes: readonly Uint8Array[]): TextMember | undefined {
  const at = plainMemberIndexes(view, members, keyBytes)?.[0] ?? memberIndexes(view, members).get(key) ?? -1;
  return at < 0 ? undefined : members[at];
}

let scans = 0;

/** How many scans {@link cancelledRequestIdOf} has made since the process started (a plain counter): a seam for tests. */
export function cancelledIdScanCount(): number {
  return scans;
}
