/**
 * Per-agent protection of the gateway and of the other agents from one hostile seller
 * (issue 5, "Memory under attack" and "Fairness"; ARCHITECTURE §5: other agents are
 * unaffected). Two mechanisms; their state is kept across config reloads (keyed by agent
 * name) while the settings are read on every call, so a reload applies at once. An agent's
 * settings are set by a reload ({@link AgentGuard.applySettings}) and by a new request
 * ({@link AgentGuard.admit}: it carries the config in force) only: the lease of an answer to a
 * request sent before the reload counts under the settings in force, not its own config's
 * ({@link AgentGuard.lease}). It set them, and put the old cap or backoff back for the whole
 * agent until its next request (review 35, F2:
 * test/regressions/old-request-lease-reverts-reloaded-guard.test.ts):
 *
 * 1. **Backoff after bound breaches** (`backoff_after_breaches`, `backoff_base_ms`,
 *    `backoff_max_ms`), per agent AND per call kind (the JSON-RPC method, and for
 *    `tools/call` the tool name: one tool whose answers are too large does not hold back the
 *    agent's other tools; names longer than a config's tool name share one: {@link callKind}). A seller whose answers keep breaking a size or structure bound
 *    (`RESPONSE_TOO_LARGE`) costs the gateway CPU and memory on every attempt, and a host that
 *    retries at once keeps the gateway's one event loop busy for every other agent. After N
 *    consecutive breaches the call kind backs off (a circuit breaker): once the backoff has
 *    passed, ONE request (the oldest waiting) is sent as a probe while the others wait for
 *    its outcome. A clean probe (forwarded or rewritten) ends the backoff and releases them
 *    all; a probe that breaches again doubles the backoff (up to the maximum) and the
 *    requests that waited for it are answered `agent_backoff` at once, never sent. A probe
 *    whose answer starts as an SSE stream frees the probe slot then (a long healthy stream
 *    must not hold the queue; the next probe goes one backoff later), its final outcome
 *    still counting. A request that waits longer than its `response_deadline_ms`, finds
 *    {@link MAX_WAITERS} already waiting, is granted too late to finish
 *    ({@link tooLateToSend}), or waits when the gateway shuts down ({@link AgentGuard.close})
 *    gets `agent_backoff` too; one waiting when a reload removes or moves its agent is let go
 *    at once ({@link AgentGuard.releaseWaiters}: `unknown_agent`, `agent_url_changed`). Requests admitted before the backoff began do not deepen it.
 *    Other outcomes (5xx, timeouts, resets) neither count nor reset; a seller's own 4xx,
 *    passed through, is a clean answer and resets it. So a host retrying a
 *    hostile seller gets an answer per backoff period instead of keeping the loop busy.
 * 2. **Buffered response bytes** (`max_buffered_response_bytes`), per agent. The response
 *    bytes the gateway holds for all of the agent's in-flight responses while they are
 *    received (JSON bodies; of an SSE stream, the event not yet dispatched: its incomplete
 *    line and the memory the parser holds for its complete `data:` lines, sse-open-event.ts:
 *    hostile trial 52, F1), and the brotli decoders of their
 *    coded bodies ({@link BufferLease.chargeDecoders}; decode.ts, a hostile new user's
 *    trial 15, H2). A response whose next chunk would find the agent over the cap waits
 *    before reading it (TCP back-pressure on that seller), except the agent's oldest
 *    response holding data, which always proceeds (and one holding no data when none
 *    does), so the agent always makes progress. The oldest-first order is by data bytes
 *    only: a response holding nothing but its decoders (an SSE stream between events) is
 *    not in it, or an idle one would be the "oldest" for good and every other answer of the
 *    agent would wait for its deadline (the review of 9e985ac: an idle gzip GET stream
 *    holding 64 KiB of decoder charge kept a 1 MiB - 1000 byte answer waiting until its
 *    response_deadline_ms with the cap at 1 MiB,
 *    test/regressions/decoder-reservation-blocks-agent-answers.test.ts). Decoders wait for
 *    room by a rule of their own instead ({@link BufferLease.mustWaitForDecoders}): before
 *    they are made, while they would take the agent over its cap and another response's
 *    decoders are charged (one response's go over the cap when no other's are charged,
 *    whatever data the agent holds, so decoders larger than the cap are made at all; first
 *    come, first served), holding the body's first chunk outside the order meanwhile (a response waiting there
 *    is never the oldest the others wait for); decoders are charged only on a request's
 *    answer, whose deadline ends that wait (decode.ts). The bound is therefore the cap + one
 *    response's decoders (18.75 MiB at most: charged beside the data others took under the
 *    cap) + the oldest response (up to its `max_response_bytes`) + one chunk per other
 *    response in flight; decoders alone are charged at most the larger of the cap and one
 *    response's. Decoders count as held bytes: while they take the agent over its cap, its
 *    answers, br or not, are received one at a time, oldest first (a review of 0bb3129:
 *    test/regressions/br-decoder-over-cap-holds-back-other-answers.test.ts).
 *    **Answers hosts have not taken** ({@link HostHold}) count too, outside the order, as
 *    decoders do: what an ended answer, or an SSE stream waiting for its host's drain, holds
 *    in the host's response until the host takes it (hostile trial 54, F3). A non-reading host
 *    thus slows the agent's answers (one at a time over the cap), never stalls them, and is
 *    cut only by its own timeouts (`host_not_reading`: response_deadline_ms, or
 *    sse_idle_timeout_ms). No earlier cut: Node does not lower `writableLength` while one
 *    write is in progress, so a host reading a large answer slowly but steadily looks exactly
 *    like one that reads nothing (a stall cut by it, 502540d, reset such a host:
 *    test/regressions/slow-reading-host-cut-by-stall-rule.test.ts).
 *    **Load shedding**: a response that must wait while its call kind backs off (mechanism 1)
 *    is not waited for: its lease is shed ({@link BufferLease.shedRetryAfterS} set, its
 *    bytes released; the reader stops and answers `agent_backoff_shed`, docs/errors.md),
 *    and so is every response already waiting when its kind starts backing off. Those
 *    answers come from the seller whose recent answers to the same kind broke bounds, and
 *    each would hold up to its `max_response_bytes` (issue 5, "Memory under attack": 50
 *    concurrent 100 MiB answers read 4 MiB each, 200 MiB of buffers for V8 to collect, where
 *    shedding reads about the cap's worth). A response reading on within the cap, the
 *    agent's oldest, and a probe (its outcome decides the backoff) are never shed.
 *
 * The fast paths (no backoff, under the cap) are synchronous and allocate only the
 * admission and lease objects.
 */
