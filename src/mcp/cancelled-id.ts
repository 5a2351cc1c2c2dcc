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
import { scanTopMembers, type ByteRange, type TextMember } from './json-scan.js';
import { memberIndexes, plainMemberIndexes } from './text-members.js';
import { DIGIT_0, DIGIT_9, LBRACE, MINUS, QUOTE } from './json-bytes.js';

/** The body is bounded by the peek already (its structure bounds): the scan adds none. */
const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };
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
 * none to match: no `params` object, no `requestId`, one that is neither a string nor a number,
 * or an object with more members than the scan records (json-scan.ts scanTopMembers).
 * Escaped keys decoded, as `JSON.parse` reads them. A `requestId` written twice or in another
 * case never gets here: the peek refuses it (request/repeated-request-names.ts; hostile trial
 * 55, F5), as it refuses `params` of more than 1000 members. Cost: two scans of a small body,
 * only for a cancellation.
 */
export function cancelledRequestIdOf(body: Buffer): WrittenRequestId | undefined {
  return requestIdInParams(body, memberNamed(body, 'params', PARAMS_KEY));
}

/**
 * {@link cancelledRequestIdOf} once the notification's `params` member is found (`params`: the
 * member of `body`'s top-level object that `JSON.parse` keeps, from a scan of `body`; undefined
 * when there is none): its `requestId` as written, or undefined as there. One scan, of the
 * `params` value alone. For a caller that scanned `body`'s top level already
 * (response/server-request-id.ts sellerCancelledIdOf).
 */
export function requestIdInParams(body: Buffer, params: TextMember | undefined): WrittenRequestId | undefined {
  if (params === undefined || params.first !== LBRACE) return undefined;
  const view = body.subarray(params.value[0], params.value[1]);
  const member = memberNamed(view, 'requestId', REQUEST_ID_KEY);
  if (member === undefined) return undefined;
  const first = member.first;
  return first === QUOTE || first === MINUS || (first >= DIGIT_0 && first <= DIGIT_9) ? { bytes: view, range: member.value } : undefined;
}

function memberNamed(view: Buffer, key: string, keyBytes: readonly Uint8Array[]): TextMember | undefined {
  const scan = scanTopMembers(view, UNBOUNDED);
  if (scan == null || scan.top !== 'object') return undefined;
  const at = plainMemberIndexes(view, scan.members, keyBytes)?.[0] ?? memberIndexes(view, scan.members).get(key) ?? -1;
  return at < 0 ? undefined : scan.members[at];
}
