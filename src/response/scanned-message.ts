/**
 * What the JSON stage and the SSE stage share once a message's bytes have been scanned
 * (json-scan.ts): the small values read straight from the bytes, whether the rewrite can
 * change the message at all, and the rewrite itself written as bytes (the seller's bytes
 * spliced where splice.ts can, else re-serialized). One place, so that both stages follow
 * the same rules (issue 5: "the gateway must not parse and re-serialize a body it leaves
 * unchanged").
 */
import type { Exchange } from '../exchange.js';
import type { ByteRange, JsonScanSummary, TopMembers } from '../mcp/json-scan.js';
import { rewriteResponse, toolResultLocation } from './rewrite.js';
import { spliceRewrite } from './splice.js';
import { spliceDedupe } from './dedupe-splice.js';
import { spliceLegacyLift } from './lift-splice.js';

/** The JSON value at `range` of `bytes` (a small member such as `jsonrpc` or `id`), or undefined. */
export function valueAt(bytes: Buffer, range: ByteRange | undefined): unknown {
  if (range === undefined) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8', range[0], range[1]));
  } catch {
    return undefined; // not reached after a successful scan (json-scan.ts checks the whole grammar); no throw if it were
  }
}

/**
 * Whether the JSON value at `range` of `bytes` is `expected`: exactly `valueAt(bytes, range)
 * === expected`. Read from the bytes, without decoding or `JSON.parse`, when the value is an
 * integer of up to 15 digits, `null`, or a string written as `JSON.stringify` writes a
 * printable ASCII string (no escape): the `"2.0"` and ids of real answers. Otherwise (an
 * escape, a fraction, a long number, a mismatch that an escape might explain) parsed as
 * before. Why (issue 5, 1 KiB results): two `toString` + `JSON.parse` per response were a
 * measurable part of its fixed cost.
 */
export function jsonValueIs(bytes: Buffer, range: ByteRange | undefined, expected: string | number | null): boolean {
  if (range === undefined) return false;
  const [start, end] = range;
  if (typeof expected === 'string') {
    if (end - start === expected.length + 2 && bytes[start] === 0x22) {
      let k = 0;
      while (k < expected.length) {
        const c = expected.charCodeAt(k);
        if (c !== bytes[start + 1 + k] || c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) break;
        k++;
      }
      // Every byte between the quotes is that character, unescaped: the string is `expected`.
      if (k === expected.length) return true;
    }
  } else if (typeof expected === 'number') {
    let k = bytes[start] === 0x2d ? start + 1 : start;
    const negative = k > start;
    if (end - k >= 1 && end - k <= 15) {
      let value = 0;
      while (k < end) {
        const digit = bytes[k]! - 0x30;
        if (digit < 0 || digit > 9) break;
        value = value * 10 + digit;
        k++;
      }
      // An integer below 10^15: exactly the number JSON.parse reads.
      if (k === end) return (negative ? -value : value) === expected;
    }
  } else if (end - start === 4 && bytes[start] === 0x6e) {
    return true; // `null` (the only valid 4-byte value starting with `n`)
  }
  return valueAt(bytes, range) === expected;
}

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
