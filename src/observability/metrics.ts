/**
 * Prometheus metrics (prom-client), one registry per gateway instance: never the global
 * registry, so tests and embedders can build many apps in one process.
 *
 * Label cardinality is bounded by construction: `agent` comes from the config (a refusal's:
 * or one of two fixed values, {@link REFUSAL_AGENT_UNKNOWN} and {@link REFUSAL_AGENT_NONE}),
 * `method` from a fixed list of MCP method names (anything else is `other`), `status_class`
 * from {@link STATUS_CLASSES}, `outcome` and `reason` from
 * the gateway's own catalogs (a result left unlifted: a text bound's three reasons,
 * mcp/types.ts TextBoundReason, and the four limits a lift may lack room under,
 * response/rewrite-room.ts LiftRoomReason),
 * `surface` from a fixed list. Tool names, ids and anything else
 * a host or seller chooses never become a label value.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { TalliedHistogram } from './tallied-histogram.js';
import { configReloadGauges, type ConfigReloadResult } from './config-reload-gauges.js';
import { DROP_REASONS, REASONS, REFUSALS } from '../errors/codes.js';
import { DISCOVERY_TARGETS } from '../mcp/discovery-size.js';
import type { Exchange, Outcome, RpcPeek } from '../exchange.js';

/** Prefix of every gateway metric (the process metrics keep their standard names). */
export const METRIC_PREFIX = 'adcp_gateway_';

/**
 * JSON-RPC methods a host sends to an MCP server (revisions 2025-03-26 to 2026-07-28),
 * kept as `method` label values. Everything else is counted as `other`.
 */
