/**
 * Whether an SSE event's data is a server-to-client JSON-RPC request (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`, ...), and its id: the SSE stage pauses the stream's
 * idle clock until the host answers it (routing/host-answer-waits.ts, whose doc holds the
 * rules and the reported failure: hostile trial 57, F3).
 *
 * Cost: a native search of the data for `id"` (each hit checked for the `"` before it) for an
 * event that reaches the stage's `deliver` on a stream where requests are tracked (~0.1-0.2 µs
 * for a 100-byte notification; searching `"id"` itself took twice that, a string of JSON
 * holding many `"`); only data holding `"id"` is scanned (the WebAssembly scan, json-scan.ts
 * scanJson). A notification holding no `"id"` costs the search alone, and most go out raw on
 * such streams (a block holding `"id` is parsed: sse-raw-events.ts), never reaching `deliver`.
 * Conservative: data it cannot read exactly (an escaped or repeated top-level key, an array, an
 * id written in more than MAX_AWAITED_ID_BYTES bytes) is no request for this, and the idle clock
 * then runs as before.
 */
import { scanJson, scanTopObject, TEXT_INVALID, TEXT_OVER_BOUND, type ByteRange, type JsonScanLimits, type TextMember, type TopMembers } from '../mcp/json-scan.js';
import { membersOfScan } from '../request/message-members.js';
import type { ScannedMembers } from './sse-message.js';
import { BACKSLASH, DIGIT_0, DIGIT_9, MINUS, QUOTE } from '../mcp/json-bytes.js';
import { MAX_AWAITED_ID_BYTES } from '../routing/host-answer-waits.js';
import { canonicalWrittenId, isMethodName } from './json-value-at.js';
import { requestIdInParams } from '../mcp/cancelled-id.js';
import { jsonStringWrittenAs } from '../mcp/text-members.js';

/**
 * The canonical id (json-value-at.ts canonicalWrittenId) of the JSON-RPC request that event
 * data `data` (its text, or its UTF-8 bytes) is: a JSON object with a top-level `method` that
 * is a non-empty string (json-value-at.ts isMethodName), an `id` that is a string or a number
 * written in at most MAX_AWAITED_ID_BYTES bytes, no `result` or `error`, every top-level key
 * written plainly and none repeated; undefined for anything else. `limits`: the structure
 * bounds the scan runs under (the event's data was within them already). `scanned`: the
 * judge's scan of `data` (bytes only; sse-message.ts forward verdict), read instead of scanning
 * again: a 1.05 MB notification holding nested `"id"` keys was scanned twice, ~8.7 ms more per
 * event (review of trial 57 F3's fix: test/regressions/server-request-check-rescans-events.test.ts).
 */
export function serverRequestIdOf(data: string | Buffer, limits: JsonScanLimits, scanned?: ScannedMembers): string | undefined {
  if (!holdsIdKey(data)) return undefined;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let m: TopMembers | undefined;
  if (scanned !== undefined && typeof data !== 'string') {
    if (scanned.repeatedName) return undefined;
    m = scanned.members;
  } else {
    scans++;
    const scan = scanJson(bytes, limits);
    if (!scan.ok || scan.repeatedName) return undefined;
    m = scan.members;
  }
  if (m === undefined || !m.plainKeys || m.hasResult || m.hasError || !isMethodName(bytes, m.method)) return undefined;
  const id = m.id;
  if (id === undefined || id[1] - id[0] > MAX_AWAITED_ID_BYTES) return undefined;
  const first = bytes[id[0]]!;
  if (first !== QUOTE && first !== MINUS && (first < DIGIT_0 || first > DIGIT_9)) return undefined;
  return canonicalWrittenId(bytes, id);
}

let scans = 0;

/** How many times {@link serverRequestIdOf} scanned event data itself (no `scanned` to reuse) since the process started: a seam for tests. */
export function serverRequestScanCount(): number {
  return scans;
}

/** `"notifications/cancelled"`, the method value as the SDKs write it (JSON-RPC method value text). */
const CANCELLED_METHOD_TEXT = '"notifications/cancelled"';
/** {@link CANCELLED_METHOD_TEXT} as bytes. */
export const CANCELLED_METHOD = Buffer.from(CANCELLED_METHOD_TEXT, 'latin1');

/**
 * The canonical id (json-value-at.ts canonicalWrittenId) of the request a seller's
 * `notifications/cancelled` event (data `data`: its text or UTF-8 bytes) names
 * (`params.requestId`, a string or a number written in at most MAX_AWAITED_ID_BYTES bytes; read
 * by mcp/cancelled-id.ts): the seller gave up on its own request to the host (the MCP
 * TypeScript SDK's request timeout, 60 s by default, or an abort), which the host then SHOULD
 * NOT answer (MCP 2025-03-26 "Cancellation"), so no host POST would end the wait (review of
 * trial 57 F3's fix: test/regressions/seller-cancelled-elicitation-pauses-session-idle.test.ts).
 * Undefined for anything else: a top-level `method` written other than exactly
 * `"notifications/cancelled"`, an `id`, `result` or `error`, an escaped or repeated top-level key.
 * `scanned`: the judge's scan of `data` (bytes only; sse-message.ts forward verdict), whose
 * top-level facts turn away data that is no such notification without a scan here.
 * Cost: a native search for the method's text; for data holding it, one scan of its top level
 * (json-scan.ts scanTopObject, under `limits`), which tells the facts above and finds `params`,
 * and one of the `params` value (mcp/cancelled-id.ts requestIdInParams). Before, a scanJson for
 * the facts and a second scan of the whole data to find `params` (hot-path review of the
 * elicitation tracking). A top level or `params` of 65-1000 members is read as the request
 * peek reads a host's (request/message-members.ts membersOfScan, objectMembersOf: the scan's
 * table, else a walk keeping the members whose key may be a name); more than 1000 such keys
 * -> undefined. Before, over 64 members at either level gave undefined, and the stream stayed
 * paused until the seller next spoke (hostile trial 58:
 * test/regressions/seller-wide-cancel-keeps-stream-paused.test.ts).
 */
