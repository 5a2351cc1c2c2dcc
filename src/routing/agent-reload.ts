/**
 * What one reload (app.ts setConfig, from `previous` to `next`) does to the agents `previous`
 * had: which it removes or moves (routing/open-streams.ts reconfiguredReason: gone, or at
 * another resource, config/agent-url-key.ts sameAgentUrl), worked out once per reload and
 * given to the three that act on it: the urls agents had (resume/previous-urls.ts), the
 * requests waiting out a backoff (admission/agent-guard.ts releaseWaiters: hostile trial 57,
 * F4), and the streams with no end of their own (open-streams.ts
 * endStreamsOfReconfiguredAgents: hostile trial 34, F1). Each of them judged it by itself before.
 */
import type { AgentConfig, GatewayConfig } from '../config/types.js';
import { reconfiguredReason, type RECONFIGURED_REASONS } from './open-streams.js';

/** An agent of `previous` that the reload removes or moves: why, and the config it had. */
export interface ReconfiguredAgent {
  readonly reason: (typeof RECONFIGURED_REASONS)[number];
  readonly was: AgentConfig;
}

export class AgentReload {
  /** The agents of `previous` that `next` removes or moves, by name. O(agents), once. */
  readonly reconfigured: ReadonlyMap<string, ReconfiguredAgent>;

  constructor(
    readonly previous: GatewayConfig,
    readonly next: GatewayConfig,
  ) {
    const reconfigured = new Map<string, ReconfiguredAgent>();
    for (const was of previous.agents.values()) {
      const reason = reconfiguredReason(was, next);
      if (reason !== undefined) reconfigured.set(was.name, { reason, was });
    }
    this.reconfigured = reconfigured;
  }

  /**
   * Whether the agent named `name` is gone after this reload: removed or moved; one `previous`
   * did not have (state left from an older config) when `next` has none either.
   */
  gone(name: string): boolean {
    return this.previous.agents.has(name) ? this.reconfigured.has(name) : !this.next.agents.has(name);
  }

  /**
   * Why this reload ends what runs under the agent config `agent` (reconfiguredReason against
   * `next`): read from {@link reconfigured} when `agent` is `previous`'s own object for its
   * name, judged anew for an older one (an exchange begun before an earlier reload).
   */
  reasonFor(agent: AgentConfig): ReconfiguredAgent['reason'] | undefined {
    if (this.previous.agents.get(agent.name) === agent) return this.reconfigured.get(agent.name)?.reason;
    return reconfiguredReason(agent, this.next);
  }
}
