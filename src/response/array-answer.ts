/**
 * What a JSON array answering a single request is for it: the one judgement of an SSE event's
 * data (sse-message.ts batchVerdict) and of a 2xx JSON body (json-stage.ts) that is an array
 * of JSON-RPC messages, a batch (JSON-RPC 2.0 §6) the seller sent where the host sent one
 * request.
 *
 * MCP 2025-03-26 Streamable HTTP lets a server batch what it sends ("These responses MAY be
 * batched"; a JSON answer is "a single JSON object" or, JSON-RPC 2.0 §6, an array of them),
 * and the MCP TypeScript SDK client reads an array body as messages, one by one. So on that
 * revision an array holding the request's response (and no response to another id) is its
 * answer, on SSE and as JSON alike: the seller's bytes, never rewritten (rewrite.ts rewrites
 * one response object; on 2025-03-26 there is nothing to lift or dedupe anyway: no
 * `structuredContent`). MCP 2025-06-18 removed batches (changelog, "Remove support for
 * JSON-RPC batching"; revision.ts NO_BATCHES_SINCE), so on a host's revision from 2025-06-18
 * on such an array is no message the host reads: `upstream_not_mcp`, its message saying so
 * (mcp/local-error.ts NOT_MCP_CAUSES `batch_removed`).
 *
 * Reported failures: an array holding the result on a request's SSE stream was forwarded, then
 * the stream's end brought `upstream_reset` for the same id
 * (test/regressions/sse-new-user-findings.test.ts); `[response to 8]` and `[response to 7,
 * response to 8]` on request 7's stream went out as its answer (a reviewer:
 * test/regressions/sse-batch-shaped-response-for-another-id-forwarded.test.ts); `[response]`
 * reached a 2025-06-18 host on SSE and its SDK client hung (a new user's trial, 2026-12-03:
 * test/regressions/sse-array-holding-own-response-on-revision-without-batches.test.ts); a
 * nested array passed (test/regressions/sse-nested-array-response-forwarded.test.ts); and a
 * JSON body `[response]` on 2025-03-26 was refused `upstream_not_mcp` while the same array as
 * an SSE event was the answer (a hostile new-user trial 13, L1:
 * test/regressions/seller-batch-json-answer-refused.test.ts).
 */
import type { Exchange } from '../exchange.js';
import { isJsonObject } from '../mcp/extract.js';
import { hasBatches } from '../mcp/revision.js';
import { readsAsNoRequest, repeatsMemberName, type NameFacts } from '../mcp/repeated-names.js';
import { writtenIdRanges } from '../mcp/written-ids.js';
import { matchesRequestAsParsed } from './rewrite.js';
import { isRequestId } from './json-value-at.js';

/**
 * {@link judgeArrayAnswer}'s verdict:
 * - `answer`: it holds the request's response and is the answer (the host's revision has batches);
 * - `batch_removed`: it would be the answer, but the host's revision has no batches (2025-06-18 on);
 * - `foreign`: no answer, whatever the revision: an element that is no object (a nested array:
 *   no JSON-RPC message), a response that is not the request's (another id, no id, both
 *   `result` and `error`, a `method` beside them, not well formed, or naming no method: as a
 *   Go host reads it, mcp/repeated-names.ts readsAsNoRequest), or, holding the request's
 *   response, an element repeating a member name (mcp/repeated-names.ts);
 * - `none`: no response at all (requests and notifications only, or empty).
 */
export type ArrayAnswer = 'answer' | 'batch_removed' | 'foreign' | 'none';

/**
 * Judges the array `message`, parsed from `bytes` (its JSON text; `names` its scan's facts
 * about member names), answering the exchange's single request (`rpc.kind` 'request'; any
 * other kind: `none`). An element is the request's response when it matches as parsed
 * (rewrite.ts matchesRequestAsParsed: the id, exactly one of `result` and `error`, no
 * `method`, well formed) and, for a numeric id, by its id as written (json-value-at.ts
 * isRequestId: `1.0` answers `1`, `9007199254740993` does not answer `9007199254740992`; the
 * element's id found by mcp/written-ids.ts, once an element matches as parsed).
 *
 * Cost: one pass over the elements; a walk of the bytes when the request's id is a number and
 * an element matches; a count of the parsed members when the scan could not tell repeats.
 */
export function judgeArrayAnswer(exchange: Exchange, message: readonly unknown[], bytes: Buffer, names: NameFacts): ArrayAnswer {
  if (exchange.rpc.kind !== 'request') return 'none';
  let ids: ReturnType<typeof writtenIdRanges> | undefined;
  let answered = false;
  for (let k = 0; k < message.length; k++) {
    const element = message[k];
    // No JSON-RPC message (JSON-RPC 2.0 §6): a nested array may hold a response a lenient client reads.
    if (!isJsonObject(element)) return 'foreign';
    let answers = matchesRequestAsParsed(exchange, element);
    if (answers && typeof exchange.rpc.id === 'number') {
      ids ??= writtenIdRanges(bytes);
      answers = isRequestId(bytes, ids[k], exchange.rpc);
    }
    if (answers) answered = true;
    else if (readsAsNoRequest(element)) return 'foreign';
  }
  if (!answered) return 'none';
  if (repeatsMemberName(names, message)) return 'foreign';
  return hasBatches(exchange.protocolVersion) ? 'answer' : 'batch_removed';
}
