/**
 * Event data on a request's or a batch's SSE stream that is no JSON-RPC message of any kind
 * and names none: a JSON object with no `id`, `method`, `result` or `error` member (as
 * written, escaped, or under Go's case folding: mcp/repeated-names.ts namesKindMember), with
 * or without a `jsonrpc` (`{}`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","params":{}}`,
 * `{"status":"working"}`), or a non-empty array of only such objects. The SSE stage drops such
 * an event, reason `message_without_kind` (errors/codes.ts DROP_REASONS), instead of ending
 * the stream `upstream_not_mcp` (sse-event-judge.ts), its `id:` discarded with it as a
 * dropped event's is on the standalone GET stream: the host's last event ID stays the one
 * before, and a resume from it replays the event, dropped again.
 *
 * Why dropped, not refused: no host reads such data as anything. The MCP TypeScript SDK
 * client fails to parse it, reports it through `onerror` and reads on; the MCP Go SDK's
 * jsonrpc2 DecodeMessage refuses it (`{}`: no version tag; `{"jsonrpc":"2.0"}`: no method and
 * no valid id, ErrInvalidRequest); it can be routed to no call, so ending the call on it only
 * failed calls that succeed against the seller directly. A `jsonrpc` member alone changes
 * none of that (every reader above treats `{"jsonrpc":"2.0"}` as it treats `{}`), so it is
 * dropped too. Everything else the request's stream refuses is still refused: a message with
 * an `id` and no method (`{"jsonrpc":"2.0","id":999}`, `"ID":999`: a Go host reads it as a
 * response to its call 999), one with a `method` that names none (`""`, `null`, `"Method"`
 * alone), a response to another id, an array that mixes such objects with messages, a nested
 * array.
 *
 * Reported failure (a hostile trial 17, M1): the MCP TypeScript SDK's example
 * InMemoryEventStore names events `<stream>_<ms>_<random>` and replays them sorted as strings,
 * so a priming event (stored as `{}`) written in the same millisecond as a progress event
 * was sometimes replayed after it as `data: {}`; the gateway answered the call
 * `upstream_not_mcp` (~1 call in 5), while the SDK client reading the seller directly skipped
 * the event and returned the result (30/30)
 * (test/regressions/sdk-example-event-store-priming-replay-fails-call.test.ts).
 *
 * Cost: one parse of the data, only for an event the stream would otherwise end on.
 */
import { isJsonObject } from '../mcp/extract.js';
import { isJsonWhitespace } from '../mcp/json-bytes.js';
import { mayHoldNonFiniteLiteral, NOT_LENIENT_JSON, parseWithNonFiniteLiterals } from '../mcp/lenient-json.js';
import { namesKindMember } from '../mcp/repeated-names.js';

/**
 * True when event data `data` (its text, or its UTF-8 bytes) is JSON, or JSON as a lenient
 * host reads it (`NaN`, `Infinity`: mcp/lenient-json.ts), whose value names no kind of
 * message (module doc). The caller has checked it against the structure bounds. Errors: none
 * thrown.
 */
export function isKindlessEventData(data: string | Buffer): boolean {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (!mayHoldNonFiniteLiteral(data)) return false;
    value = parseWithNonFiniteLiterals(text);
    if (value === NOT_LENIENT_JSON) return false;
  }
  if (isJsonObject(value)) return !namesKindMember(value);
  return Array.isArray(value) && value.length > 0 && value.every((m) => isJsonObject(m) && !namesKindMember(m));
}

/**
 * True when event data `data` (its text, or its UTF-8 bytes) is exactly an empty JSON object,
 * `{}`, with JSON whitespace around or inside it (` { } `): what the MCP TypeScript SDK's
 * event stores keep for a priming event, which its InMemoryEventStore can replay after real
 * events on a resume. Its drop (`message_without_kind`) is logged at debug, not warn: it is
 * ordinary SDK traffic (sse-drop-log.ts; a hostile trial 47, F2:
 * test/regressions/sdk-priming-event-replayed-warns.test.ts). One pass, no parse.
 */
export function isEmptyObjectData(data: string | Buffer): boolean {
  const at = typeof data === 'string' ? (i: number): number => data.charCodeAt(i) : (i: number): number => data[i]!;
  const n = data.length;
  let i = 0;
  while (i < n && isJsonWhitespace(at(i))) i++;
  if (i === n || at(i++) !== 0x7b) return false; // {
  while (i < n && isJsonWhitespace(at(i))) i++;
  if (i === n || at(i++) !== 0x7d) return false; // }
  while (i < n && isJsonWhitespace(at(i))) i++;
  return i === n;
}
