/**
 * What the JSON stage and the SSE stage share once a message's bytes have been scanned
 * (json-scan.ts): the small values read straight from the bytes, whether the rewrite can
 * change the message at all, and the rewrite itself written as bytes (the seller's bytes
 * spliced where splice.ts can, else re-serialized). One place, so that both stages follow
 * the same rules (issue 5: "the gateway must not parse and re-serialize a body it leaves
 * unchanged"). Whether a rewritten answer fits the exchange's limits is each stage's check
 * (rewrite-room.ts), which knows what the host has received.
 */
import type { Exchange } from '../exchange.js';
import type { ByteRange, ContentItems, JsonScanSummary, TopMembers } from '../mcp/json-scan.js';
import type { ToolResultLocation } from '../mcp/tool-result-ranges.js';
import { rewriteResponse, toolResultLocation, UNCHANGED, type RewriteOutcome } from './rewrite.js';
import { liftedTextSplicedAsWritten, spliceRewrite, spliceTarget, type SpliceTarget } from './splice.js';
import { reserializedLiftLoss } from '../mcp/reserialized-lift.js';
import { valueCount } from '../mcp/deep-equal.js';
import { spliceDedupe } from './dedupe-splice.js';
import { spliceLegacyLift } from './lift-splice.js';
import { stringifyWithSellerId } from './reserialized-message.js';

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
 * strings spliced (splice.ts: a tool call's `result` or a 2026-07-28 `tasks/get`'s
 * `result.result`, any number of items) or else, for a lift only, the rewritten message
 * serialized, its `id` still the seller's bytes (reserialized-message.ts): where the splice
 * declines (a key written with an escape on the way to the texts, a body that is not valid
 * UTF-8). Re-serialized, every value outside the lifted text is written as `JSON.stringify`
 * writes it (`1.0` as `1`, `1E2` as `100`, integer-like keys moved first in ascending order,
 * whitespace dropped, escapes rewritten); a dedupe is therefore never re-serialized: the
 * seller's bytes go out, so its `structuredContent` is never re-spelled (review 38). A lift
 * that would go out serialized is not made when its text repeats a key or holds a negative zero, which
 * `JSON.stringify` of its object would drop (mcp/reserialized-lift.ts; recorded as
 * `text_not_lifted`): the seller's bytes go out (a hostile trial 26, L1:
 * test/regressions/tasks-get-lift-loses-repeated-key-and-negative-zero.test.ts). Nor when the
 * rest of the message does (recorded the same way, a hostile trial 39, item 2), or holds a
 * number a double cannot carry (rewrite.ts: `lossy_number`).
 *
 * `locate`: where the tool result is in `bytes` (splice.ts spliceTarget, the default; a seam
 * for tests to count its walks), asked once at most, only when the rewrite needs its ranges.
 */