export const METHOD_LABELS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * Discovery surfaces with a size target (AdCP "Managing response size", "Discovery responses
 * stay small"; the names of `DiscoverySurface` in src/mcp/discovery-size.ts); others are `other`.
 */
export const DISCOVERY_SURFACES: ReadonlySet<string> = new Set(Object.keys(DISCOVERY_TARGETS));

/**
 * The `status_class` label of `adcp_gateway_exchanges_total`: the class of the HTTP status the
 * host got, or `none` when it got no response head (it left first, a shutdown cut the exchange
 * first): index 0, then index `status / 100` for 1xx .. 5xx (Fastify sends no status outside
 * 100..599: src/routing/undefined-status.ts). A seller's 401/403/429 is passed through as
 * documented (docs/errors.md), outcome `ok`; this label is what shows it on a dashboard.
 * Reported failure (a hostile operator's trial 45, finding 2: a revoked seller key, every call
 * 401, counted only `outcome="ok"`): test/regressions/seller-4xx-counted-ok-in-metrics.test.ts.
 */
export const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The index in {@link STATUS_CLASSES} of the status the host got (`null`: no response head). */
export function statusClassIndex(hostStatus: number | null): number {
  if (hostStatus === null || hostStatus < 100 || hostStatus > 599) return 0;
  return Math.trunc(hostStatus / 100);
}

/**
 * The `agent` of a refusal (`adcp_gateway_refusals_total`) whose path `/agents/<name>/mcp`
 * names no configured agent, and of one on no agent's path (an ops path, any other path, a
 * request the HTTP parser rejected): values no agent name takes (config/schema.ts
 * AGENT_NAME_PATTERN: a letter or digit first), so the label stays bounded by the config.
 * Reported failure (a hostile operator's trial 45, finding 3: a refusal on agent `a` was
 * counted by reason alone): test/regressions/refusal-not-tied-to-agent-in-metrics.test.ts.
 */
export const REFUSAL_AGENT_UNKNOWN = '_unknown';
export const REFUSAL_AGENT_NONE = '_none';

/** Duration buckets in seconds: 5 ms .. 60 s (longer SSE streams land in +Inf). */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * What the JSON-RPC body of an exchange is: `request` (a method and an id), `notification` (a
 * method, no id), `response` (the host's answer to a server-initiated request: no method),
 * `batch` (a JSON array), `none` (no JSON-RPC body: the standalone GET stream, DELETE). A
 * resumed stream (GET with `Last-Event-ID`) has its original request's kind.
 */
export type RpcKindLabel = 'request' | 'notification' | 'response' | 'batch' | 'none';

/**
 * The exchange line's `rpc_kind` ({@link RpcKindLabel}). `batch`, `response` and `none` are
 * also the exchange's `method` label ({@link methodLabel}), where there is no method to name.
 * Reported failure (a new user's trial: the log said `"method": null` for all three):
 * test/regressions/exchange-line-method-null-three-exchanges.test.ts.
 */
export function rpcKindLabel(rpc: RpcPeek): RpcKindLabel {
  if (rpc.kind === 'none' || rpc.kind === 'batch') return rpc.kind;
  return rpc.method === undefined ? 'response' : rpc.kind;
}

/**
 * The `method` label of an exchange: a known MCP method name; `none` for a request without a
 * JSON-RPC body (the GET stream, DELETE); `batch`; `response` for the host's answer to a
 * server-initiated request (the {@link rpcKindLabel} of those three); `other` for any other
 * method.
 */
export function methodLabel(rpc: RpcPeek): string {
  const method = rpc.kind === 'none' || rpc.kind === 'batch' ? undefined : rpc.method;
  if (method === undefined) return rpcKindLabel(rpc);
  return METHOD_LABELS.has(method) ? method : 'other';
}

/** One agent's agent-guard state (src/admission/agent-guard.ts `AgentGuard.snapshot`). */
export interface GuardSample {
  readonly agent: string;
  /** Response bytes held for the agent's in-flight responses now (what hosts have not taken yet included). */
  readonly heldBytes: number;
  /** Of {@link heldBytes}: bytes written to hosts' responses and not yet taken by their sockets (agent-guard.ts HostHold). */
  readonly hostHeldBytes: number;
  /** Times one of its responses waited for `max_buffered_response_bytes`, since start. */
  readonly bufferWaits: number;
  /** Call kinds (method, or tool) of the agent backing off now. */
  readonly backingOff: number;
}

export interface CreateMetricsOptions {
  /** Reads the number of SSE streams to hosts open right now (the `sse_streams_open` gauge). Default: always 0. */
  openStreams?: () => number;
  /** Reads the number of pipelined requests waiting for their turn right now (the `pipelined_requests_waiting` gauge). Default: always 0. */
  pipelinedWaiting?: () => number;
  /** Reads the agent guard's state, per agent (the `agent_*` metrics). Default: none. */
  guard?: () => Iterable<GuardSample>;
}

export interface GatewayMetrics {
  /** This instance's registry (the default process metrics are registered on it too). */
  readonly registry: Registry;
  /** The exposition's content type (`text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
  /** The text exposition of every metric. */
  render(): Promise<string>;
  /** Counts one finished exchange: a listener for `app.gateway.onExchangeEnd` (`hostStatus`: the status the host got, null for no response head). */
  observeExchange(exchange: Exchange, hostStatus: number | null): void;
  /**
   * Counts one discovery surface over its size target (`surface`: a `DiscoverySurface`
   * name; anything else is counted as `other`).
   */
  incDiscoveryOvershoot(agent: string, surface: string): void;
  /**
   * Counts one config reload attempt, and sets the last-reload gauges (config-reload-gauges.ts:
   * 0 after `error`, else 1 and the time; hostile trial 53, F8). `unchanged`: the file and its
   * `${VAR}` values were the running config's, nothing applied (a hostile trial 21, L1: it counted `ok`).
   */
  incConfigReload(result: ConfigReloadResult): void;
  /**
   * Counts one host request refused before any seller was contacted (`reason`: docs/errors.md
   * refusals; `agent`: a configured agent, {@link REFUSAL_AGENT_UNKNOWN} or {@link REFUSAL_AGENT_NONE}).
   */
  incRefusal(reason: string, agent: string): void;
  /**
   * Counts one connection closed by `request_timeout_ms` having sent no byte (a browser's
   * speculative preconnect): no request, so no refusal, only a debug line (app.ts); the count
   * shows a flood of them at any log level.
   */
  incUnusedConnection(): void;
  /** Counts `count` (default 1) SSE events dropped from a stream that answers no request (standalone GET, long-lived), or from any stream for data naming no kind of message, by reason: a breach's, or a DROP_REASONS entry (`get_stream_response`, `message_without_kind`); a stream adds its drops once per chunk (response/sse-drop-metric.ts). */
  incSseEventDropped(agent: string, reason: string, count?: number): void;
  /** Counts one seller SSE event id that could not be turned into a resume token (response/sse-id-token-log.ts). */
  incSseEventIdNotTokenized(agent: string): void;
  /** Counts one exchange whose seller answered a POST holding a request 202 Accepted with a body, sent to the host as 200 (response/accepted-answer.ts). */
  incSeller202Answer(agent: string): void;
  /**
   * Drops every series whose `agent` is not in `kept` (the agents of the config a reload
   * applied), and the counts not yet added for them: a retired agent name no longer costs
   * ~23 series (~2 KB of exposition) for the process's life (hostile trial 34, F2). The caller
   * keeps them from coming back: app.ts counts an exchange that ends after its agent was
   * removed nowhere, and reads the guard's gauges for configured agents only.
   */
  forgetAgents(kept: ReadonlySet<string>): Promise<void>;
}

/** A bounded `reason` label for a local error, or undefined when the exchange is no limit breach. */
function breachReason(outcome: Outcome | undefined, reason: string | undefined): string | undefined {
  if (outcome !== 'local_error' || reason === undefined) return undefined;
  return Object.hasOwn(REASONS, reason) ? reason : undefined;
}

/** `value` when it names an entry of `catalog` (docs/errors.md), else `other`. */
function catalogLabel(catalog: object, value: string): string {
  return Object.hasOwn(catalog, value) ? value : 'other';
}

export function createMetrics(opts: CreateMetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const openStreams = opts.openStreams ?? (() => 0);
  const pipelinedWaiting = opts.pipelinedWaiting ?? (() => 0);

  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[], collect?: () => void): Counter<L> =>
    new Counter({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers, ...(collect ? { collect } : {}) });
  // The per-exchange counters are tallied in plain numbers (ExchangeTally) and added to
  // prom-client when any of them is read (`collect`, which prom-client calls before reading).
  const tallied = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> => counter(name, help, labelNames, () => tally.flush());

  const exchanges = tallied(
    'exchanges_total',
    "Exchanges (host request -> seller -> host response) by agent, MCP method, outcome and the class of the host's HTTP status (none: no response head).",
    ['agent', 'method', 'outcome', 'status_class'],
  );
  const sellerBytes = tallied('seller_bytes_total', 'Body bytes read from sellers: raw (as on the wire) and decoded (after content decoding).', ['agent', 'kind']);
  const hostBytes = tallied('host_bytes_total', 'Body bytes written to hosts.', ['agent']);
  const dedupeSaved = tallied('dedupe_saved_bytes_total', 'Bytes removed from tool results by dedupe and normalization.', ['agent']);
  const breaches = tallied('limit_breaches_total', 'Exchanges answered with a minted AdCP error, by details.reason (docs/errors.md).', ['agent', 'reason']);
  const textsNotLifted = tallied(
    'texts_not_lifted_total',
    'Tool results left unlifted because the first text that may hold their JSON object was over a bound (text_bytes, json_depth, json_nodes), or holds a member named __proto__ (proto_key) or a lone surrogate (lone_surrogate), or, where the lift would go out re-serialized (a result with a key written with an escape), the text or the rest of the message repeats a key (repeated_key) or holds a negative zero (negative_zero), or the text to lift, or the message outside its strings, holds a number a double cannot carry (lossy_number), or because the lifted answer would not fit its limit (max_response_bytes, max_sse_event_bytes, max_json_depth, max_json_nodes); one per result.',
    ['agent', 'reason'],
  );
  const duration = new TalliedHistogram({
    name: `${METRIC_PREFIX}exchange_duration_seconds`,
    help: "Exchange duration, from the host's request to the end of the host's response.",
    labelNames: ['agent', 'method'],
    buckets: DURATION_BUCKETS_SECONDS,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}sse_streams_open`,
    help: 'SSE streams to hosts open right now.',
    registers,
    collect() {
      this.set(openStreams());
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}pipelined_requests_waiting`,
    help: "Requests pipelined on hosts' connections (HTTP/1.1) waiting for the answers before them to be written, not yet sent to a seller, right now.",
    registers,
    collect() {
      this.set(pipelinedWaiting());
    },
  });
  const guard = opts.guard ?? (() => []);
  /** A per-agent gauge read from the guard's state when /metrics is scraped. */
  const guardGauge = (name: string, help: string, value: (g: GuardSample) => number): void =>
    void new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: ['agent'] as const,
      registers,
      collect() {
        for (const g of guard()) this.set({ agent: g.agent }, value(g));
      },
    });
  guardGauge(
    'agent_buffered_response_bytes',
    "Response bytes held right now for an agent's in-flight responses, answers written to hosts and not yet taken by their sockets included (max_buffered_response_bytes).",
    (g) => g.heldBytes,
  );
  guardGauge(
    'agent_host_held_response_bytes',
    "Of agent_buffered_response_bytes: an agent's answers written to hosts' connections and not yet taken by their sockets, right now.",
    (g) => g.hostHeldBytes,
  );
  guardGauge(
    'agent_calls_backing_off',
    'Kinds of call (method, or tool) of an agent backing off right now after bound breaches (backoff_after_breaches).',
    (g) => g.backingOff,
  );
  const bufferWaitsSeen = new Map<string, number>();
  new Counter({
    name: `${METRIC_PREFIX}agent_buffer_waits_total`,
    help: "Times one of an agent's responses waited before reading on, its agent being over max_buffered_response_bytes.",
    labelNames: ['agent'] as const,
    registers,
    collect() {
      for (const g of guard()) {
        this.inc({ agent: g.agent }, g.bufferWaits - (bufferWaitsSeen.get(g.agent) ?? 0));
        bufferWaitsSeen.set(g.agent, g.bufferWaits);
      }
    },
  });
  const resumes = tallied('resumes_total', 'SSE streams resumed with a verified Last-Event-ID.', ['agent']);
  const overshoots = counter('discovery_size_overshoot_total', 'Discovery responses over their size target, by surface.', ['agent', 'surface']);
  const reloads = counter('config_reloads_total', 'Config reload attempts by result.', ['result']);
  // Set as at a start from a valid file: the metrics are made with the app, from its config.
  const lastReload = configReloadGauges(METRIC_PREFIX, registers);
  const refusals = counter(
    'refusals_total',
    'Host requests refused before any seller was contacted, by agent (_unknown: a path naming no configured agent; _none: no agent path) and reason (docs/errors.md).',
    ['agent', 'reason'],
  );
  const unusedConnections = counter(
    'unused_connections_total',
    "Connections closed by request_timeout_ms having sent no byte (a browser's speculative preconnect): answered 408, no request refused.",
    [],
  );
  const dropped = counter(
    'sse_events_dropped_total',
    'SSE events dropped from streams that answer no request (standalone GET, long-lived) for breaking a bound, or a response on the standalone GET stream, by reason.',
    ['agent', 'reason'],
  );
  const idsNotTokenized = counter(
    'sse_event_ids_not_tokenized_total',
    'Seller SSE event ids that could not be turned into resume tokens (not sendable back in Last-Event-ID, or a token over 4096 characters): the host got the event without an id, or no id-only block.',
    ['agent'],
  );
  const seller202Answers = counter(
    'seller_202_answers_total',
    "Answers to a POST holding a request that the seller sent 202 Accepted with a body (JSON or SSE; MCP keeps 202 for a POST without a request, and the MCP SDK client drops its body), sent to the host as 200: counted when the gateway writes the 200 head (a JSON answer as it is sent on; an SSE answer with its body's first byte, or 1,000 ms after its stage starts without one, or with the error for its id if it breaks first, whether or not a response follows; an empty 202, no byte of body (an SSE one ended within those 1,000 ms), and a JSON answer the gateway answers with its own error instead are not counted).",
    ['agent'],
  );
  reloads.inc({ result: 'ok' }, 0);
  reloads.inc({ result: 'error' }, 0);
  reloads.inc({ result: 'unchanged' }, 0);
  const tally = new ExchangeTally({ exchanges, sellerBytes, hostBytes, dedupeSaved, breaches, textsNotLifted, resumes });

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observeExchange(exchange, hostStatus) {
      const agent = exchange.agent.name;
      const method = methodLabel(exchange.rpc);
      tally.add(exchange, agent, method, statusClassIndex(hostStatus));
      duration.observe(agent, method, Number(process.hrtime.bigint() - exchange.startedAt) / 1e9);
    },
    incDiscoveryOvershoot(agent, surface) {
      overshoots.inc({ agent, surface: DISCOVERY_SURFACES.has(surface) ? surface : 'other' });
    },
    incConfigReload(result) {
      reloads.inc({ result });
      lastReload.record(result);
    },
    incRefusal(reason, agent) {
      refusals.inc({ agent, reason: catalogLabel(REFUSALS, reason) });
    },
    incUnusedConnection() {
      unusedConnections.inc();
    },
    incSseEventDropped(agent, reason, count = 1) {
      dropped.inc({ agent, reason: Object.hasOwn(DROP_REASONS, reason) ? reason : catalogLabel(REASONS, reason) }, count);
    },
    incSseEventIdNotTokenized(agent) {
      idsNotTokenized.inc({ agent });
    },
    incSeller202Answer(agent) {
      seller202Answers.inc({ agent });
    },
    async forgetAgents(kept) {
      tally.forget(kept);
      duration.forget(kept);
      for (const agent of bufferWaitsSeen.keys()) if (!kept.has(agent)) bufferWaitsSeen.delete(agent);
      for (const metric of registry.getMetricsAsArray()) {
        if (!(metric instanceof Counter || metric instanceof Gauge)) continue; // the duration histogram: above
        if (!(metric as unknown as { labelNames?: readonly string[] }).labelNames?.includes('agent')) continue;
        for (const { labels } of (await metric.get()).values) {
          const agent = labels.agent;
          if (typeof agent === 'string' && !kept.has(agent) && agent !== REFUSAL_AGENT_UNKNOWN && agent !== REFUSAL_AGENT_NONE) metric.remove(labels);
        }
      }
    },
  };
}

