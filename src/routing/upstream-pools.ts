/**
 * The upstream connection pools: one undici Pool per (origin, TLS settings), so a connection
 * made under one agent's TLS settings serves only agents with the same settings.
 *
 * Reported failure (a new user's trial 9, F2): one undici Agent pooled connections by origin
 * alone and chose the TLS connector per origin, "any agent at this origin skips
 * verification". So `tls_insecure_skip_verify: true` on one agent turned verification off
 * for every agent at the same scheme, host and port: a seller with a self-signed certificate
 * answered an agent that verifies, and got its Authorization header. And keep-alive
 * connections made without verification went on serving both agents after a reload turned
 * the flag off (test/regressions/tls-skip-verify-shared-pool.test.ts). Two agents with one
 * `url` are a documented setup (docs/configuration.md, "Tasks: a tool's limits do not follow
 * its task").
 *
 * - {@link connectionProfile} is the one place an agent's TLS settings become connect options
 *   and a pool key: a TLS key added to the config must be added there, and then keys and
 *   isolates pools by itself. A TLS session is cached per pool (undici's connector), so a
 *   session resumed without a certificate check never crosses settings either.
 * - {@link UpstreamPools.configure} runs when a config is applied (start-up, every reload: not
 *   per request). It maps each agent to the pool of its profile, reusing the running pool of
 *   a profile still in use, and retires the pools of profiles no agent uses any more: their
 *   idle connections close now, their in-flight requests finish, then their connections close.
 *   So a reload that changes an agent's TLS settings moves its new requests to connections
 *   made under the new ones.
 * - A request resolved under an older config that is dispatched only after a reload retired
 *   its pool (it waited for its turn behind an agent backoff) goes on a connection of its
 *   own, made under the settings it resolved (as it keeps the limits it resolved), closed
 *   once it is over: never a pooled connection of another profile.
 * - Every pool makes its connections with wire-meter.ts's MeteredClient: the bytes each
 *   response takes on the wire (chunk framing and extensions included) are bounded there.
 */
import { Pool, type Dispatcher } from 'undici';
import type { AgentConfig } from '../config/types.js';
import { METERED_CONNECTION_OPTIONS, meteredClientFactory } from './wire-meter.js';

/** How the gateway connects to an agent's seller. */
export interface ConnectionProfile {
  /** The seller's origin, `scheme://host:port` (the agent url's). */
  readonly origin: string;
  /** The TLS options of its connections (undici `connect` options); empty for `http:`. */
  readonly tls: { readonly rejectUnauthorized?: boolean };
  /** `origin` and `tls`, as one string: agents with equal keys share a pool. */
  readonly key: string;
}

/** The connection profile of an agent: its url's origin, and for `https:` its TLS settings (`tls_insecure_skip_verify`). */
export function connectionProfile(agent: AgentConfig): ConnectionProfile {
  const origin = agent.url.origin;
  // Certificates are verified unless the agent opts out (ARCHITECTURE §5).
  const tls = agent.url.protocol === 'https:' ? { rejectUnauthorized: !agent.tls_insecure_skip_verify } : {};
  return { origin, tls, key: `${origin} ${JSON.stringify(tls)}` };
}

/**
 * Options of every upstream pool: no undici body timeout (it would cut SSE streams; the
 * response pipeline runs its own deadlines and SSE idle timeout: ARCHITECTURE §5) and no
 * headers timeout (the exchange deadline covers the wait for headers); one request at a time
 * per connection over HTTP/1.1 (wire-meter.ts METERED_CONNECTION_OPTIONS: `pipelining: 1`,
 * `allowH2: false`, undici's defaults said out loud: the wire meter counts one response at a
 * time per socket, and its MeteredClient refuses options that allow more).
 */
export const UPSTREAM_POOL_OPTIONS = { bodyTimeout: 0, headersTimeout: 0, ...METERED_CONNECTION_OPTIONS } as const;

