/**
 * What the JSON stage and the SSE stage share once a message's bytes have been scanned
 * (json-scan.ts): the small values read straight from the bytes, whether the rewrite can
 * change the message at all, and the rewrite itself written as bytes (the seller's bytes
 * spliced where splice.ts can, else re-serialized). One place, so that both stages follow
 * the same rules (issue 5: "the gateway must not parse and re-serialize a body it leaves
 * unchanged").
 */
import type { Exchange } from '../exchange.js';
import type { JsonScanSummary, TopMembers } from '../mcp/json-scan.js';
import { rewriteResponse, toolResultLocation } from './rewrite.js';
import { spliceRewrite } from './splice.js';
import { spliceDedupe } from './dedupe-splice.js';
import { spliceLegacyLift } from './lift-splice.js';

/** False when the rewrite stage provably leaves this answer unchanged (rewrite.ts, normalize.ts). */
export function mayRewrite(exchange: Exchange, scan: JsonScanSummary): boolean {
  const { method } = exchange.rpc;
  if (!exchange.normalize || method === undefined || toolResultLocation(method, exchange.protocolVersion) === undefined) return false;
  // Normalization only ever parses text that starts with `{` (extract.ts parseTextObject):
  // without such a text there is nothing to dedupe and nothing to lift.
  return scan.textMayHoldObject;
}

/**
 * rewriteResponse on the parsed `message` of the scanned `bytes`, and the bytes to send:
 * `bytes` itself when nothing changed; when it did, the seller's bytes with the changed
 * strings spliced (a `result` of a tool call, splice.ts) or else the rewritten message
 * serialized.
 */
export function rewriteScanned(exchange: Exchange, message: unknown, bytes: Buffer, scan: JsonScanSummary): { rewritten: ReturnType<typeof rewriteResponse>; out: Buffer } {
  const members: TopMembers | undefined = scan.members;
  const sc = members?.plainKeys ? members.structuredContent : undefined;
  const rewritten = rewriteResponse(exchange, message, bytes, {
    numbersRoundTrip: !scan.numberMayBeLossy,
    structuredContentText: sc && bytes.toString('utf8', sc[0], sc[1]),
  });
  if (!rewritten.changed) return { rewritten, out: bytes };
  const spliced = members !== undefined && toolResultLocation(exchange.rpc.method!, exchange.protocolVersion) === 'result' ? spliceRewrite(bytes, members, message, rewritten.message) : undefined;
  return { rewritten, out: spliced ?? Buffer.from(JSON.stringify(rewritten.message), 'utf8') };
}

/**
 * The rewrite of a scanned tool result told from the scan alone, without `JSON.parse`: a text
 * copy of `structuredContent` deduped (dedupe-splice.ts) or a legacy text-only result lifted
 * (lift-splice.ts), as the parse path's exact bytes; undefined when the scan cannot tell (the
 * caller then parses: {@link rewriteScanned}). Call only after {@link mayRewrite}, for a
 * message whose keys the caller's checks read as plain.
 */
export function spliceScanned(exchange: Exchange, bytes: Buffer, scan: JsonScanSummary): { out: Buffer; action: 'deduped' | 'lifted' } | undefined {
  const dedupe = scan.members?.structuredContent !== undefined;
  const out = dedupe ? spliceDedupe(exchange, bytes, scan) : spliceLegacyLift(exchange, bytes, scan);
  return out && { out, action: dedupe ? 'deduped' : 'lifted' };
}
