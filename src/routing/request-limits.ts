/**
 * The limits a request is handled under (routing/handler.ts; its hold at its pipelined turn,
 * routing/pipelined-wait.ts): resolved from its agent and its peek (config/resolve.ts), and how
 * its exchange counts for its agent's backoff against them.
 */
import type { FastifyRequest } from 'fastify';
import type { AgentConfig, Limits } from '../config/types.js';
import { resolveBatchLimits, resolveCallLimits, type CallLimitSource } from '../config/resolve.js';
import type { Exchange, RpcPeek } from '../exchange.js';
import type { GuardOutcome } from '../admission/agent-guard.js';
import { REASONS } from '../errors/codes.js';

/** A request to the gateway's MCP route (`/agents/:agent/mcp`, app.ts): `params.agent`, the agent's name. */
export type McpRequest = FastifyRequest<{ Params: { agent: string } }>;

/**
 * The limits in force for a request (config/resolve.ts): a batch's, the strictest of its
 * elements' levels (resolveBatchLimits; a reviewer: a batch escaped its tools' limits,
 * test/regressions/batch-escapes-tool-limits.test.ts); any other's, its tool's or its agent's
 * (resolveCallLimits). `call`: the `X-Max-Response-Bytes` value (bytes, `source` `header`),
 * or a resumed stream's limit from its token (`source` `token`: taken as is), or undefined.
 */
export function limitsOf(agent: AgentConfig, rpc: RpcPeek, call: number | undefined, source: CallLimitSource = 'header'): Limits {
  return rpc.kind === 'batch' ? resolveBatchLimits(agent, rpc.batchToolNames, call, source) : resolveCallLimits(agent, rpc.toolName, call, source);
}

/**
 * How an exchange counts for its agent's backoff: a size/structure bound broken
 * (`RESPONSE_TOO_LARGE`), a clean answer, or neither. A byte bound the host lowered itself
 * with X-Max-Response-Bytes (`limitMayBeLowered`: set too on a resumed stream, whose limit is its
 * token's, its POST's with that header) does not count (the seller may be answering
 * normally): the message bounds when the response limit was lowered, `sse_event` and
 * `sse_event_memory` (four times the event cap) when the event limit was (it follows the response limit unless configured); depth and node bounds
 * always count. The configured limits are resolved only in that rare case.
 */
export function guardOutcome(exchange: Exchange, limitMayBeLowered: boolean): GuardOutcome {
  if (exchange.outcome === 'ok' || exchange.outcome === 'rewritten') return 'clean';
  const reason = exchange.reason;
  if (reason === undefined || !Object.hasOwn(REASONS, reason)) return 'other';
  if (REASONS[reason as keyof typeof REASONS].code !== 'RESPONSE_TOO_LARGE') return 'other';
  if (reason === 'json_depth' || reason === 'json_nodes' || !limitMayBeLowered) return 'breach';
  const { limits } = exchange;
  const configured = limitsOf(exchange.agent, exchange.rpc, undefined);
  const lowered = reason === 'sse_event' || reason === 'sse_event_memory' ? limits.max_sse_event_bytes < configured.max_sse_event_bytes : limits.max_response_bytes < configured.max_response_bytes;
  return lowered ? 'other' : 'breach';
}