import { MAX_TOOL_NAME_CHARS } from '../config/defaults.js';

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

/**
 * A body reader's signal that its response was shed (module doc, load shedding): thrown or
 * rejected by the reader, mapped to `agent_backoff_shed` with `retry_after` = `retryAfterS`
 * (body-source.ts `bodyErrorToLocal`). No stack: a signal between the gateway's own parts.
 */
export class LoadShedError extends Error {
  constructor(readonly retryAfterS: number) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('answer shed: its call kind backs off and its agent is over max_buffered_response_bytes');
    Error.stackTraceLimit = limit;
  }
}
Object.defineProperty(LoadShedError.prototype, 'name', { value: 'LoadShedError', writable: true, configurable: true, enumerable: false });

/** Most requests that may wait for one backing-off call kind; more are answered `agent_backoff` at once. */
export const MAX_WAITERS = 256;
/**
 * Most call kinds with breach history tracked per agent (memory bound: the host chooses the
 * tool names). Only a kind that breached takes a place, and gives it back on its next clean
 * answer; when the table is full, a kind that holds nothing back (below the breach count, or
 * past its backoff with no probe and no request waiting) makes room. Past that (every place
 * held by a kind holding calls back now), a new kind's breaches are not tracked: it is never
 * held back, its answers still cut at their limits and bounded by the buffered-bytes cap.
 * Found by a new user: with one shared bucket past 64 kinds, once 64 tools had breached, every
 * new tool name (healthy ones too) waited out that bucket's backoff and got `agent_backoff`.
 */
export const MAX_KINDS_PER_AGENT = 64;

/** A request admitted to its agent; give it back with {@link AgentGuard.finish}, exactly once. */
export interface Admission {
  readonly agent: string;
  /** The call kind it counts for ({@link callKind}). */
  readonly kind: string;
  /** True when admitted as the probe of a backing-off call kind. */
  readonly probe: boolean;
  /** True while this probe holds its kind's probe slot. */
  holdsSlot: boolean;
}

/** What {@link AgentGuard.admit} returns while the call kind backs off. */
export interface PendingAdmission {
  /** Resolves with the admission, or undefined (`agent_backoff`): the probe it waited for breached, the wait bound passed, or the queue was full. */
  readonly admitted: Promise<Admission | undefined>;
  /** Gives up the place in the queue (the host went away). Safe after the promise settled. */
  cancel(): void;
}

interface Waiter {
  resolve(admission: Admission | undefined): void;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

/** The breaker of one (agent, call kind); internal to the guard (exported for {@link BufferLease}'s type only). */
export class Breaker {
  consecutiveBreaches = 0;
  /** The backoff in force (0: none yet); the effective one is capped by the current settings. */
  backoffMs = 0;
  /** performance.now() of the breach that set the backoff. */
  backoffFrom = 0;
  probing = false;
  waiters: Waiter[] = [];
  pumpTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly agent: AgentState,
    readonly kind: string,
  ) {}

  get backingOff(): boolean {
    const n = this.agent.settings.backoff_after_breaches;
    return n > 0 && this.consecutiveBreaches >= n;
  }

  /** performance.now() before which no probe starts (from the settings in force now). */
  get openUntil(): number {
    return this.backoffFrom + Math.min(this.backoffMs, this.agent.settings.backoff_max_ms);
  }

  /**
   * True while this kind holds calls back at `now`: backing off and within its backoff, or
   * with a probe out or requests waiting. A breaker that does not may give its place up
   * (AgentGuard.breakerForBreach).
   */
  holdsBack(now: number): boolean {
    return this.backingOff && (now < this.openUntil || this.probing || this.waiters.length > 0);
  }

  /** Whole seconds (at least 1) until the next probe may go: `retry_after`. */
  get retryAfterS(): number {
    return Math.max(1, Math.ceil((this.openUntil - performance.now()) / 1000));
  }
}

class AgentState {
  readonly breakers = new Map<string, Breaker>();
  heldBytes = 0;
  /** Of {@link heldBytes}: what its responses' decoders are charged now ({@link BufferLease.chargeDecoders}). */
  decoderBytes = 0;
  /** Times a lease had to wait (since start). */
  bufferWaits = 0;
  /**
   * Leases holding data bytes, in the order they started holding: a list linked through the
   * leases themselves, of which the first always reads on. A lease holding no data is not in
   * it, whatever it holds outside the order ({@link BufferLease.reserved}: its decoders), so
   * an idle SSE stream is never the one exempt while the others wait: nothing would ever be
   * released. Not a `Set`: leases join and leave it per response, and under that
   * churn V8 chains a Set's rebuilt tables, keeping old leases alive until a mark-compact
   * once one table is old (inflight-table.ts); and {@link BufferLease.mustWait}, read per
   * chunk, gets the first without making an iterator.
   */
  firstLease: BufferLease | undefined = undefined;
  lastLease: BufferLease | undefined = undefined;
  blocked: BufferLease[] = [];
  /** The last {@link BufferLease.decoderTurn} handed out: decoder charges are served in this order. */
  decoderTurns = 0;
  /** Of {@link heldBytes}: what answers written to hosts and not yet taken by their sockets hold ({@link HostHold}). */
  hostHeldBytes = 0;
  /** The {@link HostHold}s counted now, oldest first (a list linked through them, as the leases' is). */
  firstHold: HostHold | undefined = undefined;
  lastHold: HostHold | undefined = undefined;

  /** Appends `lease` to the holding list (it must not be in it). */
  linkLease(lease: BufferLease): void {
    lease.prevLease = this.lastLease;
    if (this.lastLease === undefined) this.firstLease = lease;
    else this.lastLease.nextLease = lease;
    this.lastLease = lease;
  }

