/**
 * Reads the JSON-RPC facts the gateway needs from the host's request body (id, method,
 * tool name) without changing it: the original bytes are what is forwarded.
 *
 * Source: gateway issue item 4 ("the gateway reads the JSON-RPC request it forwards so that
 * a limit and an error can be tied to the request"); ARCHITECTURE §3 (refusals).
 */
import type { RpcPeek } from '../exchange.js';
import { scanJson } from '../mcp/json-scan.js';
import { hasLossyNumber } from '../mcp/json-numbers.js';

export const NO_BODY: RpcPeek = Object.freeze({ kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined });

export type PeekResult =
  | { ok: true; peek: RpcPeek }
  | { ok: false; kind: 'parse_error' | 'invalid_request'; message: string; id: string | number | null; idText: string | undefined };

const UNBOUNDED = { maxDepth: Infinity, maxNodes: Infinity };

/**
 * The JSON text of the body's top-level `id` when it is a number that `JSON.parse` changed
 * (`9007199254740993` read as `9007199254740992`), so that a minted answer can carry it
 * exactly (errors/json-rpc-text.ts); undefined otherwise, and when the id cannot be found
 * by its plain key (a key written with escapes: the parsed value is used then). Only numbers
 * beyond the safe integers are looked at: every other id the host sends is exact.
 */
function idTextOf(body: Buffer, id: string | number | null): string | undefined {
  if (typeof id !== 'number' || Number.isSafeInteger(id)) return undefined;
  const scan = scanJson(body, UNBOUNDED);
  const range = scan.ok && scan.members?.plainKeys ? scan.members.id : undefined;
  if (range === undefined) return undefined;
  const text = body.toString('latin1', range[0], range[1]);
  return hasLossyNumber(text) ? text : undefined;
}

function isId(v: unknown): v is string | number | null {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * Parses a request body (UTF-8 JSON bytes; `text`: their decoding, when the caller has it)
 * into a peek.
 * - not JSON -> `parse_error` (JSON-RPC -32700, HTTP 400);
 * - JSON but not a JSON-RPC message (not an object/array, no string `method` on a non-response)
 *   -> `invalid_request` (-32600, HTTP 400), with the id when one could be read;
 * - an array -> `batch` (forwarded and bounded, never rewritten).
 * A JSON-RPC *response* sent by the host (answer to a server->client request such as
 * `elicitation/create`) is a valid body: it is forwarded as a `notification`-kind peek.
 * Structure bounds are checked by the caller before this runs.
 */
export function peekJsonRpc(body: Buffer, text: string = body.toString('utf8')): PeekResult {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { ok: false, kind: 'parse_error', message: 'Parse error: the request body is not valid JSON.', id: null, idText: undefined };
  }
  if (Array.isArray(msg)) {
    if (msg.length === 0) {
      return { ok: false, kind: 'invalid_request', message: 'Invalid Request: empty JSON-RPC batch.', id: null, idText: undefined };
    }
    return { ok: true, peek: { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined } };
  }
  if (msg === null || typeof msg !== 'object') {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: a JSON-RPC message must be an object.', id: null, idText: undefined };
  }
  const m = msg as Record<string, unknown>;
  const id = Object.hasOwn(m, 'id') && isId(m.id) ? m.id : null;
  const idText = idTextOf(body, id);
  if (m.jsonrpc !== '2.0') {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "jsonrpc" must be "2.0".', id, idText };
  }
  if (typeof m.method !== 'string') {
    if (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error')) {
      // The host answering a server-initiated request: forwarded as is.
      return { ok: true, peek: { kind: 'notification', id, idText, method: undefined, toolName: undefined } };
    }
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "method" must be a string.', id, idText };
  }
  if (Object.hasOwn(m, 'id') && !isId(m.id)) {
    return { ok: false, kind: 'invalid_request', message: 'Invalid Request: "id" must be a string, a number or null.', id: null, idText: undefined };
  }
  let toolName: string | undefined;
  if (m.method === 'tools/call' && m.params !== null && typeof m.params === 'object') {
    const name = (m.params as Record<string, unknown>).name;
    if (typeof name === 'string') toolName = name;
  }
  const kind = Object.hasOwn(m, 'id') ? 'request' : 'notification';
  return { ok: true, peek: { kind, id, idText, method: m.method, toolName } };
}
