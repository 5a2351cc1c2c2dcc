/**
 * The checks the two scan-based rewrites share (lift-splice.ts: the lift of a legacy text-only
 * result; dedupe-splice.ts: the dedupe of a text copy of `structuredContent`): whether the
 * scanned answer is a tool result those rewrites may handle, answered without `JSON.parse` of
 * the whole message. Both then write the parse path's exact bytes (rewrite.ts -> normalize.ts
 * -> splice.ts) or decline (`undefined`: the caller takes the parse path).
 *
 * How: the JSON scan of the body (json-scan.ts members) gives the byte range of each
 * `result.content[k].text` string (the first SCAN_CONTENT_ITEMS items) and of
 * `result.structuredContent`. The message with those ranges elided (each replaced by `""`)
 * is a few hundred bytes: parsed, it answers every check of the parse path that does not
 * need the elided values (the response to the exchange's request, `resultType`, `isError`,
 * the items' `type`s, texts past the located ones). Issue 5 (1 KiB to 4 MiB tool results:
 * the parse path's `JSON.parse` of the message was its largest cost).
 *
 * Handled, else undefined: a `tools/call` / `tasks/result` response to the exchange's request
 * (a `CallToolResult` at `result`), normalization on for this host, every key unescaped, no
 * number outside strings that may lose digits (the parse path's raw-message check,
 * rewrite.ts), a valid UTF-8 body (splice.ts re-serializes otherwise), at least one located
 * text, `result` an object without a truthy `isError` and with `resultType` absent or
 * `"complete"`, `content` an array of the scanned count.
 */
import { isUtf8 } from 'node:buffer';
import type { Exchange } from '../exchange.js';
import type { ByteRange, ContentItems, JsonScanSummary, TopMembers } from '../mcp/json-scan.js';
import { isJsonObject, ownValue } from '../mcp/extract.js';
import type { TextJsonBounds } from '../mcp/types.js';
import { isResponseToExchange, toolResultLocation } from './rewrite.js';

/** A scanned tool result that passed the shared checks. */
export interface ScannedToolResult {
  readonly members: TopMembers;
  readonly items: ContentItems;
  /** `result.content` parsed from the elided message: each located text reads `""`. */
  readonly content: readonly unknown[];
  /** The bounds normalization applies to a text (normalize.ts NormalizeOptions). */
  readonly bounds: Required<TextJsonBounds>;
}

/**
 * The tool result of the scanned `body`, or undefined when the scan-based rewrites do not
 * handle it (see the module docs).
 *
 * @param body the seller's message bytes; `scan` its successful scan (json-scan.ts)
 */
export function scannedToolResult(exchange: Exchange, body: Buffer, scan: JsonScanSummary): ScannedToolResult | undefined {
  const members = scan.members;
  const items = members?.content;
  const { rpc, limits } = exchange;
  if (members === undefined || items === undefined || !members.plainKeys || !members.resultPlainKeys || !items.plainKeys || scan.numberMayBeLossy) return undefined;
  if (!exchange.normalize || rpc.kind !== 'request' || rpc.method === undefined || toolResultLocation(rpc.method, exchange.protocolVersion) !== 'result') return undefined;
  const elided: ByteRange[] = items.texts.filter((range) => range !== undefined);
  if (elided.length === 0 || !isUtf8(body)) return undefined;
  if (members.structuredContent !== undefined) elided.push(members.structuredContent);

  const message = parseElided(body, elided);
  if (!isJsonObject(message) || message.jsonrpc !== '2.0' || !isResponseToExchange(exchange, message)) return undefined;
  const result = ownValue(message, 'result');
  if (!isJsonObject(result) || ownValue(result, 'isError')) return undefined;
  if (Object.hasOwn(result, 'resultType') && result.resultType !== 'complete') return undefined;
  const content = ownValue(result, 'content');
  if (!Array.isArray(content) || content.length !== items.count) return undefined;
  const bounds = { maxTextBytes: limits.max_response_bytes, maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes };
  return { members, items, content, bounds };
}

/**
 * `JSON.parse` of `body` with each of `ranges` (string or object values, not overlapping, in
 * any order) replaced by `""`; undefined if it does not parse. The kept bytes are gathered
 * into one buffer and decoded once.
 */
function parseElided(body: Buffer, ranges: ByteRange[]): unknown {
  ranges.sort((a, b) => a[0] - b[0]);
  let length = body.length;
  for (const [start, end] of ranges) length -= end - start - 2;
  const kept = Buffer.allocUnsafe(length);
  let at = 0;
  let out = 0;
  for (const [start, end] of ranges) {
    out += body.copy(kept, out, at, start);
    kept[out++] = 0x22;
    kept[out++] = 0x22;
    at = end;
  }
  body.copy(kept, out, at);
  try {
    return JSON.parse(kept.toString('utf8'));
  } catch {
    return undefined; // not reached after a successful scan
  }
}