  /** Removes `lease` from the holding list (it must be in it) and clears its links. */
  unlinkLease(lease: BufferLease): void {
    const { prevLease, nextLease } = lease;
    if (prevLease === undefined) this.firstLease = nextLease;
    else prevLease.nextLease = nextLease;
    if (nextLease === undefined) this.lastLease = prevLease;
    else nextLease.prevLease = prevLease;
    lease.prevLease = lease.nextLease = undefined;
  }

  constructor(
    readonly name: string,
    public settings: GuardSettings,
  ) {}

  /** Wakes, in arrival order, every waiting response that may go on now. */
  wakeBlocked(): void {
    if (this.blocked.length === 0) return;
    for (const lease of this.blocked.slice()) if (!lease.blockedNow) lease.wake?.();
  }

  /**
   * Re-reads what each {@link HostHold} holds now, then wakes the waiting responses that may
   * go on when hosts took some. O(holds): run only when a response is about to wait, and at a
   * metrics scrape. Never cuts a host (the {@link HostHold} doc says why).
   */
  sweepHolds(): void {
    if (this.firstHold === undefined) return;
    const before = this.hostHeldBytes;
    for (let hold: HostHold | undefined = this.firstHold; hold !== undefined; hold = hold.nextHold) hold.measure();
    if (this.hostHeldBytes < before) this.wakeBlocked();
  }
}

/** What a {@link HostHold} measures: the host's response (`ServerResponse.writableLength`: written, not yet taken by the socket). */
export interface HostPending {
  readonly writableLength: number;
}

/**
 * The bytes an answer written to its host holds until the host's socket takes them, counted
 * against the agent's `max_buffered_response_bytes` (hostile trial 54, F3): from when the
 * gateway ends the answer without Node having written it whole (routing/handler.ts), or an SSE
 * stream starts waiting for its host's drain (sse-stage.ts), until the response finishes or
 * closes ({@link release}). Outside the oldest-first order, as decoders are: while host-held
 * bytes take the agent over its cap, its answers are received one at a time, oldest first, so
 * a host that does not read slows the agent's other hosts, never stalls them. Measured
 * (`writableLength`) when made and at each sweep ({@link AgentState.sweepHolds}); in between
 * it counts what it held when last measured (at most that: nothing is written to a response
 * while it is held). Made only off the fast path: an answer Node writes straight into the
 * socket (nearly all) makes none.
 *
 * Counting only: a hold never cuts its host; the host's own timeouts do (response_deadline_ms,
 * sse_idle_timeout_ms: `host_not_reading`). A cut by progress (502540d: over the cap, a host
 * whose `writableLength` had not gone down for 1 s was reset) cannot tell a slow reader from
 * a non-reader: Node lowers `writableLength` (and `_handle.writeQueueSize`) only when a write
 * completes, so a 4 MiB `res.end(buf)` reads 4194464 for the seconds a host takes reading it
 * (a host at ~640 KB/s was reset 1.75 s in with 1,147,904 bytes read:
 * test/regressions/slow-reading-host-cut-by-stall-rule.test.ts). Open: no JS-visible progress
 * signal exists during one large write, nor with slices (Linux reports a socket writable only
 * once about a third of its send buffer is free; hostile trial 55, F3, docs/errors.md
 * host_not_reading).
 */
export class HostHold {
  /** bytes: what the host's response held when last measured (counted in the agent's held bytes). */
  bytes = 0;
  /** Neighbours in the agent's list of holds. */
  prevHold: HostHold | undefined = undefined;
  nextHold: HostHold | undefined = undefined;
  private released = false;

  constructor(
    private readonly s: AgentState,
    private readonly pending: HostPending,
  ) {
    this.prevHold = s.lastHold;
    if (s.lastHold === undefined) s.firstHold = this;
    else s.lastHold.nextHold = this;
    s.lastHold = this;
    this.set(pending.writableLength);
  }

  /**
   * Re-reads what the response holds (only ever lower: nothing is written to it while held).
   * Called only for a hold in its agent's list ({@link AgentState.sweepHolds}), which a hold
   * leaves when released.
   */
  measure(): void {
    const n = this.pending.writableLength;
    if (n < this.bytes) this.set(n);
  }

  private set(n: number): void {
    const d = n - this.bytes;
    this.bytes = n;
    this.s.hostHeldBytes += d;
    this.s.heldBytes += d;
  }

  /** The host took it all, or its connection closed: the bytes are no longer held. Idempotent. */
  release(): void {
    if (this.released) return;
    this.set(0);
    this.released = true;
    const s = this.s;
    const { prevHold, nextHold } = this;
    if (prevHold === undefined) s.firstHold = nextHold;
    else prevHold.nextHold = nextHold;
    if (nextHold === undefined) s.lastHold = prevHold;
    else nextHold.prevHold = prevHold;
    this.prevHold = this.nextHold = undefined;
    s.wakeBlocked();
  }
}

/** Called when a call kind starts or deepens a backoff (for the log line). */
export type BackoffListener = (agent: string, kind: string, consecutiveBreaches: number, backoffMs: number) => void;
/** Called when a clean answer (a probe's, or one admitted before the backoff) ends a call kind's backoff (for the log line). */
export type RecoveryListener = (agent: string, kind: string) => void;

/**
 * The call kind of a JSON-RPC batch, whatever it holds: `batch`, the metrics' `method` label
 * for it too (observability/metrics.ts methodLabel), and what the backoff log lines say in
 * `call`. It was the empty string (a batch has no method), so the warning read `"call":""`
 * (a hostile new-user trial 14, L4: test/regressions/batch-backoff-log-call-empty.test.ts).
 * A lone request whose method is `batch` (no MCP method is) has `method "batch"` ({@link callKind}).
 */
export const BATCH_CALL_KIND = 'batch';

