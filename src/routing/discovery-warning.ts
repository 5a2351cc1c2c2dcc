/** The discovery-size warning and metric of routing/handler.ts (AdCP "Managing response size"). */
import type { Exchange } from '../exchange.js';
import { beforeResponseText, isDiscoveryRequest, measureDiscovery, type BeforeResponse } from '../mcp/discovery-size.js';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.js';

/** The discovery-size warning's message; a measurement with anything before the response adds `; <beforeResponseText>`. */
export const DISCOVERY_OVER_TARGET_MSG = 'discovery response over its size target (AdCP managing-response-size)';

/**
 * Where {@link observeDiscovery} reports (routing/handler.ts passes its HandlerDeps): the metric
 * and the app's logger, no more (a re-read, L5: the whole HandlerDeps type imported from
 * handler.ts made a type cycle).
 */
export interface DiscoveryReport {
  readonly metrics: Pick<GatewayMetrics, 'incDiscoveryOvershoot'>;
  readonly log: Pick<Logger, 'warn'>;
}

/**
 * Discovery sizes (AdCP "Managing response size"): a `tools/list` page over 128 KiB, a
 * `get_adcp_capabilities` document over 64 KiB, or a counterparty-asserted field over its
 * budget is a warning and a metric (`adcp_gateway_discovery_size_overshoot_total{agent,surface}`),
 * never a rejection below the limit. Measured by `measureDiscovery` on what the host receives,
 * as `probe` measures it: a page on every byte of its answer through the response (`bytes`),
 * the events an SSE answer carried before the response included (`before`). The warning has
 * `agent`, `surface`, `bytes`, `target_bytes`, and with `before`, `events_before` and
 * `bytes_before`, its message then saying so: `...; 3,000 events before the response: 499,749
 * bytes` (`beforeResponseText`, the probe's row note). Hostile trial 57, F2: the warning and
 * the metric saw the response event's data alone and stayed silent on a page the probe
 * reported over its target
 * (test/regressions/discovery-size-ignores-sse-events-before-response.test.ts).
 */
export function observeDiscovery(exchange: Exchange, message: unknown, bytes: number, before: BeforeResponse | undefined, deps: DiscoveryReport): void {
  const { method, toolName } = exchange.rpc;
  if (!isDiscoveryRequest(method, toolName)) return;
  for (const m of measureDiscovery({ method, toolName, message, bytes, ...(before !== undefined ? { before } : {}) })) {
    if (!m.over) continue;
    deps.metrics.incDiscoveryOvershoot(exchange.agent.name, m.surface);
    const made = m.before;
    deps.log.warn(
      {
        agent: exchange.agent.name,
        surface: m.surface,
        bytes: m.bytes,
        target_bytes: m.target_bytes,
        ...(made !== undefined ? { events_before: made.events, bytes_before: made.bytes } : {}),
      },
      made === undefined ? DISCOVERY_OVER_TARGET_MSG : `${DISCOVERY_OVER_TARGET_MSG}; ${beforeResponseText(made)}`,
    );
  }
}
