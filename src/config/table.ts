/**
 * What `--check-config` prints for a valid config, as pure functions of the config:
 * `formatGatewaySection` (listeners, log level, shutdown grace, resume), `configNotes`
 * (warnings and notes, one line each), `formatLimitsTable` (the resolved limits) and
 * `formatGuardTable` (each agent's guard settings).
 * Nothing here prints a secret: header values and the resume secret are never shown, and
 * agent URLs are shown by `displayUrl` (config/display-url.ts): query, userinfo and any path
 * segment shaped like a credential replaced by `[redacted]`.
 */
import { RESUME_SECRET_ENV } from './defaults.js';
import { displayUrl } from './display-url.js';
import { limitNotes } from './limit-notes.js';
import { configuredSseEventBytes, defaultsOwnSseEventBytes, ownSseEventBytes, resolveCallLimits } from './resolve.js';
import { gatewayNotes, transportNotes, transportWarnings } from './setting-notes.js';
import { MIN_SEND_MS, MIN_SEND_SHARE, tooLateToSend } from '../admission/agent-guard.js';
import { isLoopbackListenHost } from '../request/browser-guard.js';
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
  'max_batch_messages',
  'max_call_response_bytes',
  'accept_encoding',
] as const;

/** The highest response limit a call may ask for with `X-Max-Response-Bytes`. */
function callCeiling(agent: AgentConfig, limits: Limits): number {
  const ceiling = agent.max_call_response_bytes;
  return ceiling === undefined ? limits.max_response_bytes : Math.max(ceiling, limits.max_response_bytes);
}

/** `max_call_response_bytes` set below the response limit it caps at this row (it then has no effect). */
function ceilingBelowLimit(agent: AgentConfig, limits: Limits): boolean {
  return agent.max_call_response_bytes !== undefined && agent.max_call_response_bytes < limits.max_response_bytes;
}

/** The `max_call_response_bytes` cell: the effective ceiling, plus the configured value when that is lower. */
function callCeilingCell(agent: AgentConfig, limits: Limits): string {
  const effective = String(callCeiling(agent, limits));
  return ceilingBelowLimit(agent, limits) ? `${effective} (configured ${String(agent.max_call_response_bytes)})` : effective;
}

/**
 * The `max_sse_event_bytes` cell: the limit in force, plus the configured value when the
 * response limit caps it (`1000 (configured 999999999)`), as `max_call_response_bytes` shows
 * its own (a hostile trial 45, L8: both showed 1000 alone;
 * test/regressions/check-config-hides-clamped-sse-event-limit.test.ts).
 */
function sseEventCell(agent: AgentConfig, tool: string | undefined, limits: Limits): string {
  const configured = configuredSseEventBytes(agent, tool);
  const effective = String(limits.max_sse_event_bytes);
  return configured !== undefined && configured > limits.max_sse_event_bytes ? `${effective} (configured ${configured})` : effective;
}