/** One agent's counts since the last flush. */
class AgentCounts {
  /** Exchanges by `method` then `outcome` label, then by `status_class` ({@link STATUS_CLASSES} index). */
  readonly exchanges = new Map<string, Map<string, number[]>>();
  /** Breaches by `reason` label. */
  readonly breaches = new Map<string, number>();
  /** Results not lifted for a bound, what the text holds (a `__proto__` member, a lone surrogate, ...) or for room, by `reason` label (exchange.ts `textNotLifted`). */
  readonly textsNotLifted = new Map<string, number>();
  raw = 0;
  decoded = 0;
  toHost = 0;
  saved = 0;
  resumes = 0;
}

interface TalliedCounters {
  exchanges: Counter<'agent' | 'method' | 'outcome' | 'status_class'>;
  sellerBytes: Counter<'agent' | 'kind'>;
  hostBytes: Counter<'agent'>;
  dedupeSaved: Counter<'agent'>;
  breaches: Counter<'agent' | 'reason'>;
  textsNotLifted: Counter<'agent' | 'reason'>;
  resumes: Counter<'agent'>;
}

/**
 * The per-exchange counters, counted in plain numbers and added to prom-client's counters
 * when they are read (`flush`, from each one's `collect`): the same series and values at
 * every read as one `inc` per exchange and counter, without hashing a label set for each
 * (issue 5, 1 KiB results: five label-hashing `inc` calls per exchange were ~4 µs of its
 * fixed cost). A series appears once its first increment is flushed, as before: an exchange
 * series on its first exchange, a byte series on its first non-zero count.
 */
