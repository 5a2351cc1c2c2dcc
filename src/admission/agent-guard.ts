/**
 * Per-agent protection of the gateway and of the other agents from one hostile seller
 * (issue 5, "Memory under attack" and "Fairness"; ARCHITECTURE §5: other agents are
 * unaffected). Two mechanisms, both keyed by agent name, both state kept across config
 * reloads (the settings are read on each call):
 *
 * 1. **Backoff after bound breaches** (`backoff_after_breaches`, `backoff_base_ms`,
 *    `backoff_max_ms`). A seller whose answers keep breaking a size or structure bound
 *    (`RESPONSE_TOO_LARGE`: raw/decoded bytes, JSON depth/nodes, SSE bounds) costs the
 *    gateway CPU and memory on every attempt, and a host that retries at once keeps the
 *    gateway's one event loop busy for every other agent. After N consecutive breaches the
 *    agent backs off (a circuit breaker): when the backoff has passed, ONE request (the
 *    oldest waiting, in arrival order) is sent as a probe while the others wait for its
 *    outcome. A clean probe (forwarded or rewritten) ends the backoff and releases them
 *    all; a probe that breaches again doubles the backoff (up to the maximum) and the
 *    requests that waited for it are answered `agent_backoff` at once, never sent. A request
 *    that waits longer than its `response_deadline_ms` gets the same answer. Requests
 *    admitted before the backoff began do not deepen it. Other outcomes (5xx, timeouts,
 *    resets) neither count nor reset. So a host that retries a hostile seller at once gets
 *    an answer per backoff period instead of keeping the event loop busy.
 * 2. **Buffered response bytes** (`max_buffered_response_bytes`). The response bytes the
 *    gateway holds for all of the agent's in-flight requests at once (JSON bodies while they
 *    are received). A request whose next chunk would find the agent over the cap waits
 *    before reading it (TCP back-pressure on that seller), except the agent's oldest
 *    holding request, which always proceeds, so the agent always makes progress. Waiting
 *    counts against the request's own deadline as usual.
 *
 * The fast paths (no backoff, under the cap) are synchronous and allocate nothing but the
 * lease object.
 */

/** The guard's settings for one agent (resolved config, `AgentConfig.guard`). */
export interface GuardSettings {
  /** bytes: response bytes held at once for all the agent's in-flight requests. */
  readonly max_buffered_response_bytes: number;
  /** Consecutive `RESPONSE_TOO_LARGE` answers that start a backoff; 0 disables it. */
  readonly backoff_after_breaches: number;
  /** ms: the first backoff (capped by `backoff_max_ms`). */
  readonly backoff_base_ms: number;
  /** ms: the longest backoff. */
  readonly backoff_max_ms: number;
}

/** How an exchange ended, as far as the backoff is concerned. */
export type GuardOutcome = 'breach' | 'clean' | 'other';

/** A request admitted to its agent; give it back with {@link AgentGuard.finish}. */
export interface Admission {
  readonly agent: string;
  /** True when admitted as the one probe of a backing-off agent. */
  readonly probe: boolean;
}

/** What {@link AgentGuard.admit} returns while the agent backs off. */
export interface PendingAdmission {
  /** Resolves with the admission, or undefined (`agent_backoff`): the probe it waited for breached, or the wait bound passed. */
  readonly admitted: Promise<Admission | undefined>;
  /** Gives up the place in the queue (the host went away). Safe after the promise settled. */
  cancel(): void;
}

interface Waiter {
  resolve(admission: Admission | undefined): void;
  timer: NodeJS.Timeout;
  done: boolean;
}

class AgentState {
  settings: GuardSettings;
  consecutiveBreaches = 0;
  backoffMs = 0;
  /** performance.now() before which no probe starts. */
  openUntil = 0;
  probing = false;
  waiters: Waiter[] = [];
  pumpTimer: NodeJS.Timeout | undefined;
  heldBytes = 0;
  /** Leases holding bytes or waiting, oldest first (a Set keeps insertion order). */
  readonly leases = new Set<BufferLease>();
  blocked: BufferLease[] = [];

  constructor(settings: GuardSettings) {
    this.settings = settings;
  }

  get backingOff(): boolean {
    const n = this.settings.backoff_after_breaches;
    return n > 0 && this.consecutiveBreaches >= n;
  }
}

/** Called when an agent starts or deepens a backoff (for the log line). */
export type BackoffListener = (agent: string, consecutiveBreaches: number, backoffMs: number) => void;

export class AgentGuard {
  private readonly agents = new Map<string, AgentState>();

  constructor(private readonly onBackoff?: BackoffListener) {}

  private state(agent: string, settings: GuardSettings): AgentState {
    let s = this.agents.get(agent);
    if (s === undefined) {
      s = new AgentState(settings);
      this.agents.set(agent, s);
    } else {
      s.settings = settings;
    }
    return s;
  }

