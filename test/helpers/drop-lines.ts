/**
 * The drops the throttled drop warnings account for (src/response/sse-drop-log.ts): a stream's
 * first drop has its own line (`SSE stream: event dropped`, one drop of its
 * `reason`), the later ones are counted in summaries (`SSE stream: events
 * dropped`, `dropped` by reason). So a test counts drops from the lines, not lines per drop
 * (a new user's trial 9, F5: test/regressions/get-stream-drop-warnings-flood-log.test.ts).
 */
import assert from 'node:assert/strict';
import { DROP_SUMMARY_MSG, FIRST_DROP_MSG } from '../../src/response/sse-drop-log.js';
import type { ObservedGateway } from '../support/hostile-seller.js';
import { withTimeout } from './timeout.js';

type Line = Record<string, unknown>;

/** The drop counts by reason that `agent`'s drop lines among `lines` add up to. */
export function droppedInLines(lines: readonly Line[], agent: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const l of lines) {
    if (l.agent !== agent) continue;
    if (l.msg === FIRST_DROP_MSG) counts[l.reason as string] = (counts[l.reason as string] ?? 0) + 1;
    else if (l.msg === DROP_SUMMARY_MSG) {
      for (const [reason, n] of Object.entries(l.dropped as Record<string, number>)) counts[reason] = (counts[reason] ?? 0) + n;
    }
  }
  return counts;
}

/** `agent`'s drop lines among `lines` (first drops' and summaries), in order. */
export function dropLinesOf(lines: readonly Line[], agent: string): Line[] {
  return lines.filter((l) => (l.msg === FIRST_DROP_MSG || l.msg === DROP_SUMMARY_MSG) && l.agent === agent);
}

/** `adcp_gateway_sse_events_dropped_total{agent,reason}` as `metricsText` (the /metrics text) gives it; 0 when absent. */
export function droppedInMetrics(metricsText: string, agent: string, reason: string): number {
  const prefix = `adcp_gateway_sse_events_dropped_total{agent="${agent}",reason="${reason}"}`;
  const line = metricsText.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * Opens `agent`'s standalone GET stream through `gateway` and asserts what the stream-drop rules
 * give: exactly `expectedText` reaches the host, and `drops` responses are dropped
 * `get_stream_response`, counted alike by the drop lines, the exchange line (outcome ok,
 * `events_dropped`, `bytes_to_host`) and the metric.
 */
export async function assertGetStreamDrops(gateway: ObservedGateway, agent: string, headers: Record<string, string>, expectedText: string, drops: number): Promise<void> {
  const reason = 'get_stream_response';
  const before = droppedInMetrics(await gateway.app.gateway.metrics.render(), agent, reason);
  const seen = gateway.lines.length;
  const res = await fetch(gateway.agentUrl(agent), { headers: { accept: 'text/event-stream', ...headers } });
  assert.equal(res.status, 200);
  const text = await withTimeout(res.text(), 5_000, 'GET stream');
  assert.equal(text, expectedText);
  const line = await gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.http_method === 'GET' && gateway.lines.indexOf(l) >= seen);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'ok', reason, bytes_to_host: Buffer.byteLength(text) });
  // Drop warnings are throttled per stream (a new user's trial 9, F5): counted from this stream's lines.
  assert.deepEqual(droppedInLines(gateway.lines.slice(seen), agent), { [reason]: drops });
  assert.deepEqual(line.events_dropped, { [reason]: drops });
  assert.equal(droppedInMetrics(await gateway.app.gateway.metrics.render(), agent, reason), before + drops);
}