/**
 * The call kind of a request, for {@link AgentGuard.admit} (the key of its backoff, and what the
 * backoff log lines say in `call`), in three key spaces no request can cross:
 * - a `tools/call`'s: `tools/call <tool>` (`toolName`: its `params.name`; the peek reads none
 *   for another method);
 * - another request's: its method, when it holds no space (every MCP method), is not empty
 *   and is not {@link BATCH_CALL_KIND}; any other method gets
 *   `method <the method as a JSON string>` (`method "tools/call small_tool"`, `method "batch"`,
 *   `method ""`), which no tool's kind and no method without a space can be; a message without
 *   a method (a host's response) has `''`;
 * - {@link BATCH_CALL_KIND} for a batch (`batch` true).
 * A tool name or method longer than {@link MAX_TOOL_NAME_CHARS} (the longest tool name a config
 * accepts) is no kind of its own: every such tool has {@link OVER_LONG_TOOL_KIND}, every such
 * method {@link OVER_LONG_METHOD_KIND} (holding a space, neither is another request's kind).
 *
 * Why the key spaces (a review of the request side, L1): the kind was `<method> <tool>` or the
 * method, so a request of method `tools/call small_tool` had tool `small_tool`'s kind: it
 * waited out that tool's backoff, and its clean `-32601` answer, as the probe, ended it
 * (test/regressions/method-named-like-tool-kind-shares-backoff.test.ts). Why the over-long
 * kinds (M2): a kind that breached keeps its name while it backs off, up to
 * {@link MAX_KINDS_PER_AGENT} per agent, and the host chooses the names, each up to
 * `max_request_bytes`: 64 tools of ~4 MiB names answered over their limit kept ~226 MB
 * (test/regressions/backoff-kind-per-over-long-name-unbounded-memory.test.ts). Why `batch` and
 * the empty method are quoted (hostile trial 46, item 1): a request of method `batch` had the
 * batches' kind, so it waited out their backoff and its clean answer, as the probe, ended it;
 * a method `""` had the kind of a message without one
 * (test/regressions/method-named-batch-shares-batch-backoff.test.ts).
 *
 * Cost: a tool's kind is the one string concatenation it always was; a method's kind is the
 * method itself, after a length comparison, two string comparisons and one `includes(' ')`.
 */
export function callKind(method: string | undefined, toolName: string | undefined, batch = false): string {
  if (batch) return BATCH_CALL_KIND;
  if (toolName !== undefined) return toolName.length > MAX_TOOL_NAME_CHARS ? OVER_LONG_TOOL_KIND : TOOL_KIND_PREFIX + toolName;
  if (method === undefined) return '';
  if (method.length > MAX_TOOL_NAME_CHARS) return OVER_LONG_METHOD_KIND;
  return method === '' || method === BATCH_CALL_KIND || method.includes(' ') ? `method ${JSON.stringify(method)}` : method;
}

/** The start of every tool's call kind ({@link callKind}). */
const TOOL_KIND_PREFIX = 'tools/call ';
/** The call kind of every `tools/call` whose tool name is longer than {@link MAX_TOOL_NAME_CHARS} ({@link callKind}). */
export const OVER_LONG_TOOL_KIND = 'over-long tool name';
/** The call kind of every request whose method is longer than {@link MAX_TOOL_NAME_CHARS} ({@link callKind}). */
export const OVER_LONG_METHOD_KIND = 'over-long method';

/**
 * A request granted its turn with less than this share of its `response_deadline_ms` left
 * (capped at {@link MIN_SEND_MS}) is answered `agent_backoff` instead of being sent: it could
 * not finish in time, and a mutating call sent only to time out would leave the host unsure
 * whether it ran (found by a new user: waiters sent with ~0 ms left after a slow probe).
 */
export const MIN_SEND_SHARE = 0.25;
/** ms: the most time left that still counts as too late ({@link MIN_SEND_SHARE}). */
export const MIN_SEND_MS = 1_000;

/** True when a request with `remainingMs` of its `deadlineMs` left should not be sent. */
export function tooLateToSend(remainingMs: number, deadlineMs: number): boolean {
  return sendWindowMs(remainingMs, deadlineMs) < 0;
}

/**
 * How long (ms) a request with `remainingMs` of its `deadlineMs` left may still wait before it
 * is {@link tooLateToSend} (negative once it is): what bounds a request held at its turn for
 * the seller's answer to a cancellation naming it (routing/pipelined-wait.ts, routing/backoff-wait.ts; `cancel_wait`).
 */
export function sendWindowMs(remainingMs: number, deadlineMs: number): number {
  return remainingMs - Math.min(MIN_SEND_MS, deadlineMs * MIN_SEND_SHARE);
}

export class AgentGuard {
  private readonly agents = new Map<string, AgentState>();
  /**
   * The agents of the last reload ({@link applySettings}; undefined before one): the settings
   * an agent the guard has no state for yet starts with when an older exchange's lease is the
   * first to meet it.
   */
  private reloaded: ReadonlyMap<string, { readonly guard: GuardSettings }> | undefined = undefined;
  /** Set by {@link close}: no request waits any more. */
  private closed = false;

  constructor(
    private readonly onBackoff?: BackoffListener,
    private readonly onRecovered?: RecoveryListener,
  ) {}

  /**
   * The state of `agent`, made on first use with `settings` (or, for an older exchange's
   * lease, `adopt` false, the last reload's settings for the agent when it has some). With
   * `adopt` (a reload, a new request), `settings` become the agent's.
   */
  private state(agent: string, settings: GuardSettings, adopt: boolean): AgentState {
    let s = this.agents.get(agent);
    if (s === undefined) {
      s = new AgentState(agent, (adopt ? undefined : this.reloaded?.get(agent)?.guard) ?? settings);
      this.agents.set(agent, s);
    } else if (adopt && s.settings !== settings) {
      // A reload: the new settings apply at once (a shorter backoff, a disabled backoff).
      s.settings = settings;
      for (const b of s.breakers.values()) if (b.waiters.length > 0) this.pump(b);
      for (const lease of s.blocked.slice()) if (!lease.blockedNow) lease.wake?.();
    }
    return s;
  }

  /** Applies reloaded settings to the agents it knows, and keeps them for the others (`agents`: name -> config with `guard`). */
  applySettings(agents: ReadonlyMap<string, { readonly guard: GuardSettings }>): void {
    this.reloaded = agents;
    for (const [name, agent] of agents) if (this.agents.has(name)) this.state(name, agent.guard, true);
  }