export function rewriteScanned(
  exchange: Exchange,
  message: unknown,
  bytes: Buffer,
  scan: JsonScanSummary,
  locate: typeof spliceTarget = spliceTarget,
): { rewritten: ReturnType<typeof rewriteResponse>; out: Buffer } {
  const members: TopMembers | undefined = scan.members;
  const { method } = exchange.rpc;
  const location = method === undefined ? undefined : toolResultLocation(method, exchange.protocolVersion);
  // Where the tool result is in the bytes (splice.ts spliceTarget), found once, when first
  // needed: for a `result`, the scan's ranges (a walk of the bytes, below, only once a rewrite
  // was made, for a result of more items than the scan's first 16); for a 2026-07-28
  // `tasks/get`'s `result.result`, a walk made when the rewrite first asks for the seller's
  // bytes of `structuredContent` or of a text (a dedupe's copy check, a copy's length), so
  // that its rewrite reads them as a `result`'s does (review 38: both went out re-serialized,
  // the seller's `structuredContent` and `_meta` re-spelled), or once a rewrite was made; an
  // answer the rewrite leaves before that (not `completed`, `isError`, no text to lift or
  // dedupe) is never walked (a re-read).
  // `found` once `located`: one getter, shared by the rewrite's two questions and the splice.
  let located = false;
  let found: SpliceTarget | undefined;
  const targetOf = (): SpliceTarget | undefined => {
    if (!located) {
      found = members !== undefined && location !== undefined ? locate(bytes, members, location) : undefined;
      located = true;
    }
    return found;
  };
  const rewritten = rewriteResponse(exchange, message, bytes, {
    numbersRoundTrip: !scan.numberMayBeLossy,
    messageNodes: scan.nodes,
    structuredContentText: () => {
      const range = writtenStructuredContent(location, members, targetOf);
      return range && bytes.toString('utf8', range[0], range[1]);
    },
    writtenTextBytes: (index) => {
      const range = writtenTexts(location, members, targetOf)?.[index];
      return range && range[1] - range[0];
    },
  });
  if (!rewritten.changed) return { rewritten, out: bytes };
  const target = targetOf();
  // A lift whose object would go out re-serialized (below, or inside the splice for a text
  // that is not well-formed) is not made when that drops what the text says: a repeated key or
  // a negative zero (mcp/reserialized-lift.ts; a hostile trial 26, L1). Checked before the
  // splice in that rare case, else only once the splice declined.
  const { lifted } = rewritten;
  if (lifted !== undefined && target !== undefined && !liftedTextSplicedAsWritten(lifted.text) && liftLosesOnReserialization(exchange, lifted)) return unchanged(message, bytes);
  const spliced = target !== undefined ? spliceRewrite(bytes, target, location!, message, rewritten.message) : undefined;
  if (spliced !== undefined) return { rewritten, out: spliced };
  // A dedupe the splice declines (a key written with an escape on the way to a text, a body
  // that is not valid UTF-8) is not made: re-serialized, the seller's own `structuredContent`
  // and `_meta` would go out re-spelled (`1.0` as `1`, `1E3` as `1000`, integer-like keys
  // reordered: ARCHITECTURE §5, "never drop or change `structuredContent` a seller sent";
  // review 38). The seller's bytes go out, every copy kept.
  if (rewritten.action === 'deduped') return unchanged(message, bytes);
  if (lifted !== undefined && liftLosesOnReserialization(exchange, lifted)) return unchanged(message, bytes);
  // The whole message goes out re-serialized, which drops what the seller wrote outside any
  // lifted text too: a key written twice anywhere (in the `structuredContent` a text copy was
  // found equal to, the envelope, `_meta`) keeps only its last value, and a -0 loses its sign.
  // Then no rewrite is made: the seller's bytes go out (a hostile trial 27, M1: a 2026-07-28
  // `tasks/get` whose `structuredContent` wrote `status` twice was deduped and went out with
  // one; M2: `{"n":-0}` went out `{"n":0}`;
  // test/regressions/reserialized-rewrite-drops-repeated-key-and-negative-zero.test.ts). One
  // walk of the parsed message, only on this path, which stringifies it anyway. A lift not
  // made so says why (`text_not_lifted`: `repeated_key` or `negative_zero`, as for the text;
  // hostile trial 39, item 2: it was silent,
  // test/regressions/reserialized-lift-skipped-silently-for-value-outside-text.test.ts).
  const loss = messageLossOnReserialization(message, scan.nodes);
  if (loss !== undefined) {
    if (rewritten.action === 'lifted') exchange.textNotLifted = loss;
    return unchanged(message, bytes);
  }
  // Its id as the seller wrote it (`7.0` stays `7.0`, as the splice keeps it): reserialized-message.ts.
  const out = Buffer.from(stringifyWithSellerId(rewritten.message, bytes, members), 'utf8');
  return { rewritten, out };
}

/** No rewrite made: the seller's bytes go out (rewriteScanned, on the paths that refuse one). */
function unchanged(message: unknown, bytes: Buffer): { rewritten: RewriteOutcome; out: Buffer } {
  return { rewritten: UNCHANGED(message), out: bytes };
}

