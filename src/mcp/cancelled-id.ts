/**
 * The request a host's `notifications/cancelled` names (MCP 2025-03-26 and later, "Cancellation":
 * `params.requestId`, "the ID of the request to cancel", a string or a number), read from the
 * notification's bytes, and the exact comparison of it with a request's id: as the gateway
 * compares a seller's response id with the request's (response/json-value-at.ts isRequestId,
 * response/batch-answers.ts): a string the same string (escapes decoded), a number the same
 * value exactly as written (`1.0` names `1`; `9007199254740993` does not name
 * `9007199254740992`), a string never a number.
 *
 * Used by routing/cancellations.ts (trial 17, L1: a cancelled call later got a made-up
 * `upstream_reset` error for an id its client had already dropped).
 */
import type { RpcIdRef } from '../exchange.js';
import { scanTopMembers, type TextMember } from './json-scan.js';
import { jsonString, memberIndexes, plainMemberIndexes } from './text-members.js';
import { DIGIT_0, DIGIT_9, LBRACE, MINUS, QUOTE } from './json-bytes.js';
import { idTextOfNumber, writtenNumberId } from './id-text.js';
import { sameJsonNumber } from './json-numbers.js';

/** The body is bounded by the peek already (its structure bounds): the scan adds none. */
const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };
const PARAMS_KEY = [Buffer.from('params')];
const REQUEST_ID_KEY = [Buffer.from('requestId')];

/**
 * `params.requestId` of the JSON-RPC notification `body` (a JSON object text the request peek
 * read as a `notifications/cancelled`: request/peek.ts), with its text as written when
 * `JSON.stringify` writes the number otherwise (mcp/id-text.ts, as RpcPeek.idText). Undefined
 * when there is none to match: no `params` object, no `requestId`, one that is neither a string
 * nor a finite number, or an object with more members than the scan records
 * (json-scan.ts scanTopMembers). Duplicate keys: the last wins, escaped keys decoded, as
 * `JSON.parse` reads them. Cost: two scans of a small body, only for a cancellation.
 */
export function cancelledRequestIdOf(body: Buffer): RpcIdRef | undefined {
  const params = memberNamed(body, 'params', PARAMS_KEY);
  if (params === undefined || params.first !== LBRACE) return undefined;
  const view = body.subarray(params.value[0], params.value[1]);
  const member = memberNamed(view, 'requestId', REQUEST_ID_KEY);
  if (member === undefined) return undefined;
  const first = member.first;
  if (first === QUOTE) return { id: jsonString(view, member.value), idText: undefined };
  if (first !== MINUS && (first < DIGIT_0 || first > DIGIT_9)) return undefined;
  const written = view.toString('latin1', member.value[0], member.value[1]);
  const n = Number(written);
  return Number.isFinite(n) ? { id: n, idText: idTextOfNumber(written, n) } : undefined;
}

/** The member `key` of the JSON object text `view` as `JSON.parse` keeps it (the last of duplicates), or undefined. */
function memberNamed(view: Buffer, key: string, keyBytes: readonly Uint8Array[]): TextMember | undefined {
  const scan = scanTopMembers(view, UNBOUNDED);
  if (scan == null || scan.top !== 'object') return undefined;
  const at = plainMemberIndexes(view, scan.members, keyBytes)?.[0] ?? memberIndexes(view, scan.members).get(key) ?? -1;
  return at < 0 ? undefined : scan.members[at];
}

/**
 * Whether `a` and `b` are the same JSON-RPC id exactly (module doc). Two numbers without a kept
 * text are both the text `JSON.stringify` writes, so their doubles compare; any other pair of
 * numbers compares by exact value (json-numbers.ts sameJsonNumber).
 */
export function sameRequestId(a: RpcIdRef, b: RpcIdRef): boolean {
  if (typeof a.id === 'number' && typeof b.id === 'number') {
    if (a.idText === undefined && b.idText === undefined) return a.id === b.id;
    return sameJsonNumber(writtenNumberId(a.id, a.idText), writtenNumberId(b.id, b.idText));
  }
  return a.id === b.id;
}
