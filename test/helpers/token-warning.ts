/**
 * The untokenized-id warning regressions (hostile trial 55, F4: long-request-id-token-warning-
 * blames-seller; hostile trial 56, F4: token-warning-misnames-protocol-version): the seller's two
 * SSE events (a progress notification, then the response, each `data:` line optionally after an
 * `id:` line), the warning's text, and a raw call that collects the agent's warning lines.
 */
import assert from 'node:assert/strict';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from './raw.js';
import { withTimeout } from './timeout.js';

/** The start of the agent's first warning line (src/response/sse-id-token-log.ts). */
export const FIRST = 'SSE event id could not be turned into a resume token: ';
/** The agent's end summary line. */
export const SUMMARY = 'SSE event ids could not be turned into resume tokens';
/** The progress notification the seller sends before its response. */
export const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
/** One SSE event: `id: <id>` (when given), then `data: <data>`. */
export const frame = (data: string, id?: string): string => `${id === undefined ? '' : `id: ${id}\n`}data: ${data}\n\n`;
/** The seller's JSON-RPC response to request `id` (no content). */
export const response = (id: unknown): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });

/**
 * POSTs a `tools/call` (JSON-RPC id `id`, tool `tool`, with `headers`) to `agent` of `gw`,
 * expects 200, and waits for its exchange line: the body (text), the exchange's outcome, and the
 * agent's warning lines since the call (the first warning's msg; the summary as msg,
 * not_tokenized and not_tokenized_total).
 */
export async function callCollectingWarnings(
  gw: ObservedGateway,
  agent: string,
  id: string | number,
  tool: string,
  headers: Record<string, string>,
): Promise<{ text: string; outcome: unknown; warnings: unknown[] }> {
  const before = gw.lines.length;
  const r = await withTimeout(rawPost(gw.agentUrl(agent), toolCall(id, tool), headers), 10_000, 'the call');
  assert.equal(r.status, 200);
  const exchange = await gw.waitForLine((l) => l.msg === 'exchange' && l.agent === agent && gw.lines.indexOf(l) >= before);
  const warnings = gw.lines
    .slice(before)
    .filter((l) => l.agent === agent && typeof l.msg === 'string' && (l.msg.startsWith(FIRST) || l.msg === SUMMARY))
    .map((l) => (l.msg === SUMMARY ? { msg: l.msg, not_tokenized: l.not_tokenized, not_tokenized_total: l.not_tokenized_total } : l.msg));
  return { text: r.text(), outcome: exchange.outcome, warnings };
}