export function sellerCancelledIdOf(data: string | Buffer, limits: JsonScanLimits, scanned?: ScannedMembers): string | undefined {
  if (typeof data === 'string' ? !data.includes(CANCELLED_METHOD_TEXT) : data.indexOf(CANCELLED_METHOD) === -1) return undefined;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (scanned !== undefined && typeof data !== 'string') {
    const m = scanned.members;
    if (scanned.repeatedName || m === undefined || !m.plainKeys || m.hasResult || m.hasError || m.id !== undefined || m.method === undefined) return undefined;
    if (!bytes.subarray(m.method[0], m.method[1]).equals(CANCELLED_METHOD)) return undefined;
  }
  cancelScans++;
  const top = scanTopObject(bytes, limits);
  if (top === undefined || top === TEXT_INVALID || top === TEXT_OVER_BOUND || top.top !== 'object') return undefined;
  // Wider than the scan's table (64): the walk's members whose key may be a name (message-members.ts membersOfScan), as the peek reads a host's.
  const members = membersOfScan(bytes, top).members;
  if (members === undefined) return undefined;
  // The facts scanJson tells (json-scan.ts TopMembers, JsonScanSummary.repeatedName), from the members as written.
  let method: TextMember | undefined;
  let params: TextMember | undefined;
  let seen = 0;
  for (const member of members) {
    const key = member.key;
    for (let i = key[0] + 1; i < key[1] - 1; i++) if (bytes[i] === BACKSLASH) return undefined;
    const name = messageNameOf(bytes, key);
    if (name === -1) {
      // A key equal to one of those names under Go's case folding (`"Method"`, `"reſult"`) is a repeat to the scan.
      if (foldsToMessageName(bytes, key)) return undefined;
      continue;
    }
    if ((seen & (1 << name)) !== 0) return undefined;
    seen |= 1 << name;
    if (name === NAME_METHOD) method = member;
    else if (name === NAME_PARAMS) params = member;
    else if (name !== NAME_JSONRPC) return undefined; // `id`, `result`, `error`
  }
  if (method === undefined || !bytes.subarray(method.value[0], method.value[1]).equals(CANCELLED_METHOD)) return undefined;
  const written = requestIdInParams(bytes, params);
  if (written === undefined || written.range[1] - written.range[0] > MAX_AWAITED_ID_BYTES) return undefined;
  return canonicalWrittenId(written.bytes, written.range);
}

let cancelScans = 0;

/** How many times {@link sellerCancelledIdOf} scanned event data's top level since the process started: a seam for tests. */
export function sellerCancelledScanCount(): number {
  return cancelScans;
}

/** The message names whose repeat scanJson reports at a top-level object (JsonScanSummary.repeatedName), as bytes: indexes {@link messageNameOf} returns. */
const MESSAGE_NAMES = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'].map((name) => Buffer.from(name, 'latin1'));
const NAME_JSONRPC = 0;
const NAME_METHOD = 2;
const NAME_PARAMS = 3;

/**
 * Whether the key at `bytes[key]` (quotes included, no escape), written as none of
 * {@link MESSAGE_NAMES}, equals `jsonrpc`, `id`, `method`, `result` or `error` under Go's case
 * folding (ASCII case; `ſ`, UTF-8 C5 BF, as `s`): what the scan counts as a repeated name
 * (assembly/json-scan.ts caseVariant, level 1; `params` is not folded there).
 */
function foldsToMessageName(bytes: Buffer, key: ByteRange): boolean {
  const at = key[0] + 1;
  const n = key[1] - key[0] - 2;
  const folds = (name: string, s = -1): boolean => {
    let k = 0;
    for (let i = 0; i < n; i++, k++) {
      if (k === s) {
        if (bytes[at + i] !== 0xc5 || bytes[at + i + 1] !== 0xbf) return false;
        i++;
      } else if ((bytes[at + i]! | 0x20) !== name.charCodeAt(k)) return false;
    }
    return k === name.length;
  };
  if (n === 2) return folds('id');
  if (n === 5) return folds('error');
  if (n === 6) return folds('result') || folds('method');
  if (n === 7) return folds('jsonrpc') || folds('result', 2);
  if (n === 8) return folds('jsonrpc', 1);
  return false;
}

/** The index in {@link MESSAGE_NAMES} of the key at `bytes[key]` (a JSON string, quotes included, no escape), or -1. */
function messageNameOf(bytes: Buffer, key: ByteRange): number {
  for (let k = 0; k < MESSAGE_NAMES.length; k++) if (jsonStringWrittenAs(bytes, key, MESSAGE_NAMES[k]!)) return k;
  return -1;
}

/** `id"` as bytes. */
const ID_QUOTE_BYTES = Buffer.from('id"', 'latin1');

/** `data` holds `"id"` (a cheaper search than for `"id"` itself: fewer candidate positions). */
function holdsIdKey(data: string | Buffer): boolean {
  if (typeof data === 'string') {
    for (let at = data.indexOf('id"'); at !== -1; at = data.indexOf('id"', at + 3)) if (at > 0 && data.charCodeAt(at - 1) === QUOTE) return true;
    return false;
  }
  for (let at = data.indexOf(ID_QUOTE_BYTES); at !== -1; at = data.indexOf(ID_QUOTE_BYTES, at + 3)) if (at > 0 && data[at - 1] === QUOTE) return true;
  return false;
}