  /**
   * The breaker of a kind that breached: its own, or a new one (in a place made free when the
   * table is full, {@link MAX_KINDS_PER_AGENT}); undefined when every place holds calls back.
   */
  private breakerForBreach(s: AgentState, kind: string): Breaker | undefined {
    let b = s.breakers.get(kind);
    if (b !== undefined) return b;
    if (s.breakers.size >= MAX_KINDS_PER_AGENT) {
      const now = performance.now();
      let idle: Breaker | undefined;
      for (const other of s.breakers.values()) {
        if (!other.holdsBack(now)) {
          idle = other;
          break;
        }
      }
      if (idle === undefined) return undefined;
      s.breakers.delete(idle.kind);
    }
    b = new Breaker(s, kind);
    s.breakers.set(kind, b);
    return b;
  }

  /**
   * Admits a request of call kind `kind` (see {@link callKind}) to `agent`: at once (an
   * {@link Admission}) unless that kind backs off, then a {@link PendingAdmission} that
   * resolves when its turn comes, or with undefined (answer `agent_backoff`).
   * @param maxWaitMs longest wait, in ms (the request's `response_deadline_ms`)
   */
  admit(agent: string, kind: string, settings: GuardSettings, maxWaitMs: number): Admission | PendingAdmission {
    // A kind without breach history has no breaker (and takes no place): admitted at once.
    const b = this.state(agent, settings, true).breakers.get(kind);
    if (b === undefined || !b.backingOff) return { agent, kind, probe: false, holdsSlot: false };
    if (b.waiters.length === 0 && !b.probing && performance.now() >= b.openUntil) {
      b.probing = true;
      return { agent, kind: b.kind, probe: true, holdsSlot: true };
    }
    if (b.waiters.length >= MAX_WAITERS || this.closed) return { admitted: Promise.resolve(undefined), cancel: () => {} };
    let waiter!: Waiter;
    const admitted = new Promise<Admission | undefined>((resolve) => {
      waiter = { resolve, timer: undefined, done: false };
    });
    waiter.timer = setTimeout(() => this.drop(b, waiter, undefined), maxWaitMs);
    b.waiters.push(waiter);
    this.pump(b);
    return { admitted, cancel: () => this.drop(b, waiter, undefined) };
  }

  /**
   * Admits a resumed stream of a request of call kind `kind` (a GET with `Last-Event-ID`
   * continuing a request's or a batch's stream; the kind from its token) at once, whether or
   * not that kind backs off: the request was sent already and the host fetches its answer, so
   * holding the resume back would only lose it. Its outcome counts through {@link finish} as
   * the request's own answer would: a breach counts (it may start a backoff, never deepen one:
   * it is no probe), a clean end resets the count and ends a backoff. Not a probe, so its
   * answer may be shed. Review 35, F1: resumes counted nothing, so a seller breaking its
   * bounds only on resumes was never held back
   * (test/regressions/resume-breach-escapes-backoff.test.ts).
   */
  admitResumed(agent: string, kind: string, settings: GuardSettings): Admission {
    // The agent's state is made now, so that `finish` finds it (after a restart, on another replica).
    this.state(agent, settings, false);
    return { agent, kind, probe: false, holdsSlot: false };
  }

  /**
   * The probe's answer started as an SSE stream within bounds: it gives up its probe slot
   * now, so the next waiter may go; its final outcome still counts through {@link finish}.
   */
  probeStreaming(admission: Admission): void {
    if (!admission.holdsSlot) return;
    const b = this.agents.get(admission.agent)?.breakers.get(admission.kind);
    admission.holdsSlot = false;
    if (b === undefined) return;
    b.probing = false;
    // The next probe still waits one backoff from now: a seller streaming bombs gets one
    // request per backoff, a healthy stream's clean end releases everyone.
    if (b.backingOff) b.backoffFrom = performance.now();
    this.pump(b);
  }

  /** Records how an admitted request ended, and lets the next one in. Call exactly once per admission. */
  finish(admission: Admission, outcome: GuardOutcome): void {
    const s = this.agents.get(admission.agent);
    if (s === undefined) return;
    const b = outcome === 'breach' ? this.breakerForBreach(s, admission.kind) : s.breakers.get(admission.kind);
    if (b === undefined) return;
    if (admission.holdsSlot) {
      admission.holdsSlot = false;
      b.probing = false;
    }
    if (outcome === 'clean') {
      const wasBackingOff = b.backingOff;
      b.consecutiveBreaches = 0;
      b.backoffMs = 0;
      if (wasBackingOff) this.onRecovered?.(admission.agent, admission.kind);
      // The requests waiting are let in (pump), and the kind gives its place back.
      this.pump(b);
      if (!b.probing && b.waiters.length === 0) s.breakers.delete(b.kind);
      return;
    }
    if (outcome === 'breach') {
      const wasBackingOff = b.backingOff;
      b.consecutiveBreaches++;
      // The backoff starts at the Nth breach and doubles on each probe's breach; a request
      // admitted before the backoff began (still in flight then) does not deepen it.
      if (b.backingOff && (!wasBackingOff || admission.probe)) {
        const { backoff_base_ms: base, backoff_max_ms: max } = b.agent.settings;
        b.backoffMs = Math.min(max, b.backoffMs === 0 ? base : b.backoffMs * 2);
        b.backoffFrom = performance.now();
        this.onBackoff?.(admission.agent, admission.kind, b.consecutiveBreaches, b.backoffMs);
      }
      // The requests that waited for this probe are answered now (not sent).
      if (admission.probe) for (const w of b.waiters.slice()) this.drop(b, w, undefined);
      // Responses of this kind waiting for buffer room are not worth holding any more.
      if (b.backingOff) for (const lease of b.agent.blocked.slice()) if (lease.shedKind === b.kind) lease.shedNow();
    }
    this.pump(b);
  }

  /**
   * The gateway is shutting down: every waiting request is answered now (undefined:
   * `agent_backoff`, never sent) and no request waits from here on (found by a new user:
   * waiters hung through the shutdown grace, and a probe could still go out while draining).
   */
  close(): void {
    this.closed = true;
    for (const s of this.agents.values()) this.releaseAgentWaiters(s);
  }

