/**
 * The resolved limits as an aligned plain-text table (for `--check-config`).
 */
import { resolveCallLimits } from './resolve.js';
import type { AgentConfig, GatewayConfig, Limits } from './types.js';

/** Column headers, in order. */
export const LIMITS_TABLE_COLUMNS = [
  'agent/tool',
  'url',
  'max_response_bytes',
  'max_sse_event_bytes',
  'max_json_depth',
  'max_json_nodes',
  'response_deadline_ms',
  'sse_idle_timeout_ms',
  'sse_deadline_ms',
  'dedupe_text',
  'max_request_bytes',
  'max_call_response_bytes',
  'accept_encoding',
] as const;

/** The highest response limit a call may ask for with `X-Max-Response-Bytes`. */
function callCeiling(agent: AgentConfig, limits: Limits): number {
  const ceiling = agent.max_call_response_bytes;
  return ceiling === undefined ? limits.max_response_bytes : Math.max(ceiling, limits.max_response_bytes);
}

function row(label: string, agent: AgentConfig, limits: Limits, isAgentRow: boolean): string[] {
  return [
    label,
    isAgentRow ? agent.url.href : '',
    String(limits.max_response_bytes),
    String(limits.max_sse_event_bytes),
    String(limits.max_json_depth),
    String(limits.max_json_nodes),
    String(limits.response_deadline_ms),
    String(limits.sse_idle_timeout_ms),
    String(limits.sse_deadline_ms),
    limits.dedupe_text,
    String(agent.max_request_bytes),
    String(callCeiling(agent, limits)),
    agent.accept_encoding.join(','),
  ];
}

/**
 * Formats the resolved limits of every agent and every configured tool.
 *
 * One row per agent (`acme`, with its url) followed by one row per tool it configures
 * (`acme/list_products`, tools in file order), agents in file order. Columns:
 * `LIMITS_TABLE_COLUMNS`. All numbers are resolved values in the unit of the column name
 * (bytes, ms); `max_call_response_bytes` is the effective ceiling for `X-Max-Response-Bytes`
 * (the configured value, or the resolved response limit when unset or lower). Columns are
 * left-aligned, separated by two spaces, with a dashed rule under the header; no trailing
 * spaces, no colors, no trailing newline. Pure: same config, same text.
 */
export function formatLimitsTable(config: GatewayConfig): string {
  const rows: string[][] = [[...LIMITS_TABLE_COLUMNS]];
  for (const agent of config.agents.values()) {
    rows.push(row(agent.name, agent, agent.limits, true));
    for (const tool of Object.keys(agent.tools)) {
      rows.push(row(`${agent.name}/${tool}`, agent, resolveCallLimits(agent, tool, undefined), false));
    }
  }
  const widths = LIMITS_TABLE_COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  return [render(header ?? []), render(widths.map((w) => '-'.repeat(w))), ...body.map(render)].join('\n');
}
