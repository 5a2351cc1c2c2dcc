/**
 * The gateway's open SSE streams to hosts (app.ts `streams`): each with its exchange and the
 * function that ends it early (response/pipeline.ts SseShutdownEnd), which a graceful shutdown
 * calls for every stream, and a reload for the streams of an agent it removed or moved.
 *
 * Why the reload (hostile trial 34, F1): the standalone GET stream and long-lived streams have
 * no deadline, so after a reload removed an agent (or changed its `url`), its open GET streams
 * kept forwarding the old seller's events to their hosts for as long as the hosts stayed
 * connected (32 s and counting in the trial; weeks in a sidecar), while every new request to it
 * got `unknown_agent`. Such a stream now ends plainly, resumable (outcome `resumable_end`,
 * reason `agent_removed` or `agent_url_changed`): its host reconnects to what the config now
 * says (404 `unknown_agent`, or the new seller: a standalone GET stream's resume with a token
 * of the old url opens a fresh GET stream there, resume/previous-urls.ts; hostile trial 36,
 * F2). A stream answering a request is left to end
 * by its own bounds (`sse_deadline_ms`), as every in-flight exchange keeps its config
 * (test/regressions/removed-agent-get-stream-lives-on.test.ts).
 *
 * Moved means another resource (config/agent-url-key.ts sameAgentUrl), not another spelling:
 * a reload to `/mcp?` or `/m%63p` from `/mcp` keeps the streams (hostile trial 36, F5:
 * test/regressions/reload-url-spelling-counts-as-moved.test.ts), as the agent's resume tokens,
 * signed for the same key, keep verifying.
 */
import { sameAgentUrl } from '../config/agent-url-key.js';
import type { AgentConfig, GatewayConfig } from '../config/types.js';
import type { AgentReload } from './agent-reload.js';
import { hasCumulativeBound, type Exchange } from '../exchange.js';
import type { InFlightTable } from '../inflight-table.js';
import type { SseShutdownEnd } from '../response/pipeline.js';

/** One open SSE stream to a host: its exchange, and how to end it early. */
export interface OpenStream {
  readonly exchange: Exchange;
  readonly end: SseShutdownEnd;
}

export type OpenStreams = InFlightTable<OpenStream>;

/** The exchange line's `reason` of a stream a reload ended (log-vocabulary.ts lists them). */
export const RECONFIGURED_REASONS = ['agent_removed', 'agent_url_changed'] as const;

/** Why a stream of `agent` ends at a reload to `next`: its agent gone, or at another `url` (not the same resource: sameAgentUrl); undefined when `next` keeps it where it was. */
export function reconfiguredReason(agent: AgentConfig, next: GatewayConfig): (typeof RECONFIGURED_REASONS)[number] | undefined {
  const now = next.agents.get(agent.name);
  if (now === undefined) return 'agent_removed';
  return sameAgentUrl(now.url, agent.url) ? undefined : 'agent_url_changed';
}

/**
 * Ends, plainly and resumable (SseShutdownEnd with tokens that outlive it: same process), each
 * open stream without a cumulative bound (the standalone GET stream, a long-lived one) whose
 * agent `reload` removes or moves (AgentReload.reasonFor), its exchange's `reason` set first
 * (module doc). Returns how many it ended.
 */
export function endStreamsOfReconfiguredAgents(streams: OpenStreams, reload: AgentReload): number {
  let ended = 0;
  for (const stream of streams.values()) {
    const exchange = stream.exchange;
    if (exchange.finished || hasCumulativeBound(exchange.rpc)) continue;
    const reason = reload.reasonFor(exchange.agent);
    if (reason === undefined) continue;
    exchange.reason = reason;
    stream.end(true, 'final');
    ended++;
  }
  return ended;
}
