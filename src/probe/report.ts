/**
 * The probe's output: an aligned plain-text table for people, one JSON object for machines.
 * Pure: same report, same text. Every string a seller chose is shown inert (shown-text.ts):
 * escaped and cut in the table, exact but with terminal controls `\u`-escaped in the JSON.
 */
import type { ProbeReport, ProbeRow } from './probe.js';
import { shownText } from './shown-text.js';
import { inertJson } from '../observability/inert-json.js';
import { beforeResponseText } from '../mcp/discovery-size.js';

const COLUMNS = ['surface', 'via', 'bytes', 'target', 'result'] as const;
/** Columns right-aligned (numbers). */
const RIGHT = new Set([2, 3]);

const SURFACE_LABELS: Readonly<Record<ProbeRow['surface'], string>> = {
  initialize: 'initialize',
  tools_list_page: 'tools/list page',
  get_adcp_capabilities: 'get_adcp_capabilities',
  publisher_domains: '  media_buy.portfolio.publisher_domains',
  data_provider_domains: '  signals.data_provider_domains',
  counterparty_fields_total: '  counterparty fields together',
};

/** 131072 -> `131,072` */
function n(value: number): string {
  return value.toLocaleString('en-US');
}

function label(row: ProbeRow): string {
  const base = SURFACE_LABELS[row.surface];
  return row.page === undefined ? base : `${base} ${row.page}`;
}

/**
 * The row's result, and for an SSE answer that carried anything before the response, what it
 * carried: `over (3,000 events before the response: 310,890 bytes)` (those bytes are in the
 * row's bytes: a trial 15 reader took a 195-byte page for all a host got, L1).
 */
function result(row: ProbeRow): string {
  const status = statusText(row);
  if (row.bytes_before === undefined) return status;
  // The same text as the gateway's discovery-size warning (mcp/discovery-size.ts).
  return `${status} (${beforeResponseText({ events: row.events_before ?? 0, bytes: row.bytes_before })})`;
}

function statusText(row: ProbeRow): string {
  switch (row.status) {
    case 'error':
      // The seller's words may be in it (a JSON-RPC error's message, a tool error's text).
      return `error: ${shownText(row.error ?? 'unknown')}`;
    case 'not_offered':
      return 'not offered';
    case 'skipped':
      return 'skipped: tools/list did not complete';
    case 'info':
      return '-';
    default:
      return row.status;
  }
}

/**
 * The report as text:
 *
 * ```
 * probe: agent demo -> http://127.0.0.1:3001/mcp, through the gateway's pipeline
 * server: adcp-demo-seller 1.0.0, MCP 2025-11-25
 *
 * surface                 via   bytes   target  result
 * ----------------------  ----  -----  -------  -----------
 * initialize              json    ...        -  -
 * tools/list page 1       json  3,145  131,072  pass
 * get_adcp_capabilities                 65,536  not offered
 *
 * tools/list: 1 page, 5 tools, 3,145 bytes
 * total: 2 messages, 3,450 bytes
 * result: all within target
 * ```
 *
 * A row whose SSE answer carried events (or comments) before the response says so after its
 * result, `over (3,000 events before the response: 310,890 bytes)`; its bytes count them.
 *
 * Columns separated by two spaces, numbers right-aligned with thousands separators, no
 * trailing spaces, a final newline. The seller's strings (server name and version, MCP
 * revision, the error of a row) are shown by `shownText`: control and format characters
 * escaped (`\x1b`, `\n`, `\u202e`), `\` as `\\`, each value at most `MAX_SHOWN_CHARS`
 * (then cut, ending `…`), so no seller string moves the terminal or adds a line.
 */
export function formatProbeTable(report: ProbeReport): string {
  const lines: string[] = [];
  lines.push(`probe: agent ${report.agent} -> ${report.seller}, through the gateway's pipeline`);
  if (report.protocol_version !== undefined || report.server !== undefined) {
    const name = [report.server?.name, report.server?.version]
      .filter((s) => s !== undefined)
      .map((s) => shownText(s))
      .join(' ');
    lines.push(`server: ${name === '' ? '(unnamed)' : name}${report.protocol_version === undefined ? '' : `, MCP ${shownText(report.protocol_version)}`}`);
  }
  lines.push('');

  const rows: string[][] = [[...COLUMNS]];
  for (const row of report.rows) {
    rows.push([
      label(row),
      row.transport ?? '',
      row.bytes === undefined ? '' : n(row.bytes),
      row.target_bytes === null ? '-' : n(row.target_bytes),
      result(row),
    ]);
  }
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (RIGHT.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  lines.push(render(header ?? []), render(widths.map((w) => '-'.repeat(w))), ...body.map(render));
  lines.push('');

  const t = report.totals;
  lines.push(`tools/list: ${t.tools_list_pages} page${t.tools_list_pages === 1 ? '' : 's'}, ${n(t.tools)} tool${t.tools === 1 ? '' : 's'}, ${n(t.tools_list_bytes)} bytes`);
  lines.push(`total: ${t.messages} message${t.messages === 1 ? '' : 's'}, ${n(t.bytes)} bytes`);
  if (report.within_target) {
    lines.push('result: all within target');
  } else {
    const parts = [
      ...(t.over > 0 ? [`${t.over} over target`] : []),
      ...(t.errors > 0 ? [`${t.errors} error${t.errors === 1 ? '' : 's'}`] : []),
    ];
    lines.push(`result: ${parts.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The report as one JSON object (one line, then a newline): `agent`, `seller`,
 * `protocol_version`, `server`, `surfaces` (the rows: `surface`, `page`, `transport`,
 * `bytes`, `events_before` and `bytes_before` when an SSE answer carried anything before the
 * response, `target_bytes`, `status` one of `pass` `over` `error` `info` `not_offered` `skipped`,
 * `error`, `tools`), `totals` and `within_target`. Strings are exact; DEL, C1 controls, format
 * characters (U+202E, ...) and U+2028/U+2029, which `JSON.stringify` writes as they are, are
 * written `\uhhhh` (`inertJson`), so the line holds nothing a terminal acts on.
 */
export function formatProbeJson(report: ProbeReport): string {
  const { rows, ...rest } = report;
  return `${inertJson(JSON.stringify({
    agent: rest.agent,
    seller: rest.seller,
    protocol_version: rest.protocol_version ?? null,
    server: rest.server ?? null,
    surfaces: rows,
    totals: rest.totals,
    within_target: rest.within_target,
  }))}\n`;
}