  /**
   * Admits a request to `agent`: at once (an {@link Admission}) unless the agent backs off,
   * then a {@link PendingAdmission} that resolves when its turn comes, or with undefined
   * after `maxWaitMs`.
   */
  admit(agent: string, settings: GuardSettings, maxWaitMs: number): Admission | PendingAdmission {
    const s = this.state(agent, settings);
    if (!s.backingOff) return { agent, probe: false };
    if (s.waiters.length === 0 && !s.probing && performance.now() >= s.openUntil) {
      s.probing = true;
      return { agent, probe: true };
    }
    let waiter!: Waiter;
    const admitted = new Promise<Admission | undefined>((resolve) => {
      waiter = { resolve, timer: setTimeout(() => this.drop(s, waiter, undefined), maxWaitMs), done: false };
    });
    s.waiters.push(waiter);
    this.pump(agent, s);
    return { admitted, cancel: () => this.drop(s, waiter, undefined) };
  }

  /** Records how an admitted request ended, and lets the next one in. Call exactly once per admission. */
  finish(admission: Admission, outcome: GuardOutcome): void {
    const s = this.agents.get(admission.agent);
    if (s === undefined) return;
    if (admission.probe) s.probing = false;
    if (outcome === 'clean') {
      s.consecutiveBreaches = 0;
      s.backoffMs = 0;
      s.openUntil = 0;
    } else if (outcome === 'breach') {
      const wasBackingOff = s.backingOff;
      s.consecutiveBreaches++;
      // The backoff starts at the Nth breach and doubles on each probe's breach; a request
      // admitted before the backoff began (still in flight then) does not deepen it.
      if (s.backingOff && (!wasBackingOff || admission.probe)) {
        const { backoff_base_ms: base, backoff_max_ms: max } = s.settings;
        s.backoffMs = Math.min(max, s.backoffMs === 0 ? base : s.backoffMs * 2);
        s.openUntil = performance.now() + s.backoffMs;
        this.onBackoff?.(admission.agent, s.consecutiveBreaches, s.backoffMs);
      }
      // The requests that waited for this probe are answered now (not sent).
      if (admission.probe) for (const w of s.waiters.slice()) this.drop(s, w, undefined);
    }
    this.pump(admission.agent, s);
  }

  /** True while `agent` backs off (for tests and the ops view). */
  isBackingOff(agent: string): boolean {
    return this.agents.get(agent)?.backingOff ?? false;
  }

  /** Opens the buffer lease of one response of `agent` (see {@link BufferLease}). */
  lease(agent: string, settings: GuardSettings): BufferLease {
    const s = this.state(agent, settings);
    const lease = new BufferLease(s);
    s.leases.add(lease);
    return lease;
  }

  /** Bytes currently held for `agent`'s responses. */
  heldBytes(agent: string): number {
    return this.agents.get(agent)?.heldBytes ?? 0;
  }

  private drop(s: AgentState, waiter: Waiter, admission: Admission | undefined): void {
    if (waiter.done) return;
    waiter.done = true;
    clearTimeout(waiter.timer);
    const i = s.waiters.indexOf(waiter);
    if (i >= 0) s.waiters.splice(i, 1);
    waiter.resolve(admission);
  }

  private pump(agent: string, s: AgentState): void {
    if (s.pumpTimer !== undefined) {
      clearTimeout(s.pumpTimer);
      s.pumpTimer = undefined;
    }
    if (!s.backingOff) {
      for (const w of s.waiters.slice()) this.drop(s, w, { agent, probe: false });
      return;
    }
    if (s.probing || s.waiters.length === 0) return;
    const wait = s.openUntil - performance.now();
    if (wait > 0) {
      s.pumpTimer = setTimeout(() => this.pump(agent, s), Math.ceil(wait));
      s.pumpTimer.unref();
      return;
    }
    s.probing = true;
    this.drop(s, s.waiters[0]!, { agent, probe: true });
  }
}

/**
 * The bytes one response holds while it is received, counted against its agent's
 * `max_buffered_response_bytes`. Use: `add(chunk.length)` for each chunk kept, then
 * `if (lease.mustWait) await lease.ready()` before reading the next one; `release()` once,
 * when the bytes are no longer held (any outcome).
 */
export class BufferLease {
  held = 0;
  private released = false;
  private wake: (() => void) | undefined;

  constructor(private readonly s: AgentState) {}

  add(n: number): void {
    if (this.released) return;
    this.held += n;
    this.s.heldBytes += n;
  }

  /** True when this response must wait before reading more: the agent is over its cap and this is not its oldest response. */
  get mustWait(): boolean {
    return !this.released && this.s.heldBytes > this.s.settings.max_buffered_response_bytes && this.s.leases.values().next().value !== this;
  }

  /**
   * Resolves once this response may read on (at once when it need not wait), or when
   * `stream` closes (the request was aborted meanwhile: the caller's next read fails).
   */
  ready(stream?: Pick<NodeJS.EventEmitter, 'once' | 'off'>): Promise<void> {
    if (!this.mustWait) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        stream?.off('close', done);
        this.wake = undefined;
        const i = this.s.blocked.indexOf(this);
        if (i >= 0) this.s.blocked.splice(i, 1);
        resolve();
      };
      this.wake = done;
      this.s.blocked.push(this);
      stream?.once('close', done);
    });
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const s = this.s;
    s.heldBytes -= this.held;
    this.held = 0;
    s.leases.delete(this);
    this.wake?.();
    // Wake, in arrival order, every waiting response that may now read on (each may then
    // overshoot the cap by the one chunk it reads before it checks again).
    for (const lease of s.blocked.slice()) {
      if (!lease.mustWait) lease.wake?.();
    }
  }
}
