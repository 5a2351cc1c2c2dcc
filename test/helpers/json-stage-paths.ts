/**
 * The JSON stage's two ways of answering a scanned 2xx body (src/response/json-stage.ts
 * answerFromBody), as it runs them, for the differential fuzz
 * (test/unit/rewrite-paths-differential-fuzz.test.ts): `'scan'` is the stage as it is (the
 * answer told from the scan, spliceScanned, when the scan decides it; else the parse path),
 * `'parse'` the stage with the scan's shortcut off (what it does for a host whose discovery
 * hooks want the parsed message: `hooks.wantsResponseMessage`), i.e. JSON.parse, the parsed
 * checks, rewriteScanned. Both end as the stage ends: the room check (rewrite-room.ts) and the
 * bytes sent. Only a single request's answer (no batch, no array body).
 *
 * Keep in step with answerFromBody there (answersExchange and wellFormedUtf8 are the stage's own).
 */
import type { Exchange } from '../../src/exchange.js';
import { JsonScanner, type JsonScanSummary } from '../../src/mcp/json-scan.js';
import { NOT_JSON, parseJsonText } from '../../src/mcp/parse-json.js';
import { repeatsMemberName } from '../../src/mcp/repeated-names.js';
import { answersExchange, wellFormedUtf8 } from '../../src/response/json-stage.js';
import { isResponseToExchange } from '../../src/response/rewrite.js';
import { bodyRewriteFits, recordLiftSkippedForRoom } from '../../src/response/rewrite-room.js';
import { mayRewrite, rewriteScanned, spliceScanned } from '../../src/response/scanned-message.js';

/** What the stage did with a body. */
export type StageAnswer =
  /** A structure bound broke while the body was read: the request's error (`json_depth`, `json_nodes`). */
  | { readonly kind: 'bound'; readonly reason: 'json_depth' | 'json_nodes'; readonly limit: number }
  | { readonly kind: 'not_mcp' | 'array' }
  | {
      readonly kind: 'sent';
      /** The bytes the host gets. */
      readonly bytes: Buffer;
      readonly outcome: 'ok' | 'rewritten';
      /** exchange.actions: the rewrite made (`deduped`, `lifted`), if any. */
      readonly action: string | undefined;
      /** exchange.textNotLifted. */
      readonly textNotLifted: string | undefined;
      /** The body's bytes minus the sent ones when rewritten (exchange.bytesSaved). */
      readonly bytesSaved: number;
    };

/** How the stage answered: `spliced` when spliceScanned answered (its bytes, or the seller's it left unchanged). */
export interface StageRun {
  readonly answer: StageAnswer;
  readonly spliced: 'deduped' | 'lifted' | 'none' | undefined;
}

/**
 * Runs the stage on `seller` (the body as read, fed to the scan in the pieces `cuts` marks) for
 * a fresh copy of `exchange` (`makeExchange`).
 */
export function runJsonStage(makeExchange: () => Exchange, seller: Buffer, cuts: readonly number[], mode: 'scan' | 'parse'): StageRun {
  const exchange = makeExchange();
  const { limits } = exchange;
  const scanner = new JsonScanner({ maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes, ignoreBom: true });
  let from = 0;
  for (const cut of [...cuts, seller.length]) {
    const failure = scanner.feed(seller.subarray(from, cut));
    from = cut;
    if (failure !== undefined && failure.reason !== 'syntax') return { answer: { kind: 'bound', reason: failure.reason, limit: failure.limit }, spliced: undefined };
  }
  const body = scanner.leadingBomBytes === 0 ? seller : seller.subarray(scanner.leadingBomBytes);
  const scan = scanner.end();
  if (!scan.ok || scan.repeatedName) return { answer: { kind: 'not_mcp' }, spliced: undefined };
  const sent = (bytes: Buffer, outcome: 'ok' | 'rewritten', action?: string): StageAnswer => ({
    kind: 'sent',
    bytes,
    outcome,
    action,
    textNotLifted: exchange.textNotLifted,
    bytesSaved: outcome === 'rewritten' ? body.length - bytes.length : 0,
  });
  const members = scan.members;
  const answers = mode === 'scan' && exchange.rpc.kind !== 'batch' && members !== undefined && members.plainKeys && scan.namesDistinct ? answersExchange(exchange, body, members) : undefined;
  if (answers === false) return { answer: { kind: 'not_mcp' }, spliced: undefined };
  if (answers === true) {
    if (!mayRewrite(exchange, scan)) return { answer: sent(wellFormedUtf8(body, limits.max_response_bytes), 'ok'), spliced: undefined };
    const spliced = spliceScanned(exchange, body, scan);
    if (spliced !== undefined && (spliced.action === 'none' || !bodyRewriteFits(spliced.out.length, limits.max_response_bytes))) {
      if (spliced.action !== 'none') recordLiftSkippedForRoom(exchange, spliced.action, 'max_response_bytes');
      return { answer: sent(wellFormedUtf8(body, limits.max_response_bytes), 'ok'), spliced: spliced.action };
    }
    if (spliced !== undefined) return { answer: sent(spliced.out, 'rewritten', spliced.action), spliced: spliced.action };
  }
  return { answer: parsedAnswer(exchange, body, scan, sent), spliced: undefined };
}

function parsedAnswer(exchange: Exchange, body: Buffer, scan: JsonScanSummary, sent: (bytes: Buffer, outcome: 'ok' | 'rewritten', action?: string) => StageAnswer): StageAnswer {
  const message = parseJsonText(body);
  if (message === NOT_JSON) return { kind: 'not_mcp' };
  if (Array.isArray(message)) return { kind: 'array' };
  const payload = message !== null && typeof message === 'object' && (message as Record<string, unknown>).jsonrpc === '2.0';
  if (!payload || repeatsMemberName(scan, message) || !isResponseToExchange(exchange, message, body, scan.members)) return { kind: 'not_mcp' };
  const { rewritten, out } = rewriteScanned(exchange, message, body, scan);
  if (rewritten.changed && !bodyRewriteFits(out.length, exchange.limits.max_response_bytes)) {
    recordLiftSkippedForRoom(exchange, rewritten.action, 'max_response_bytes');
    return sent(wellFormedUtf8(body, exchange.limits.max_response_bytes), 'ok');
  }
  return rewritten.changed ? sent(out, 'rewritten', rewritten.action) : sent(wellFormedUtf8(body, exchange.limits.max_response_bytes), 'ok');
}