function row(label: string, agent: AgentConfig, tool: string | undefined, limits: Limits): string[] {
  const isAgentRow = tool === undefined;
  return [
    label,
    isAgentRow ? displayUrl(agent.url) : '',
    String(limits.max_response_bytes),
    sseEventCell(agent, tool, limits),
    String(limits.max_json_depth),
    String(limits.max_json_nodes),
    String(limits.response_deadline_ms),
    String(limits.sse_idle_timeout_ms),
    String(limits.sse_deadline_ms),
    limits.dedupe_text,
    String(agent.max_request_bytes),
    String(agent.max_batch_messages),
    callCeilingCell(agent, limits),
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
 * (the configured value, or the resolved response limit when unset or lower); when the
 * configured value is lower than that row's response limit it follows in parentheses,
 * `4194304 (configured 1000)`. `max_sse_event_bytes` likewise: the limit in force, and the
 * configured value when the response limit caps it, `1000 (configured 999999999)`. The url is `displayUrl`'s (query and credential-shaped path segments redacted). Columns are
 * left-aligned, separated by two spaces, with a dashed rule under the header; no trailing
 * spaces, no colors, no trailing newline. Pure: same config, same text.
 */
export function formatLimitsTable(config: GatewayConfig): string {
  const rows: string[][] = [[...LIMITS_TABLE_COLUMNS]];
  for (const agent of config.agents.values()) {
    rows.push(row(agent.name, agent, undefined, agent.limits));
    for (const tool of Object.keys(agent.tools)) {
      rows.push(row(`${agent.name}/${tool}`, agent, tool, resolveCallLimits(agent, tool, undefined)));
    }
  }
  return alignedTable(rows);
}

/** Column headers of {@link formatGuardTable}, in order. */
export const GUARD_TABLE_COLUMNS = ['agent', 'max_buffered_response_bytes', 'backoff_after_breaches', 'backoff_base_ms', 'backoff_max_ms'] as const;

/**
 * The agent guard's resolved settings (src/admission/agent-guard.ts), one row per agent in
 * file order, columns {@link GUARD_TABLE_COLUMNS}; `backoff_after_breaches` 0 shows as
 * `0 (off)`. Same layout as {@link formatLimitsTable}.
 */
export function formatGuardTable(config: GatewayConfig): string {
  const rows: string[][] = [[...GUARD_TABLE_COLUMNS]];
  for (const agent of config.agents.values()) {
    const g = agent.guard;
    rows.push([
      agent.name,
      String(g.max_buffered_response_bytes),
      g.backoff_after_breaches === 0 ? '0 (off)' : String(g.backoff_after_breaches),
      String(g.backoff_base_ms),
      String(g.backoff_max_ms),
    ]);
  }
  return alignedTable(rows);
}

/** Rows (the first is the header) left-aligned in columns two spaces apart, a dashed rule under the header, no trailing spaces. */
function alignedTable(rows: readonly (readonly string[])[]): string {
  const columns = rows[0]?.length ?? 0;
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  return [render(header ?? []), render(widths.map((w) => '-'.repeat(w))), ...body.map(render)].join('\n');
}

/** `host:port`, with an IPv6 host in brackets. */
function hostPort(address: { readonly host: string; readonly port: number }): string {
  const host = address.host.includes(':') && !address.host.startsWith('[') ? `[${address.host}]` : address.host;
  return `${host}:${address.port}${address.port === 0 ? ' (any free port)' : ''}`;
}

/**
 * The process-wide settings, aligned, under a `gateway` heading (no trailing newline):
 * ```
 * gateway
 *   listen                 127.0.0.1:8787
 *   ops_listen             none (/healthz, /readyz, /metrics are served on listen)
 *   log_level              info
 *   shutdown_grace_ms      10000
 *   shutdown_sse_retry_ms  5000
 *   request_timeout_ms     30000
 *   allowed_origins        none (and localhost, 127.0.0.1, [::1]: any other Origin is refused)
 *   allowed_hosts          none (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)
 *   resume secret          configured
 *   resume ttl_ms          3600000
 * ```
 * The resume secret is `configured` (from `resume.secret` or the environment) or `random per
 * process (warning: ...)`; its value is never printed. Pure: same config, same text.
 */
export function formatGatewaySection(config: GatewayConfig): string {
  const rows: [string, string][] = [
    ['listen', hostPort(config.listen)],
    ['ops_listen', config.ops_listen === undefined ? 'none (/healthz, /readyz, /metrics are served on listen)' : hostPort(config.ops_listen)],
    ['log_level', config.log_level],
    ['shutdown_grace_ms', String(config.shutdown_grace_ms)],
    ['shutdown_sse_retry_ms', config.shutdown_sse_retry_ms === 0 ? '0 (no retry: field)' : String(config.shutdown_sse_retry_ms)],
    ['request_timeout_ms', String(config.request_timeout_ms)],
    ['allowed_origins', `${config.allowed_origins.length === 0 ? 'none' : config.allowed_origins.join(', ')} (and localhost, 127.0.0.1, [::1]: any other Origin is refused)`],
    ['allowed_hosts', allowedHostsRow(config)],
    [
      'resume secret',
      config.resume.secret === undefined
        ? `random per process (warning: SSE resume tokens will not survive a restart or work across replicas; set resume.secret or ${RESUME_SECRET_ENV})`
        : 'configured',
    ],
    ['resume ttl_ms', String(config.resume.ttl_ms)],
  ];
  const width = Math.max(...rows.map(([key]) => key.length));
  return ['gateway', ...rows.map(([key, value]) => `  ${key.padEnd(width)}  ${value}`)].join('\n');
}

/**
 * The `allowed_hosts` row: the listed hosts (or `none`), then what the `Host` check does, which
 * depends on `listen.host` (src/request/browser-guard.ts `isHostAllowed`):
 * `(and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)`,
 * the same with `allowed_hosts is set` at the end when the gateway listens elsewhere, or
 * `(Host is not checked: listen.host is not loopback)`.
 */
function allowedHostsRow(config: GatewayConfig): string {
  const listed = config.allowed_hosts.length === 0 ? 'none' : config.allowed_hosts.join(', ');
  if (isLoopbackListenHost(config.listen.host)) return `${listed} (and localhost, 127.0.0.1, [::1]: any other Host is refused, listen.host is loopback)`;
  if (config.allowed_hosts.length === 0) return 'none (Host is not checked: listen.host is not loopback)';
  return `${listed} (and localhost, 127.0.0.1, [::1]: any other Host is refused, allowed_hosts is set)`;
}

/** The note for a `max_sse_event_bytes` set at `label` (an agent, `agent/tool`, or `defaults`) above the response limit in force there. */
function eventAboveResponseNote(label: string, eventBytes: number, responseBytes: number): string {
  return `note: ${label}: max_sse_event_bytes ${eventBytes} is above max_response_bytes ${responseBytes}: an event limit is never above the response limit in force`;
}

/**
 * Warnings and notes about a valid config, one line each (empty when there is nothing to say):
 * - `WARNING: agent <a>: TLS certificate verification is OFF (tls_insecure_skip_verify)` (an
 *   https: url), `WARNING: agent <a>: its headers (...) go in clear text: ...` and `... its url
 *   query goes in clear text: ...` (an http: url to a host that is not loopback), then
 *   `note: resume.ttl_ms ...`, `note: shutdown_grace_ms ...` and `note: agent <a>:
 *   tls_insecure_skip_verify has no effect ...` (an http: url): setting-notes.ts;
 * - `note: <a>[/<tool>]: max_call_response_bytes <n> is below max_response_bytes <m>: ...`
 *   for every agent or tool row whose response limit is above the agent's
 *   `max_call_response_bytes` (valid, but then a call can lower its limit and never raise it);
 * - `note: <a>[/<tool>]: max_sse_event_bytes <n> is above max_response_bytes <m>: ...` for a
 *   row that sets its own event limit above its response limit (the table shows both; an
 *   event limit inherited from `defaults` or the agent and capped by a lower row's response
 *   limit is shown so in the table but not noted: hostile trial 46, item 3, once per lower row,
 *   naming the tool, though nothing was wrong);
 * - `note: defaults: max_sse_event_bytes <n> is above max_response_bytes <m>: ...`, once, when
 *   `defaults` sets its own event limit above the defaults' response limit (the built-in one
 *   when it sets none): review 31, finding 5 (no note at all for it otherwise);
 * - `note: <a>: backoff_base_ms <b> is above backoff_max_ms <m>: every backoff is <m> ms`;
 * - `note: <a>: response_deadline_ms <d> is not above backoff_max_ms <m>: ...` (waiting
 *   requests would time out before the next probe);
 * - `note: <a>: response_deadline_ms <d> leaves less than <n> ms after backoff_max_ms <m>: ...`
 *   (a request that waited out a whole backoff would be granted its turn too late to send:
 *   agent-guard.ts tooLateToSend; found by a new user: 10500 against 10000 drew no note);
 * - `note: <a>[/<tool>]: max_response_bytes <n> is above max_buffered_response_bytes <m>: ...`
 *   (and `max_call_response_bytes` for an agent row): an answer that large is received only
 *   as the agent's oldest in flight, the others waiting for room against their deadline
 *   (admission/agent-guard.ts). A new user's trial (2026-12-03, F8): a tool limit of 1 GiB
 *   drew no note, and 8 of 30 concurrent 22.6 MB answers finished within an 8 s deadline;
 * - a `max_json_depth`, `max_json_nodes`, `max_response_bytes`, `max_sse_event_bytes` or
 *   `max_request_bytes` below the smallest message it must let through (limit-notes.ts).
 */
export function configNotes(config: GatewayConfig): string[] {
  const out: string[] = [];
  for (const agent of config.agents.values()) out.push(...transportWarnings(agent));
  out.push(...gatewayNotes(config));
  for (const agent of config.agents.values()) out.push(...transportNotes(agent));
  const defaultsEvents = defaultsOwnSseEventBytes(config);
  if (defaultsEvents !== undefined && defaultsEvents > config.defaults.max_response_bytes) {
    out.push(eventAboveResponseNote('defaults', defaultsEvents, config.defaults.max_response_bytes));
  }
  for (const agent of config.agents.values()) {
    const rows: [string, string | undefined][] = [[agent.name, undefined]];
    for (const tool of Object.keys(agent.tools)) rows.push([`${agent.name}/${tool}`, tool]);
    for (const [label, tool] of rows) {
      const limits = tool === undefined ? agent.limits : resolveCallLimits(agent, tool, undefined);
      if (ceilingBelowLimit(agent, limits)) {
        out.push(
          `note: ${label}: max_call_response_bytes ${String(agent.max_call_response_bytes)} is below max_response_bytes ${limits.max_response_bytes}: ` +
            'X-Max-Response-Bytes can lower the limit but never raise it',
        );
      }
      const events = ownSseEventBytes(agent, tool);
      if (events !== undefined && events > limits.max_sse_event_bytes) {
        out.push(eventAboveResponseNote(label, events, limits.max_response_bytes));
      }
    }
  }
  for (const agent of config.agents.values()) {
    const cap = agent.guard.max_buffered_response_bytes;
    const over = (label: string, key: string, bytes: number): void => {
      if (bytes > cap) {
        out.push(
          `note: ${label}: ${key} ${bytes} is above max_buffered_response_bytes ${cap}: ` +
            'an answer that large is received only as the agent\'s oldest in flight; concurrent ones wait for room within their response_deadline_ms',
        );
      }
    };
    over(agent.name, 'max_response_bytes', agent.limits.max_response_bytes);
    if (agent.max_call_response_bytes !== undefined) over(agent.name, 'max_call_response_bytes', agent.max_call_response_bytes);
    for (const tool of Object.keys(agent.tools)) over(`${agent.name}/${tool}`, 'max_response_bytes', resolveCallLimits(agent, tool, undefined).max_response_bytes);
  }
  for (const agent of config.agents.values()) {
    const g = agent.guard;
    if (g.backoff_after_breaches === 0) continue;
    if (g.backoff_base_ms > g.backoff_max_ms) {
      out.push(`note: ${agent.name}: backoff_base_ms ${g.backoff_base_ms} is above backoff_max_ms ${g.backoff_max_ms}: every backoff is ${g.backoff_max_ms} ms`);
    }
    const deadline = agent.limits.response_deadline_ms;
    if (deadline <= g.backoff_max_ms) {
      out.push(
        `note: ${agent.name}: response_deadline_ms ${deadline} is not above backoff_max_ms ${g.backoff_max_ms}: ` +
          'during a long backoff, waiting requests are answered agent_backoff before the next probe',
      );
    } else if (tooLateToSend(deadline - g.backoff_max_ms, deadline)) {
      out.push(
        `note: ${agent.name}: response_deadline_ms ${deadline} leaves less than ${Math.min(MIN_SEND_MS, deadline * MIN_SEND_SHARE)} ms after backoff_max_ms ${g.backoff_max_ms}: ` +
          'during a long backoff, a waiting request gets its turn too late to be sent and is answered agent_backoff',
      );
    }
  }
  for (const agent of config.agents.values()) out.push(...limitNotes(agent));
  return out;
}