/** `walked` (the tool result of a `result.result`, splice.ts spliceTarget) when its keys are plain: splice.ts reads its ranges under the same condition. */
function plainWalked(location: ToolResultLocation | undefined, walked: () => SpliceTarget | undefined): SpliceTarget | undefined {
  const target = location === 'result.result' ? walked() : undefined;
  return target?.plainKeys ? target : undefined;
}

/** The seller's range of the tool result's `structuredContent` (rewriteScanned: the scan's for a `result`, else the walk's, `walked` asked only then); undefined where a key on the way is escaped. */
function writtenStructuredContent(location: ToolResultLocation | undefined, members: TopMembers | undefined, walked: () => SpliceTarget | undefined): ByteRange | undefined {
  return location === 'result' ? (members?.plainKeys ? members.structuredContent : undefined) : plainWalked(location, walked)?.structuredContent;
}

/** The seller's range of each located text of the tool result, as {@link writtenStructuredContent} (splice.ts reads the same ranges under the same conditions). */
function writtenTexts(location: ToolResultLocation | undefined, members: TopMembers | undefined, walked: () => SpliceTarget | undefined): ContentItems['texts'] | undefined {
  return location === 'result' ? (members?.plainKeys && members.resultPlainKeys && members.content?.plainKeys ? members.content.texts : undefined) : plainWalked(location, walked)?.content?.texts;
}

/**
 * What `message` (what `JSON.parse` made of a seller message whose scan counted
 * `writtenValues` JSON values) would lose of what the seller wrote if re-serialized, or
 * undefined when nothing: `repeated_key`, a key written more than once somewhere (fewer values
 * parsed than written; told first, as reserialized-lift.ts tells a text's), or
 * `negative_zero`.
 */
function messageLossOnReserialization(message: unknown, writtenValues: number): 'repeated_key' | 'negative_zero' | undefined {
  const facts = { negativeZero: false };
  if (valueCount(message, facts) < writtenValues) return 'repeated_key';
  return facts.negativeZero ? 'negative_zero' : undefined;
}

/**
 * Whether the lift `lifted` (rewrite.ts RewriteOutcome.lifted), re-serialized, would drop what
 * its text says (mcp/reserialized-lift.ts): then it is recorded on the exchange as not lifted
 * (`text_not_lifted`: `repeated_key` or `negative_zero`, the exchange line and
 * `adcp_gateway_texts_not_lifted_total`), and the caller sends the seller's bytes.
 */
function liftLosesOnReserialization(exchange: Exchange, lifted: NonNullable<RewriteOutcome['lifted']>): boolean {
  const loss = reserializedLiftLoss(lifted.text, lifted.value, lifted.nodes);
  if (loss === undefined) return false;
  exchange.textNotLifted = loss;
  return true;
}

/**
 * The rewrite of a scanned tool result told from the scan alone, without `JSON.parse`: a text
 * copy of `structuredContent` deduped (dedupe-splice.ts) or a legacy text-only result lifted
 * (lift-splice.ts), as the parse path's exact bytes (`action: 'none'`, `out` = `bytes`: the
 * answer is left unchanged, every copy being no longer than its summary); undefined when the scan cannot tell (the
 * caller then parses: {@link rewriteScanned}). Call only after {@link mayRewrite}, for a
 * message whose keys the caller's checks read as plain.
 */
export function spliceScanned(exchange: Exchange, bytes: Buffer, scan: JsonScanSummary): { out: Buffer; action: 'deduped' | 'lifted' | 'none' } | undefined {
  const dedupe = scan.members?.structuredContent !== undefined;
  const out = dedupe ? spliceDedupe(exchange, bytes, scan) : spliceLegacyLift(exchange, bytes, scan);
  // `bytes` itself: copies found, each kept as written (no longer than its summary): unchanged.
  return out && { out, action: out === bytes ? 'none' : dedupe ? 'deduped' : 'lifted' };
}