class ExchangeTally {
  private readonly agents = new Map<string, AgentCounts>();

  constructor(private readonly counters: TalliedCounters) {}

  add(exchange: Exchange, agent: string, method: string, statusClass: number): void {
    let counts = this.agents.get(agent);
    if (counts === undefined) this.agents.set(agent, (counts = new AgentCounts()));
    const outcome = exchange.outcome ?? 'unknown';
    let byOutcome = counts.exchanges.get(method);
    if (byOutcome === undefined) counts.exchanges.set(method, (byOutcome = new Map()));
    let byClass = byOutcome.get(outcome);
    if (byClass === undefined) byOutcome.set(outcome, (byClass = new Array<number>(STATUS_CLASSES.length).fill(0)));
    byClass[statusClass]! += 1;
    counts.raw += exchange.bytesFromSeller;
    counts.decoded += exchange.bytesDecoded;
    counts.toHost += exchange.bytesToHost;
    // A counter only grows: an exchange whose lift made its answer longer (negative bytes_saved) adds 0 (a hostile trial 22, F6).
    if (exchange.bytesSaved > 0) counts.saved += exchange.bytesSaved;
    const reason = breachReason(exchange.outcome, exchange.reason);
    if (reason !== undefined) counts.breaches.set(reason, (counts.breaches.get(reason) ?? 0) + 1);
    // Rare (a text over a bound, nothing lifted; a lift without room): one property read on every other exchange.
    const notLifted = exchange.textNotLifted;
    if (notLifted !== undefined) counts.textsNotLifted.set(notLifted, (counts.textsNotLifted.get(notLifted) ?? 0) + 1);
    if (exchange.stream.resumeFrom !== undefined) counts.resumes++;
  }