  /**
   * A reload removed or moved agents (`reload.gone(name)` true for each, by name:
   * routing/agent-reload.ts AgentReload): every request
   * waiting for the turn of one of their call kinds is let go now, resolved undefined (no turn
   * granted), its timer cleared, and the kind's pump timer with it; routing/backoff-wait.ts then
   * answers it from the config in force (`unknown_agent`, `agent_url_changed`), never sending
   * it. The kinds' breach counts, backoffs and a probe in flight stay (the state survives
   * reloads: an agent added back finds it as it was). Returns how many were let go. Hostile
   * trial 57, F4: such requests waited out the backoff, then went to the removed agent's
   * seller with the old config (test/regressions/backoff-waiter-sent-after-agent-removed.test.ts).
   */
  releaseWaiters(reload: { gone(agent: string): boolean }): number {
    let released = 0;
    for (const s of this.agents.values()) {
      let waiting = false;
      for (const b of s.breakers.values()) if (b.waiters.length > 0) waiting = true;
      if (waiting && reload.gone(s.name)) released += this.releaseAgentWaiters(s);
    }
    return released;
  }

  /**
   * Lets go every request waiting for a turn of one of `s`'s call kinds (resolved undefined:
   * no turn granted), each kind's pump timer cleared; how many it let go. For {@link close}
   * and {@link releaseWaiters}.
   */
  private releaseAgentWaiters(s: AgentState): number {
    let released = 0;
    for (const b of s.breakers.values()) {
      clearTimeout(b.pumpTimer);
      b.pumpTimer = undefined;
      released += b.waiters.length;
      for (const w of b.waiters.slice()) this.drop(b, w, undefined);
    }
    return released;
  }

  /** True while `agent`'s call kind `kind` backs off (tests, the ops view). */
  isBackingOff(agent: string, kind: string): boolean {
    return this.agents.get(agent)?.breakers.get(kind)?.backingOff ?? false;
  }

  /**
   * Opens the buffer lease of one response of `agent` (see {@link BufferLease}); with
   * `shedKind` (its call kind, {@link callKind}), the response is shed instead of waiting
   * while that kind backs off (module doc, load shedding). Never give a probe's kind.
   * `settings` (the exchange's config's) are used only for an agent the guard has neither
   * state nor reloaded settings for: an exchange may predate the last reload, and its lease
   * counts under the agent's settings in force (module doc).
   */
  lease(agent: string, settings: GuardSettings, shedKind?: string): BufferLease {
    return new BufferLease(this.state(agent, settings, false), shedKind);
  }

  /**
   * Counts what the host's response `pending` holds (written, not yet taken by its socket)
   * against `agent`'s `max_buffered_response_bytes` ({@link HostHold}), until the hold's
   * `release()`; undefined when it holds nothing (hostile trial 54, F3). Counts only: the
   * host is cut by its own timeouts, never by this ({@link HostHold}).
   */
  holdForHost(agent: string, settings: GuardSettings, pending: HostPending): HostHold | undefined {
    if (pending.writableLength <= 0) return undefined;
    return new HostHold(this.state(agent, settings, false), pending);
  }

  /** Bytes currently held for `agent`'s responses. */
  heldBytes(agent: string): number {
    return this.agents.get(agent)?.heldBytes ?? 0;
  }

  /** How many times one of `agent`'s responses had to wait for the buffered-bytes cap (since start). */
  bufferWaits(agent: string): number {
    return this.agents.get(agent)?.bufferWaits ?? 0;
  }

  /**
   * Whole seconds (at least 1) until `agent`'s call kind `kind` may send its next probe, for
   * `retry_after` on `agent_backoff`; undefined when it does not back off.
   */
  retryAfterS(agent: string, kind: string): number | undefined {
    const b = this.agents.get(agent)?.breakers.get(kind);
    return b === undefined || !b.backingOff ? undefined : b.retryAfterS;
  }

  /** Requests of `agent`'s call kind `kind` waiting for their turn now. */
  waiting(agent: string, kind: string): number {
    return this.agents.get(agent)?.breakers.get(kind)?.waiters.length ?? 0;
  }

  /**
   * Agents with guard state, for the metrics: name, bytes held, waits so far, and the call
   * kinds holding calls back now (in their backoff, or with a probe out or requests waiting;
   * a kind whose backoff ran out with no call since is not counted: its next call goes).
   */
  *snapshot(): Generator<{ agent: string; heldBytes: number; hostHeldBytes: number; bufferWaits: number; backingOff: number }> {
    const now = performance.now();
    for (const s of this.agents.values()) {
      let backingOff = 0;
      for (const b of s.breakers.values()) if (b.holdsBack(now)) backingOff++;
      // What hosts have taken since the holds were last measured.
      s.sweepHolds();
      yield { agent: s.name, heldBytes: s.heldBytes, hostHeldBytes: s.hostHeldBytes, bufferWaits: s.bufferWaits, backingOff };
    }
  }

  private drop(b: Breaker, waiter: Waiter, admission: Admission | undefined): void {
    if (waiter.done) return;
    waiter.done = true;
    clearTimeout(waiter.timer);
    const i = b.waiters.indexOf(waiter);
    if (i >= 0) b.waiters.splice(i, 1);
    waiter.resolve(admission);
  }

  private pump(b: Breaker): void {
    if (b.pumpTimer !== undefined) {
      clearTimeout(b.pumpTimer);
      b.pumpTimer = undefined;
    }
    const agent = b.agent.name;
    if (!b.backingOff) {
      for (const w of b.waiters.slice()) this.drop(b, w, { agent, kind: b.kind, probe: false, holdsSlot: false });
      return;
    }
    if (b.probing || b.waiters.length === 0 || this.closed) return;
    const wait = b.openUntil - performance.now();
    if (wait > 0) {
      b.pumpTimer = setTimeout(() => this.pump(b), Math.ceil(wait));
      b.pumpTimer.unref();
      return;
    }
    b.probing = true;
    this.drop(b, b.waiters[0]!, { agent, kind: b.kind, probe: true, holdsSlot: true });
  }
}

