/**
 * The urls each configured agent had before the reloads that moved it (its `url` changed to
 * another resource: config/agent-url-key.ts sameAgentUrl), newest first, at most
 * {@link MAX_PREVIOUS_URLS} per agent, in memory: set when a config is applied (app.ts
 * setConfig), read by a `Last-Event-ID` resume (routing/handler.ts; resume/token.ts `verify`).
 *
 * Why (hostile trial 36, F2): a reload that moves an agent ends its standalone GET streams,
 * resumable (routing/open-streams.ts), and their tokens are signed for the old url. The MCP
 * TypeScript SDK client resumes such a stream, was refused `resume_token_invalid` twice, and
 * stopped its GET stream ("Maximum reconnection attempts (2) exceeded"): its calls went on,
 * the seller's server-initiated messages stopped until the host connected again. A standalone
 * GET stream answers no request, so a resume of it from a previous url is served as a fresh
 * standalone GET stream at the new seller instead
 * (test/regressions/moved-agent-get-stream-given-up.test.ts).
 *
 * Bounded: an agent's list drops its oldest url past {@link MAX_PREVIOUS_URLS}, and the lists
 * of agents a config no longer has are dropped with them (an agent removed, then added back,
 * starts with none). Nothing survives a restart, nor is shared between replicas: a resume from
 * a previous url on a replica that did not see the reload (or after a restart) is refused
 * `resume_token_invalid`, as before.
 */
import { sameAgentUrl } from '../config/agent-url-key.js';
import type { AgentReload } from '../routing/agent-reload.js';

/** How many previous urls are remembered per agent: the last 4 moves. */
export const MAX_PREVIOUS_URLS = 4;

const NONE: readonly URL[] = Object.freeze([]);

export class PreviousAgentUrls {
  #byAgent = new Map<string, readonly URL[]>();

  /**
   * Notes `reload` from `previous` to `next` (before `next` applies): each agent of `next`
   * whose url `previous` had at another resource (moved: AgentReload.reconfigured) gets that
   * url first in its list; every list
   * keeps only urls other than the agent's new one, at most {@link MAX_PREVIOUS_URLS}; agents
   * `next` does not have are forgotten. O(agents × MAX_PREVIOUS_URLS).
   */
  update(reload: AgentReload): void {
    const byAgent = new Map<string, readonly URL[]>();
    for (const agent of reload.next.agents.values()) {
      const moved = reload.reconfigured.get(agent.name);
      const list = [...(moved === undefined ? [] : [moved.was.url]), ...(this.#byAgent.get(agent.name) ?? NONE)];
      const kept: URL[] = [];
      for (const url of list) {
        if (kept.length === MAX_PREVIOUS_URLS) break;
        if (!sameAgentUrl(url, agent.url) && !kept.some((k) => sameAgentUrl(k, url))) kept.push(url);
      }
      if (kept.length > 0) byAgent.set(agent.name, Object.freeze(kept));
    }
    this.#byAgent = byAgent;
  }

  /** The urls `agent` had before the reloads that moved it, newest first (none for an agent never moved). */
  of(agent: string): readonly URL[] {
    return this.#byAgent.get(agent) ?? NONE;
  }
}
