/**
 * The structure bounds (`max_json_depth`, `max_json_nodes`) a host's request to one agent is
 * held to, before it is forwarded (request/peek.ts peekRequest):
 * - a single `tools/call` (a request, or a notification: as its answer's limits are,
 *   config/resolve.ts resolveCallLimits) of a tool with a `tools:` entry: that tool's resolved
 *   level, so its own `max_json_depth` / `max_json_nodes` when it sets them, the agent's
 *   otherwise;
 * - anything else (another method, a tool without an entry, a batch, a body that is no
 *   message): the agent's; but a body that is not JSON, or writes a member the gateway acts
 *   on twice, within {@link RequestJsonBounds.widest} gets its own refusal, not the bound's
 *   (its tool cannot be told: peek.ts peekRequest; a hostile new-user trial 23, L6).
 *
 * Why: a tool's bounds applied to its results only, while its calls were held to the agent's
 * (a hostile trial 22, F2: agent `max_json_nodes: 2000`, `sync_creatives: { max_json_nodes:
 * 200000 }`, and a 54 KB `sync_creatives` call with 300 creatives was refused "over
 * max_json_nodes (2000)"; test/regressions/request-json-bounds-ignore-tool-limits.test.ts).
 * A batch keeps the agent's: one body, read before its tools are known, whose elements'
 * tools may differ (its answer's limits are their strictest: resolveBatchLimits).
 *
 * Made once per agent config object (a reload makes new ones) and kept in a WeakMap: a
 * request pays one lookup.
 */
import { resolveCallLimits } from '../config/resolve.js';
import type { AgentConfig } from '../config/types.js';
import type { JsonBoundsLimits } from '../mcp/json-bounds.js';

export interface RequestJsonBounds {
  /** The agent's `max_json_depth` and `max_json_nodes`: every request but a `tools/call` of a tool in `tools`. */
  readonly agent: JsonBoundsLimits;
  /**
   * The tools whose calls are held to other bounds than the agent's, by name: each its
   * resolved level's (its own value, else the agent's, per bound). Empty for nearly every
   * agent: then `agent` bounds every request, read as before (one reading under it).
   */
  readonly tools: ReadonlyMap<string, JsonBoundsLimits>;
  /**
   * Per bound, the largest of `agent` and `tools`: what a body is read under before its tool
   * is known (a body over it is over whatever bound applies to it). Equal to `agent` when
   * `tools` is empty.
   */
  readonly widest: JsonBoundsLimits;
}

const made = new WeakMap<AgentConfig, RequestJsonBounds>();

/** The {@link RequestJsonBounds} of `agent` (a loaded or hand-built config; never throws). */
export function requestJsonBounds(agent: AgentConfig): RequestJsonBounds {
  let bounds = made.get(agent);
  if (bounds === undefined) {
    bounds = boundsOf(agent);
    made.set(agent, bounds);
  }
  return bounds;
}

function boundsOf(agent: AgentConfig): RequestJsonBounds {
  const own = { maxDepth: agent.limits.max_json_depth, maxNodes: agent.limits.max_json_nodes };
  const tools = new Map<string, JsonBoundsLimits>();
  let maxDepth = own.maxDepth;
  let maxNodes = own.maxNodes;
  for (const name of Object.keys(agent.tools)) {
    const limits = resolveCallLimits(agent, name, undefined);
    if (limits.max_json_depth === own.maxDepth && limits.max_json_nodes === own.maxNodes) continue;
    tools.set(name, Object.freeze({ maxDepth: limits.max_json_depth, maxNodes: limits.max_json_nodes }));
    maxDepth = Math.max(maxDepth, limits.max_json_depth);
    maxNodes = Math.max(maxNodes, limits.max_json_nodes);
  }
  return Object.freeze({ agent: Object.freeze(own), tools, widest: Object.freeze({ maxDepth, maxNodes }) });
}