/** The seller's body as a {@link BufferLease} wait watches it: its close before its end ends the wait. */
export type WatchedBody = Pick<NodeJS.EventEmitter, 'once' | 'off'> & { readonly destroyed?: boolean; readonly readableEnded?: boolean };

/**
 * How {@link BufferLease.chargeDecoders} ended: `charged` (the bytes are held until
 * {@link BufferLease.unchargeDecoders} or the release); else nothing is charged: `shed` (the
 * response was shed while it waited: {@link BufferLease.shedRetryAfterS}), `over` (released:
 * its exchange ended, at its deadline or the host's leaving), `aborted` (the seller's body
 * closed before its end: its next read fails).
 */
export type DecoderCharge = 'charged' | 'shed' | 'over' | 'aborted';

/**
 * The bytes one response holds while it is received, counted against its agent's
 * `max_buffered_response_bytes`. Use: `add(chunk.length)` for each chunk kept (or `set(n)`
 * for the bytes held now), then `if (lease.mustWait) await lease.ready(stream)` before
 * reading the next chunk; `release()` once, when the bytes are no longer held (any outcome).
 * A coded body's brotli decoders are charged before they are made (decode.ts DecoderRoom):
 * `await lease.chargeDecoders(n, firstChunkBytes, stream)`, and `unchargeDecoders(n)` once
 * they are gone (the release gives back whatever is left).
 */
export class BufferLease {
  /** Bytes held now: the response's data (the lease's place in the oldest-first order) + {@link reserved}. */
  held = 0;
  /**
   * Of {@link held}: bytes held outside the oldest-first order, which {@link set} keeps: the
   * decoders' charge ({@link decoders}), and while they wait for room, the body's first chunk.
   * The lease is in its agent's holding list exactly while `held - reserved` (its data) is above 0.
   */
  reserved = 0;
  /** Of {@link reserved}: its decoders' charge ({@link chargeDecoders}). */
  decoders = 0;
  /** Neighbours in the agent's holding list ({@link AgentState.firstLease}). */
  prevLease: BufferLease | undefined = undefined;
  nextLease: BufferLease | undefined = undefined;
  /** Set once, by {@link release} (or {@link shedNow}): the lease holds nothing and waits for nothing from then on. */
  released = false;
  /** Set while waiting in {@link ready} or {@link chargeDecoders}. */
  wake: (() => void) | undefined;
  /** While waiting in {@link chargeDecoders}: the decoders' bytes it waits to charge. */
  private waitingDecoders: number | undefined = undefined;
  /**
   * While in {@link chargeDecoders}: its turn among the agent's decoder charges (first come,
   * first served: {@link mustWaitForDecoders}); Infinity otherwise (a response asking whether
   * it would wait comes after every charge begun).
   */
  private decoderTurn = Infinity;
  /**
   * Set once the response is shed (module doc, load shedding): whole seconds until its kind's
   * next probe (`retry_after`). The reader checks it after {@link ready} and stops with a
   * {@link LoadShedError}.
   */
  shedRetryAfterS: number | undefined = undefined;

  constructor(
    private readonly s: AgentState,
    /** The response's call kind ({@link callKind}), when it may be shed. */
    readonly shedKind?: string,
  ) {}

  /** The breaker of {@link shedKind} now (a kind gets one at its first breach). */
  private get breaker(): Breaker | undefined {
    return this.shedKind === undefined ? undefined : this.s.breakers.get(this.shedKind);
  }

  /** Adds `n` data bytes (a chunk kept). */
  add(n: number): void {
    if (this.released || n <= 0) return;
    if (this.held === this.reserved) this.s.linkLease(this);
    this.held += n;
    this.s.heldBytes += n;
  }

  /**
   * Sets the data bytes held to `n` (a stream that forwards as it goes holds only the event
   * it has not dispatched yet); {@link reserved} bytes are kept.
   */
  set(n: number): void {
    const data = this.held - this.reserved;
    if (this.released || n === data) return;
    if (data === 0) this.s.linkLease(this);
    this.s.heldBytes += n - data;
    this.held = n + this.reserved;
    if (n === 0) this.s.unlinkLease(this);
    if (n < data) this.wakeOthers();
  }

  /**
   * True when this response must wait before reading more: the agent is over its cap, and
   * another response holding data is older (the oldest one reads on; so does one holding no
   * data when none holds any: it would be the oldest, and decoders' charges alone over the
   * cap must not stop every stream).
   */
  get mustWait(): boolean {
    if (this.released || this.s.heldBytes <= this.s.settings.max_buffered_response_bytes) return false;
    const first = this.s.firstLease;
    return first !== this && first !== undefined;
  }

  /**
   * True when decoders charged `n` bytes must wait before they are made: they would take the
   * agent over its cap while another response's decoders are charged. Not the oldest-first
   * rule of {@link mustWait}: every response is the oldest in its turn (an SSE stream leaves
   * the order between events), so that rule would let every one of them charge its decoders
   * over the cap, one after the other (30 lgwin-24 streams: 562 MiB). One response's
   * decoders go over the cap when no other response's are charged (whatever data the agent
   * holds: the bound is the cap + one response's decoders), so decoders larger than the cap
   * are made at all. First come, first served: decoders also wait while a response whose
   * charge began before theirs waits for room (else a large window, 16 MiB, was passed by
   * every smaller one that fitted beside the charged decoders, for as long as they kept
   * coming, until its deadline: a leftover of trial 15 H2's fix, found in its review;
   * test/regressions/decoder-wait-passed-by-smaller-windows.test.ts).
   */
  mustWaitForDecoders(n: number): boolean {
    if (this.released) return false;
    return (this.s.heldBytes + n > this.s.settings.max_buffered_response_bytes && this.s.decoderBytes > this.decoders) || this.earlierDecoderWait();
  }

  /** True when a response whose decoder charge began before this one's waits for room. */
  private earlierDecoderWait(): boolean {
    for (const lease of this.s.blocked) {
      if (lease.waitingDecoders !== undefined && lease.decoderTurn < this.decoderTurn) return true;
    }
    return false;
  }

