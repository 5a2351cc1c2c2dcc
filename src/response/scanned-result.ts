/**
 * The checks the two scan-based rewrites share (lift-splice.ts: the lift of a legacy text-only
 * result; dedupe-splice.ts: the dedupe of a text copy of `structuredContent`): whether the
 * scanned answer is a tool result those rewrites may handle, answered without `JSON.parse`.
 * Both then write the parse path's exact bytes (rewrite.ts -> normalize.ts -> splice.ts) or
 * decline (`undefined`: the caller takes the parse path).
 *
 * How: the JSON scan of the body (json-scan.ts members) gives the byte ranges of the top-level
 * `jsonrpc` and `id`, of `result.isError`, `result.resultType` and `result.structuredContent`,
 * and of each `result.content[k].text` and `.type` string (the first SCAN_CONTENT_ITEMS
 * items), each the last one written, as `JSON.parse` keeps. The checks of the parse path that
 * do not need the texts (the response to the exchange's request, `resultType`, `isError`,
 * the items' `type`s) read those small values from the bytes (json-value-at.ts). Issue 5
 * (1 KiB to 4 MiB tool results): until 2026-12-01 they parsed the message with the texts and
 * `structuredContent` elided, which cost 9-15 µs of gateway CPU per 1 KiB (b) result in the
 * bench (bench/README.md, "A cost in process is not the cost in the bench").
 *
 * Handled, else undefined: a `tools/call` / `tasks/result` response to the exchange's request
 * (a `CallToolResult` at `result`), normalization on for this host, every key unescaped, no
 * number outside strings that may lose digits (the parse path's raw-message check,
 * rewrite.ts), a valid UTF-8 body (splice.ts re-serializes otherwise), at least one located
 * text, at most SCAN_CONTENT_ITEMS items, `result` an object without a truthy `isError` and
 * with `resultType` absent or `"complete"`, `content` an array.
 */
import { isUtf8 } from 'node:buffer';
import type { Exchange } from '../exchange.js';
import { SCAN_CONTENT_ITEMS, type ByteRange, type ContentItems, type JsonScanSummary, type TopMembers } from '../mcp/json-scan.js';
import type { TextJsonBounds } from '../mcp/types.js';
import { toolResultLocation } from './rewrite.js';
import { isRequestId, jsonValueIs } from './json-value-at.js';

/** A scanned tool result that passed the shared checks. */
export interface ScannedToolResult {
  readonly members: TopMembers;
  /** `result.content`, `count` <= SCAN_CONTENT_ITEMS: each item's `text` and `type` range is known (undefined when not a string). */
  readonly items: ContentItems;
  /** The bounds normalization applies to a text (normalize.ts NormalizeOptions). */
  readonly bounds: Required<TextJsonBounds>;
}

/**
 * The shared checks for `body` (the seller's message bytes) and its successful `scan`; the
 * scan's members and the text bounds when they pass, else undefined.
 */
export function scannedToolResult(exchange: Exchange, body: Buffer, scan: JsonScanSummary): ScannedToolResult | undefined {
  const members = scan.members;
  const items = members?.content;
  const { rpc, limits } = exchange;
  if (members === undefined || items === undefined || !members.plainKeys || !members.resultPlainKeys || !items.plainKeys || scan.numberMayBeLossy) return undefined;
  if (!exchange.normalize || rpc.kind !== 'request' || rpc.method === undefined || toolResultLocation(rpc.method, exchange.protocolVersion) !== 'result') return undefined;
  // Items past the located ones would need their values: the parse path decides.
  if (items.count > SCAN_CONTENT_ITEMS || !items.texts.some((range) => range !== undefined)) return undefined;
  // The response to the request (rewrite.ts isResponseToExchange), whose `result` is an object.
  if (!jsonValueIs(body, members.jsonrpc, '2.0') || !isRequestId(body, members.id, rpc) || members.resultEnd === undefined) return undefined;
  if (isTruthy(body, members.isError)) return undefined;
  if (members.resultType !== undefined && !jsonValueIs(body, members.resultType, 'complete')) return undefined;
  if (!isUtf8(body)) return undefined;
  const bounds = { maxTextBytes: limits.max_response_bytes, maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes };
  return { members, items, bounds };
}

/**
 * Whether item `k` of a checked result is a text item: an object whose (last) `type` is the
 * string `"text"` (normalize.ts: only those are extracted or deduped). A scanned item with no
 * `type` range is not one: it is no object, has no `type`, or a `type` that is no string.
 */
export function isTextItem(body: Buffer, items: ContentItems, k: number): boolean {
  return jsonValueIs(body, items.types[k], 'text');
}

/**
 * JavaScript truthiness of the JSON value at `range` (undefined: absent, falsy), as the parse
 * path's `if (result.isError)` reads it: `false`, `null`, `""` and any spelling of zero are
 * falsy; every other value is truthy (an escape always stands for a character, so only `""`
 * is the empty string).
 */
function isTruthy(body: Buffer, range: ByteRange | undefined): boolean {
  if (range === undefined) return false;
  const first = body[range[0]];
  if (first === 0x66 /* f */ || first === 0x6e /* n */) return false;
  if (first === 0x22 /* " */) return range[1] - range[0] > 2;
  if (first === 0x2d /* - */ || (first! >= 0x30 && first! <= 0x39)) return Number(body.toString('latin1', range[0], range[1])) !== 0;
  return true; // true, an object, an array
}