/** The pool of one connection profile. */
export class UpstreamPool {
  /** Set when a config applied later has no agent with this profile: `pool` is closing. */
  retired = false;
  /**
   * The undici Pool, made at its first request ({@link UpstreamPools.dispatch}), not when its
   * config is applied: a reload of 21,881 agents on as many origins made as many Pools in one
   * turn of the serving loop, ~0.9 s of CPU and ~2.7 s of garbage collection while every agent
   * waited (a hostile trial 21, H1). Undefined until then: a pool never used has nothing to close.
   */
  made: Pool | undefined = undefined;

  constructor(readonly profile: ConnectionProfile) {}
}

export class UpstreamPools {
  /** The pools of the config applied last, by profile key. */
  private live = new Map<string, UpstreamPool>();
  /** Each configured agent's pool (an agent of an older config keeps the one it was given). */
  private readonly byAgent = new WeakMap<AgentConfig, UpstreamPool>();
  /** Every pool not yet destroyed or closed for good (live, retired, one-off), for close and destroy. */
  private readonly open = new Set<Pool>();
  private closed = false;

  /** Maps `agents` (a config being applied) to pools, and retires the pools no agent of theirs uses. */
  configure(agents: Iterable<AgentConfig>): void {
    const next = new Map<string, UpstreamPool>();
    for (const agent of agents) {
      const profile = connectionProfile(agent);
      let pool = next.get(profile.key) ?? this.live.get(profile.key);
      if (pool === undefined) pool = new UpstreamPool(profile);
      next.set(profile.key, pool);
      this.byAgent.set(agent, pool);
    }
    for (const [key, pool] of this.live) if (!next.has(key)) this.retire(pool);
    this.live = next;
  }

  /**
   * The pool for `agent`'s requests: the one given to it when its config was applied. An agent
   * never applied (a config built but not given to {@link configure}) gets the running pool of
   * its profile, or, when none runs, a retired one (each request on its own connection).
   */
  poolFor(agent: AgentConfig): UpstreamPool {
    const known = this.byAgent.get(agent);
    if (known !== undefined) return known;
    const profile = connectionProfile(agent);
    let pool = this.live.get(profile.key);
    if (pool === undefined) {
      pool = new UpstreamPool(profile);
      this.retire(pool);
    }
    this.byAgent.set(agent, pool);
    return pool;
  }

  /** Dispatches on `pool`'s connections, or, once it is retired, on a connection of the request's own (module docs). */
  dispatch(pool: UpstreamPool, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    // Once closed for good, the pool refuses it (ClientClosedError, to the handler): no new connection.
    if (!pool.retired || this.closed) return (pool.made ??= this.newPool(pool.profile)).dispatch(opts, handler);
    const once = this.newPool(pool.profile);
    try {
      return once.dispatch(opts, handler);
    } finally {
      this.closeWhenDone(once);
    }
  }

  /** Closes every pool: in-flight requests finish first; later dispatches are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.open].map((pool) => pool.close().catch(() => undefined)));
  }

  /** Destroys every pool: in-flight requests fail. */
  async destroy(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.open].map((pool) => pool.destroy().catch(() => undefined)));
  }

  private newPool(profile: ConnectionProfile): Pool {
    // Connections metered on the wire (wire-meter.ts: chunk framing counts; review 37, F1).
    const pool = new Pool(profile.origin, { ...UPSTREAM_POOL_OPTIONS, connect: profile.tls, factory: meteredClientFactory });
    this.open.add(pool);
    // Made after close() (a pool first used then): closed at once, so its dispatch is refused.
    if (this.closed) this.closeWhenDone(pool);
    return pool;
  }

  /** How many undici Pools are open (made and not yet closed): for tests. */
  get openPools(): number {
    return this.open.size;
  }

  /** Its idle connections close now, the others once their requests are over; no new request goes to it. */
  private retire(pool: UpstreamPool): void {
    pool.retired = true;
    if (pool.made !== undefined) this.closeWhenDone(pool.made);
  }

  private closeWhenDone(pool: Pool): void {
    pool.close().then(
      () => this.open.delete(pool),
      () => this.open.delete(pool),
    );
  }
}
