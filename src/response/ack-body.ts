/**
 * A seller's acknowledgement body: what a seller sends in the 2xx (non-SSE) answer to a POST
 * that carries no request (a notification, a host's JSON-RPC response, or a batch of only
 * those) when it is no JSON-RPC message: `Accepted` as `text/plain`, `{"status":"accepted"}`,
 * `{}`, `null`, `OK`, with any Content-Type or none. MCP Streamable HTTP (2025-06-18, "Sending
 * Messages to the Server") wants "202 Accepted with no body" there; sellers that send a body
 * anyway are common, and the MCP TypeScript SDK client (1.32.2) discards the body of any POST
 * that carries no request, so such a body never reaches a host through it. The gateway drops
 * it too: the host gets 202 Accepted with no body (json-stage.ts dropAckBody), the exchange
 * line says how many bytes were dropped (`ack_body_dropped_bytes`).
 *
 * A body that holds a JSON-RPC message (a response, an error, a request, a notification, in
 * an array or not) is not an acknowledgement: it is judged as before (json-stage.ts: passed on
 * when it holds no response, `upstream_not_mcp` when it holds one or is no valid message).
 * "Holds a JSON-RPC message" is read wide, as the most lenient host would read the body:
 * - the JSON value (strict, or as a lenient reader reads `NaN` / `Infinity` literals:
 *   mcp/lenient-json.ts) is an object with a member `jsonrpc`, `id`, `method`, `result` or
 *   `error`, the name as written, escaped or under Go's case folding (`"ID"`, `"reſult"`:
 *   mcp/repeated-names.ts foldsTo, how the MCP Go SDK's decoder matches names), whatever its
 *   value (`{"jsonrpc":"1.0"}` and `{"id":1}` are refused, as before);
 * - or an array with such an object among its elements, at any depth of nested arrays;
 * - or a text over the structure bounds (`max_json_depth`, `max_json_nodes`), which is not
 *   read further: a body with no Content-Type is refused `upstream_not_mcp` then, as before,
 *   and a JSON body got `json_depth` / `json_nodes` while it was read (json-stage.ts);
 * - or an object of more than 1000 members (or whose `error` has more: wide-answer.ts), which
 *   is not parsed either: refused `upstream_not_mcp` (a hostile trial 54, F1).
 * Anything else is an acknowledgement: no JSON text (even leniently), a scalar (`null`, `1`,
 * `"ok"`), an object with none of those names, an array of such values (`[]` included).
 *
 * Reported failure (a new user's hostile trial 12, M2): a seller answering notifications with
 * 202 `Accepted`, 202 `{"status":"accepted"}`, 200 `{}`, 200 `null` or 200 `text/plain` `OK`
 * worked with the MCP SDK client directly, but through the gateway `notifications/initialized`
 * got HTTP 502 `upstream_not_mcp` and the SDK client's `connect()` failed
 * (test/regressions/notification-ack-body-breaks-sdk-connect.test.ts).
 *
 * Cost: only on a non-empty answer to a POST without a request: one `JSON.parse` of a text
 * within the structure bounds (a body with no JSON Content-Type is scanned first for them;
 * a JSON body's value is then judged from it, not parsed again: readAckBody), plus a lenient
 * parse of a text that is no JSON and holds `NaN` or `Infinity`.
 */
import { JsonScanner, type JsonScanLimits, type JsonScanResult } from '../mcp/json-scan.js';
import { namesMessageMember } from '../mcp/repeated-names.js';
import { isJsonObject } from '../mcp/extract.js';
import { mayHoldNonFiniteLiteral, NOT_LENIENT_JSON, parseWithNonFiniteLiterals } from '../mcp/lenient-json.js';
import { NOT_JSON, parseJsonText } from '../mcp/parse-json.js';
import { isWideMessage } from './wide-answer.js';

/** What {@link readAckBody} returns for an acknowledgement body. */
export const ACK_BODY: unique symbol = Symbol('acknowledgement body');

/**
 * {@link ACK_BODY} when `text` (a seller's non-empty answer body, after any leading BOM, which
 * `scan` read) is an acknowledgement body (module doc); otherwise what was parsed to tell, so
 * the caller need not parse again (json-stage.ts): the JSON value of `text` when `scan` read an
 * object or an array within the bounds (mcp/parse-json.ts parseJsonText: {@link NOT_JSON} if
 * `JSON.parse` refuses what the scan read, never in practice), else undefined (not parsed: no
 * JSON text, or over the bounds). `scan`: the structure scan of `text` under the agent's
 * bounds; a depth or node breach makes it no acknowledgement. `wide`: isWideMessage(text, scan)
 * (wide-answer.ts) when the caller judged it already (json-stage.ts judges it once for both
 * readings of the body), else judged here when needed.
 */
export function readAckBody(text: Buffer, scan: JsonScanResult, wide?: boolean): unknown {
  if (!scan.ok) {
    if (scan.reason !== 'syntax') return undefined;
    // No JSON text: an acknowledgement unless a lenient host reads a message in it.
    if (!mayHoldNonFiniteLiteral(text)) return ACK_BODY;
    const lenient = parseWithNonFiniteLiterals(text.toString('utf8'));
    return lenient === NOT_LENIENT_JSON || !holdsMessage(lenient) ? ACK_BODY : undefined;
  }
  // A scalar holds no message; an object or array within the bounds is parsed, but for an
  // object of more than 1000 members, no acknowledgement and not parsed (wide-answer.ts).
  if (scan.top === 'scalar') return ACK_BODY;
  if (wide ?? isWideMessage(text, scan)) return undefined;
  const value = parseJsonText(text);
  // NOT_JSON: the scan read JSON, so never; refusing is the safe side.
  return value !== NOT_JSON && !holdsMessage(value) ? ACK_BODY : value;
}

/**
 * Whether a body no scan has read (one with no JSON Content-Type) is an acknowledgement body
 * ({@link readAckBody}): `body` as read, a leading BOM dropped, scanned under `limits` at once.
 */
export function isUnscannedAckBody(body: Buffer, limits: JsonScanLimits): boolean {
  const scanner = new JsonScanner({ ...limits, ignoreBom: true });
  scanner.feed(body);
  const scan = scanner.end();
  return readAckBody(scanner.leadingBomBytes === 0 ? body : body.subarray(scanner.leadingBomBytes), scan) === ACK_BODY;
}

/**
 * An object naming a JSON-RPC member, or an array holding one at any depth of nested arrays
 * (module doc). Iterative: a leniently parsed text was not bounded in depth.
 */
function holdsMessage(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (Array.isArray(v)) {
      for (const element of v) pending.push(element);
      continue;
    }
    if (isJsonObject(v) && namesMessageMember(v)) return true;
  }
  return false;
}