  /**
   * Charges `n` bytes for the response's decoders before they are made (decode.ts
   * DecoderRoom): at once when they fit ({@link mustWaitForDecoders}), else once room is
   * made (the agent's other responses release data or decoders), holding `waitingBytes`
   * (the body's first chunk, read and not yet decoded) outside the oldest-first order
   * meanwhile, so that a response waiting here is never the oldest the others wait for. The
   * wait counts once in {@link AgentGuard.bufferWaits}; it is shed as {@link ready}'s is.
   * Its time is bounded by the caller's deadline (the exchange's end releases the lease:
   * `over`). Resolves how it ended ({@link DecoderCharge}); nothing is charged unless `charged`.
   */
  async chargeDecoders(n: number, waitingBytes: number, stream?: WatchedBody): Promise<DecoderCharge> {
    this.decoderTurn = ++this.s.decoderTurns;
    try {
      if (this.mustWaitForDecoders(n)) {
        this.reserve(waitingBytes);
        let counted = false;
        do {
          const closed = await this.waitFor(n, stream, counted);
          counted = true;
          if (this.released) return this.shedRetryAfterS === undefined ? 'over' : 'shed';
          if (closed) {
            this.unreserve(waitingBytes);
            return 'aborted';
          }
        } while (this.mustWaitForDecoders(n));
        this.unreserve(waitingBytes, false);
      }
      if (this.released) return this.shedRetryAfterS === undefined ? 'over' : 'shed';
      this.reserve(n);
      this.decoders += n;
      this.s.decoderBytes += n;
      return 'charged';
    } finally {
      this.decoderTurn = Infinity; // the turn ends however the charge does
    }
  }

  /** Gives back `n` of the decoders' charge (at most what is charged): the decoders are gone, or smaller than charged. */
  unchargeDecoders(n: number): void {
    const m = Math.min(n, this.decoders);
    if (this.released || m <= 0) return;
    this.decoders -= m;
    this.s.decoderBytes -= m;
    this.unreserve(m);
  }

  /** Holds `n` bytes outside the oldest-first order ({@link reserved}). */
  private reserve(n: number): void {
    this.held += n;
    this.reserved += n;
    this.s.heldBytes += n;
  }

  /** Gives back `n` {@link reserved} bytes, and wakes who may go on now unless `wake` is false. */
  private unreserve(n: number, wake = true): void {
    if (this.released || n <= 0) return;
    this.held -= n;
    this.reserved -= n;
    this.s.heldBytes -= n;
    if (wake) this.wakeOthers();
  }

  /**
   * Resolves once this response may read on (at once when it need not wait), when it is
   * released or shed, or when `stream` (the seller's body) closes or has closed before its
   * end (the request was aborted: the caller's next read fails). A body that has ENDED, before
   * or during the wait (Node closes an ended stream), still waits: its decoders may hold a
   * bomb's worth of output (found in the bench: a gzip bomb's few KiB arrive whole at once,
   * and the decoded bytes went past the cap unchecked); its exchange's end releases it
   * (exchange.ts `openBufferLease`).
   */
  ready(stream?: WatchedBody): Promise<void> {
    if (!this.mustWait) return Promise.resolve();
    return this.waitFor(undefined, stream, false).then(() => undefined);
  }

  /**
   * True while this waiting response must go on waiting: for data room ({@link mustWait}), or
   * for decoder room ({@link mustWaitForDecoders}) when it waits in {@link chargeDecoders}.
   */
  get blockedNow(): boolean {
    return this.waitingDecoders === undefined ? this.mustWait : this.mustWaitForDecoders(this.waitingDecoders);
  }

  /**
   * Waits in the agent's blocked list (for `decoders` bytes of decoder room, else for data
   * room) until woken, released, shed, or `stream` closes before its end; resolves true in
   * that last case. Counts a wait unless `counted` (a decoder wait woken too early counts once).
   */
  private waitFor(decoders: number | undefined, stream: WatchedBody | undefined, counted: boolean): Promise<boolean> {
    const aborted = (): boolean => stream?.destroyed === true && stream.readableEnded !== true;
    if (aborted()) return Promise.resolve(true);
    // What hosts took since last measured gives its room back first (HostHold).
    if (this.s.firstHold !== undefined) {
      this.s.sweepHolds();
      if (!(decoders === undefined ? this.mustWait : this.mustWaitForDecoders(decoders))) return Promise.resolve(false);
    }
    if (this.breaker?.backingOff === true && this.shedNow()) return Promise.resolve(false);
    if (!counted) this.s.bufferWaits++;
    this.waitingDecoders = decoders;
    return new Promise<boolean>((resolve) => {
      // A close after the body's end (Node destroys an ended stream) is no abort: it waits on.
      const closed = (): void => {
        if (stream?.readableEnded !== true) done();
      };
      const done = (): void => {
        stream?.off('close', closed);
        this.wake = undefined;
        this.waitingDecoders = undefined;
        const i = this.s.blocked.indexOf(this);
        if (i >= 0) this.s.blocked.splice(i, 1);
        resolve(aborted());
      };
      this.wake = done;
      this.s.blocked.push(this);
      if (stream?.readableEnded !== true) stream?.once('close', closed);
    });
  }

  /**
   * Sheds this response (module doc, load shedding): sets {@link shedRetryAfterS}, releases
   * the bytes it holds and ends its wait. False when it may not be shed or is released.
   */
  shedNow(): boolean {
    const breaker = this.breaker;
    if (breaker === undefined || this.released) return false;
    this.shedRetryAfterS = breaker.retryAfterS;
    this.release();
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.s.heldBytes -= this.held;
    this.s.decoderBytes -= this.decoders;
    if (this.held > this.reserved) this.s.unlinkLease(this);
    this.held = this.reserved = this.decoders = 0;
    this.wake?.();
    this.wakeOthers();
  }

  /**
   * Wakes, in arrival order, every waiting response that may now go on (each may then
   * overshoot the cap by the one chunk it reads before it checks again; a decoder wait
   * checks again before it charges).
   */
  private wakeOthers(): void {
    this.s.wakeBlocked();
  }
}
