/**
 * A seller's JSON-RPC message object too wide for the gateway to read: more than
 * MAX_MESSAGE_MEMBERS (1000) members in the message object, or in its `error` object, the
 * bound a host's message is held to (request/message-members.ts, docs/errors.md "Members of a
 * message object"). The JSON stage refuses such an answer `upstream_not_mcp` and the SSE stage
 * judges such event data (sse-message.ts) without `JSON.parse` of it.
 *
 * Why (a hostile trial 54, F1, answer side, Medium): a seller's answer whose message object
 * had 99,993 members (`{"jsonrpc":"2.0","id":1,"result":{…},"k0":0,…,"k99989":0}`, 1.09 MB,
 * inside `max_response_bytes` and `max_json_nodes`) took the parse path (the scan proves no
 * repeated name only for a message with at most one name outside the JSON-RPC members: its
 * `namesDistinct`), and V8 parses an object of many distinct keys slowly: ~200 ms of the event
 * loop per answer as JSON or as an SSE event, ~120-150 ms with the keys in its `error`
 * (test/regressions/wide-answer-object-stalls-event-loop.test.ts). JSON-RPC 2.0 §5 defines
 * four members of a response and three of an error object, so no seller's answer has that many.
 *
 * How: the message object's members are counted by the scan the stage makes anyway
 * (json-scan.ts JsonScanSummary.messageKeys: one comparison); the `error`'s only for a message
 * with an `error` (or a key written with an escape, which may be one) of at least
 * WIDE_MIN_BYTES bytes, as the request peek reads a host's (request/message-members.ts): the
 * message's members by the structure scan (mcp/json-scan.ts scanTopObject; walked only past its
 * table of 64), then the error's count by the same scan, no value made (message-members.ts
 * wideObjectOf, the peek's judgement too): about twice the scan's cost (a 1.09 MB `error` of
 * 99,990 members: ~2 scans, where its `JSON.parse` took 15 of them).
 */
import type { JsonScanSummary } from '../mcp/json-scan.js';
import { MAX_MESSAGE_MEMBERS, objectMembersOf, WIDE_MIN_BYTES, wideObjectOf } from '../request/message-members.js';

/**
 * True when `bytes` (a seller's message, scanned valid as `scan`) is a JSON object of more
 * than {@link MAX_MESSAGE_MEMBERS} members (each written key counted, repeats too), or whose
 * `error` member (the last one, an escaped key decoded, as `JSON.parse` keeps it) is an object
 * of more. False for anything else, an array (a batch) included: its elements are judged
 * parsed, as before.
 */
export function isWideMessage(bytes: Buffer, scan: JsonScanSummary): boolean {
  const members = scan.members;
  if (members === undefined) return false;
  // An object's message keys are its own (json-scan.ts messageKeys).
  if (scan.messageKeys > MAX_MESSAGE_MEMBERS) return true;
  if ((!members.hasError && members.plainKeys) || bytes.length < WIDE_MIN_BYTES) return false;
  // At most MAX_MESSAGE_MEMBERS members here: read whole (the scan's table, or the walk's
  // members whose key may be `error`). The stage's own scan (json-scan.ts JsonScanner) keeps no
  // member table nor the `error`'s range, and the walk over the message's bytes instead of this
  // scan costs ~2.2x its CPU time on a 4 MiB answer (the walk reads every byte outside strings
  // in JavaScript; measured in the re-read that unified the walks).
  const top = objectMembersOf(bytes);
  return top !== undefined && wideObjectOf(bytes, top, 'error') !== undefined;
}
