/**
 * The rewrite stage: normalizes the seller's answer to the exchange's own `tools/call`
 * (ARCHITECTURE §1.3, §5; gateway issue item 9). Shared by the JSON and SSE paths.
 *
 * Applies only when the host may read `structuredContent` and `dedupe_text` is not `off`
 * (`exchange.normalize`), the request was a `tools/call` and the message is the JSON-RPC
 * response carrying its id. Everything else is returned unchanged (`changed: false`), so the
 * caller sends the seller's original bytes.
 */
import type { Exchange } from '../exchange.js';
import { normalizeToolResult } from '../mcp/normalize.js';

/** Methods whose result is a `CallToolResult` (tasks/result joins with the tasks work). */
export const TOOL_RESULT_METHODS: ReadonlySet<string> = new Set(['tools/call']);

export interface RewriteOutcome {
  changed: boolean;
  /** The message to send: the input itself when unchanged. */
  message: unknown;
  /** `deduped` or `lifted` when changed. */
  action: 'none' | 'deduped' | 'lifted';
}

const UNCHANGED = (message: unknown): RewriteOutcome => ({ changed: false, message, action: 'none' });

/** True when `message` is the JSON-RPC response (result or error) to the exchange's request. */
export function isResponseToExchange(exchange: Exchange, message: unknown): boolean {
  if (exchange.rpc.kind !== 'request' || message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m.id === exchange.rpc.id && (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'));
}

export function rewriteResponse(exchange: Exchange, message: unknown): RewriteOutcome {
  const { rpc, limits } = exchange;
  if (!exchange.normalize || rpc.method === undefined || !TOOL_RESULT_METHODS.has(rpc.method)) return UNCHANGED(message);
  if (!isResponseToExchange(exchange, message)) return UNCHANGED(message);
  const m = message as Record<string, unknown>;
  if (!Object.hasOwn(m, 'result')) return UNCHANGED(message);
  const out = normalizeToolResult(m.result, {
    maxTextBytes: limits.max_response_bytes,
    maxDepth: limits.max_json_depth,
    maxNodes: limits.max_json_nodes,
  });
  if (!out.changed) return UNCHANGED(message);
  // Copy own keys (never Object.assign seller data: ARCHITECTURE §5 prototype trap).
  const next: Record<string, unknown> = {};
  for (const key of Object.keys(m)) {
    Object.defineProperty(next, key, { value: key === 'result' ? out.result : m[key], enumerable: true, writable: true, configurable: true });
  }
  return { changed: true, message: next, action: out.action };
}