  /** Drops the counts not yet added of every agent not in `kept`. */
  forget(kept: ReadonlySet<string>): void {
    for (const agent of this.agents.keys()) if (!kept.has(agent)) this.agents.delete(agent);
  }

  /** Adds every count to its prom-client counter and zeroes it. */
  flush(): void {
    const c = this.counters;
    for (const [agent, counts] of this.agents) {
      for (const [method, byOutcome] of counts.exchanges) {
        for (const [outcome, byClass] of byOutcome) {
          for (let i = 0; i < byClass.length; i++) if (byClass[i]! > 0) c.exchanges.inc({ agent, method, outcome, status_class: STATUS_CLASSES[i]! }, byClass[i]!);
        }
        byOutcome.clear();
      }
      for (const [reason, n] of counts.breaches) if (n > 0) c.breaches.inc({ agent, reason }, n);
      counts.breaches.clear();
      for (const [reason, n] of counts.textsNotLifted) if (n > 0) c.textsNotLifted.inc({ agent, reason }, n);
      counts.textsNotLifted.clear();
      if (counts.raw > 0) c.sellerBytes.inc({ agent, kind: 'raw' }, counts.raw);
      if (counts.decoded > 0) c.sellerBytes.inc({ agent, kind: 'decoded' }, counts.decoded);
      if (counts.toHost > 0) c.hostBytes.inc({ agent }, counts.toHost);
      if (counts.saved > 0) c.dedupeSaved.inc({ agent }, counts.saved);
      if (counts.resumes > 0) c.resumes.inc({ agent }, counts.resumes);
      counts.raw = counts.decoded = counts.toHost = counts.saved = counts.resumes = 0;
    }
  }
}
