/**
 * Per-call limit resolution (hot path) and the `X-Max-Response-Bytes` header parser.
 *
 * Resolution order (ARCHITECTURE §2): call, else tool, else agent, else defaults, else
 * built-in. Everything but the call level is resolved once by the loader and attached to
 * each `AgentConfig` under a private symbol; `resolveCallLimits` only picks the right
 * precomputed `Limits` and, when the call sets a response limit, makes one new object.
 */
import type { AgentConfig, GatewayConfig, Limits } from './types.js';

/**
 * The request body limit of an app built from `config` (what `buildApp` gives Fastify): the
 * largest `max_request_bytes` of the defaults and the agents. Each agent's own bound is
 * checked per request.
 */
export function requestBodyLimit(config: GatewayConfig): number {
  return Math.max(config.defaults.max_request_bytes, ...[...config.agents.values()].map((a) => a.max_request_bytes));
}

/**
 * Limits for one level (the agent, or one of its tools) resolved down to the built-ins, and
 * the explicit `max_sse_event_bytes` in force at that level (undefined: the SSE event limit
 * follows the response limit), and whether this level set it itself (not inherited from the
 * levels above: `--check-config` notes only that one, config/table.ts).
 * @internal
 */
export interface ResolvedLevel {
  readonly limits: Limits;
  readonly sseEventExplicit: number | undefined;
  readonly sseEventOwn: boolean;
}

/** @internal What the loader attaches to an `AgentConfig` (non-enumerable, frozen). */
export interface AgentResolution {
  readonly agent: ResolvedLevel;
  readonly tools: ReadonlyMap<string, ResolvedLevel>;
}

/** @internal The private key under which the loader stores an agent's `AgentResolution`. */
export const RESOLUTION: unique symbol = Symbol('adcp-buyer-gateway.config.resolution');

type WithResolution = AgentConfig & { readonly [RESOLUTION]?: AgentResolution };

/** `max_sse_event_bytes` for a response limit: the explicit value capped by it, or the limit itself. */
export function sseEventLimit(explicit: number | undefined, responseBytes: number): number {
  return explicit === undefined ? responseBytes : Math.min(explicit, responseBytes);
}

/**
 * Resolves one level of overrides over resolved `base` limits (frozen result).
 * @internal Used by the loader and by the fallback below.
 */
export function resolveLevel(base: ResolvedLevel, overrides: Partial<Limits> | undefined): ResolvedLevel {
  const o = overrides ?? {};
  const max_response_bytes = o.max_response_bytes ?? base.limits.max_response_bytes;
  const sseEventExplicit = o.max_sse_event_bytes ?? base.sseEventExplicit;
  const limits: Limits = Object.freeze({
    max_response_bytes,
    max_sse_event_bytes: sseEventLimit(sseEventExplicit, max_response_bytes),
    max_json_depth: o.max_json_depth ?? base.limits.max_json_depth,
    max_json_nodes: o.max_json_nodes ?? base.limits.max_json_nodes,
    response_deadline_ms: o.response_deadline_ms ?? base.limits.response_deadline_ms,
    sse_idle_timeout_ms: o.sse_idle_timeout_ms ?? base.limits.sse_idle_timeout_ms,
    sse_deadline_ms: o.sse_deadline_ms ?? base.limits.sse_deadline_ms,
    dedupe_text: o.dedupe_text ?? base.limits.dedupe_text,
  });
  return Object.freeze({ limits, sseEventExplicit, sseEventOwn: o.max_sse_event_bytes !== undefined });
}

/** Resolutions rebuilt for `AgentConfig` objects the loader did not make (tests, hand-built configs). */
const fallbackResolutions = new WeakMap<AgentConfig, AgentResolution>();

function resolutionOf(agent: AgentConfig): AgentResolution {
  const attached = (agent as WithResolution)[RESOLUTION];
  if (attached !== undefined) return attached;
  let made = fallbackResolutions.get(agent);
  if (made === undefined) {
    // Without the loader's record we cannot know whether the agent's SSE event limit was set
    // explicitly; treat it as "follows the response limit" when the two are equal.
    const explicit =
      agent.limits.max_sse_event_bytes === agent.limits.max_response_bytes ? undefined : agent.limits.max_sse_event_bytes;
    const level: ResolvedLevel = { limits: agent.limits, sseEventExplicit: explicit, sseEventOwn: explicit !== undefined };
    const tools = new Map<string, ResolvedLevel>();
    for (const name of Object.keys(agent.tools)) tools.set(name, resolveLevel(level, agent.tools[name]));
    made = { agent: level, tools };
    fallbackResolutions.set(agent, made);
  }
  return made;
}

/**
 * The `max_sse_event_bytes` a level of `agent` sets (the tool's, when `toolName` has a `tools:`
 * entry, else the agent's; either inherited from the levels above), or undefined when none
 * sets it. The limit in force is this capped by the response limit ({@link sseEventLimit}):
 * `--check-config` shows both when the cap applies (config/table.ts).
 */
export function configuredSseEventBytes(agent: AgentConfig, toolName: string | undefined): number | undefined {
  const resolution = resolutionOf(agent);
  return ((toolName === undefined ? undefined : resolution.tools.get(toolName)) ?? resolution.agent).sseEventExplicit;
}

/**
 * The `max_sse_event_bytes` the row itself sets (the tool's own, when `toolName` has a `tools:`
 * entry, else the agent's own), or undefined when that row inherits it or none sets it.
 * `--check-config` notes an event limit above the row's response limit only then (config/table.ts):
 * a `defaults` value above a tool's lower response limit is no mistake of the tool's (hostile
 * trial 46, item 3: test/regressions/check-config-notes-inherited-sse-event-limit.test.ts).
 */
export function ownSseEventBytes(agent: AgentConfig, toolName: string | undefined): number | undefined {
  const resolution = resolutionOf(agent);
  const level = (toolName === undefined ? undefined : resolution.tools.get(toolName)) ?? resolution.agent;
  return level.sseEventOwn ? level.sseEventExplicit : undefined;
}

/** @internal What the loader attaches to a config's `defaults` (non-enumerable) under {@link RESOLUTION}: the defaults' level. */
type DefaultsWithResolution = GatewayConfig['defaults'] & { readonly [RESOLUTION]?: ResolvedLevel };

/**
 * The `max_sse_event_bytes` that `defaults` itself sets, or undefined when it sets none (or the
 * config was not made by the loader). `--check-config` notes it once when it is above the
 * defaults' own response limit (config/table.ts): the rows that inherit it are not noted, so
 * without this the clamp at the defaults level went unsaid (review 31, finding 5:
 * test/regressions/check-config-notes-inherited-sse-event-limit.test.ts).
 */
export function defaultsOwnSseEventBytes(config: GatewayConfig): number | undefined {
  const level = (config.defaults as DefaultsWithResolution)[RESOLUTION];
  return level?.sseEventOwn === true ? level.sseEventExplicit : undefined;
}

/**
 * The limits in force for one call.
 *
 * @param agent the agent the request is routed to (from the loaded config).
 * @param toolName the tool of a `tools/call` (or undefined for any other method). A name with
 *   no `tools:` entry gets the agent's limits.
 * @param callMaxResponseBytes the request's `X-Max-Response-Bytes`, already parsed by
 *   `parseMaxResponseBytesHeader` (a positive integer, bytes), or undefined when absent; or,
 *   with `source` `token`, the response limit a resumed stream's token carries (bytes).
 * @param source where `callMaxResponseBytes` came from ({@link CallLimitSource}; default
 *   `header`). From a `token` it is the response limit as is: neither the level's value nor
 *   `max_call_response_bytes` in force caps it.
 * @returns frozen `Limits`:
 *   - base: the tool's overrides over the agent's limits (which include `defaults` and built-ins);
 *   - `max_response_bytes`: the call value when it is at most the base value (a call may
 *     always lower it); a larger call value is honoured up to the agent's
 *     `max_call_response_bytes` (default: the base value, so by default a call can only
 *     lower it) and clamped to that ceiling;
 *   - `max_sse_event_bytes`: when no level set it, equal to the resulting response limit;
 *     when a level set it, min(that value, the resulting response limit).
 *   Without a call value (or when it changes nothing) the precomputed object is returned
 *   (no allocation); otherwise one new object. Never throws.
 */
export function resolveCallLimits(agent: AgentConfig, toolName: string | undefined, callMaxResponseBytes: number | undefined, source: CallLimitSource = 'header'): Limits {
  const resolution = resolutionOf(agent);
  const level = (toolName === undefined ? undefined : resolution.tools.get(toolName)) ?? resolution.agent;
  return withCallLimit(agent, level, callMaxResponseBytes, source);
}

/**
 * Where a call's response limit comes from:
 * - `header`: the host's `X-Max-Response-Bytes` on the request, honoured as described at
 *   {@link resolveCallLimits} (a call may lower its limit; raise it only up to the agent's
 *   `max_call_response_bytes`);
 * - `token`: the resume token of the stream a GET with `Last-Event-ID` resumes (routing/handler.ts):
 *   the limit that stream got when it started, which bounds it across its resumes, taken as
 *   is. A reload between the stream's start and its resume that lowers the level's
 *   `max_response_bytes` (or `max_call_response_bytes`) does not apply to it, as documented
 *   (docs/configuration.md, "Resolution order" and "Reload"); the level's other limits are
 *   those in force at the resume, an event limit the level sets capped by the token's limit.
 *   Reported failure (hostile trial 24, F2): the token's limit was clamped as a header's, and
 *   a stream started at 4 MiB on agent `rs2` was resumed under the 20,000 bytes a reload had
 *   set, `sse_cumulative` "in total"
 *   (test/regressions/resume-limit-lowered-by-reload.test.ts).
 */
export type CallLimitSource = 'header' | 'token';

/**
 * The limits in force for a JSON-RPC batch (MCP 2025-03-26): limit by limit, the strictest of
 * the levels its requests would each get if sent alone, then the call's
 * `X-Max-Response-Bytes` applied as for a single call ({@link resolveCallLimits}). Only
 * requests (a `method` and an `id`) take part: a notification or a host's response inside
 * the batch gets no answer from the seller, so nothing of the batch's answer is bounded for
 * it (reported failure: a notification brought in the agent's level and tightened the limits
 * of the batch's tool calls, test/regressions/batch-notification-tightens-tool-limits.test.ts).
 *
 * Why the strictest: a batch has one answer (a JSON array, or one SSE stream), bounded as one
 * message, and the gateway mints one error for all of it (the same breach for each request,
 * each answered as it would be alone: errors/local-reply.ts), so one number per limit
 * applies to all of it. Only the smallest
 * keeps each part within its own element's limit: the answer to a `tools/call` of a tool
 * with `max_response_bytes: 1048576` can be no larger inside a batch than alone, so wrapping
 * a call in a batch never loosens a limit.
 * Reported failure (a reviewer: a batch escaped its tools' limits: a batch got its agent's
 * limits whatever tools it called; test/regressions/batch-escapes-tool-limits.test.ts).
 *
 * @param agent the agent the batch is routed to.
 * @param toolNames per request (RpcPeek.batchToolNames): the tool of a `tools/call`, undefined
 *   for any other request (the agent's level). A name with no `tools:` entry is the agent's
 *   level. Undefined or empty (a batch without requests): the agent's level.
 * @param callMaxResponseBytes as for {@link resolveCallLimits} (bytes, or undefined).
 * @param source as for {@link resolveCallLimits}.
 * @returns frozen `Limits`: `max_response_bytes`, `max_json_depth`, `max_json_nodes`,
 *   `response_deadline_ms`, `sse_idle_timeout_ms` and `sse_deadline_ms` the minimum over the
 *   levels; `max_sse_event_bytes` the smallest explicit event limit of any level, capped by the
 *   resulting response limit (so the minimum of the levels' event limits without a call value);
 *   `dedupe_text` `off` when any level has it off (a batch is never rewritten anyway:
 *   response/rewrite.ts). The call value then applies to that response limit, its ceiling the
 *   agent's `max_call_response_bytes`. One level (every request the agent's, or one tool's):
 *   that level's precomputed object, as for a single call. Never throws.
 */
export function resolveBatchLimits(
  agent: AgentConfig,
  toolNames: readonly (string | undefined)[] | undefined,
  callMaxResponseBytes: number | undefined,
  source: CallLimitSource = 'header',
): Limits {
  const resolution = resolutionOf(agent);
  let first: ResolvedLevel | undefined;
  let more: Set<ResolvedLevel> | undefined;
  for (const name of toolNames ?? []) {
    const level = (name === undefined ? undefined : resolution.tools.get(name)) ?? resolution.agent;
    if (first === undefined) first = level;
    else if (level !== first) (more ??= new Set()).add(level);
  }
  const level = first === undefined ? resolution.agent : more === undefined ? first : strictestLevel([first, ...more]);
  return withCallLimit(agent, level, callMaxResponseBytes, source);
}

/** Limit by limit, the strictest of `levels` (at least two): see {@link resolveBatchLimits}. */
function strictestLevel(levels: readonly ResolvedLevel[]): ResolvedLevel {
  const min = (pick: (l: Limits) => number): number => Math.min(...levels.map((l) => pick(l.limits)));
  const explicit = levels.map((l) => l.sseEventExplicit).filter((e): e is number => e !== undefined);
  const sseEventExplicit = explicit.length === 0 ? undefined : Math.min(...explicit);
  const max_response_bytes = min((l) => l.max_response_bytes);
  const limits: Limits = Object.freeze({
    max_response_bytes,
    max_sse_event_bytes: sseEventLimit(sseEventExplicit, max_response_bytes),
    max_json_depth: min((l) => l.max_json_depth),
    max_json_nodes: min((l) => l.max_json_nodes),
    response_deadline_ms: min((l) => l.response_deadline_ms),
    sse_idle_timeout_ms: min((l) => l.sse_idle_timeout_ms),
    sse_deadline_ms: min((l) => l.sse_deadline_ms),
    dedupe_text: levels.some((l) => l.limits.dedupe_text === 'off') ? 'off' : 'summary',
  });
  // A batch's strictest level is no row of the config (nothing notes it).
  return Object.freeze({ limits, sseEventExplicit, sseEventOwn: false });
}

/** `level`'s limits with the call's response limit applied (see {@link resolveCallLimits}). */
function withCallLimit(agent: AgentConfig, level: ResolvedLevel, callMaxResponseBytes: number | undefined, source: CallLimitSource): Limits {
  const base = level.limits;
  if (callMaxResponseBytes === undefined) return base;
  const resolved = base.max_response_bytes;
  let bytes: number;
  if (source === 'token' || callMaxResponseBytes <= resolved) {
    bytes = callMaxResponseBytes;
  } else {
    const ceiling = agent.max_call_response_bytes;
    bytes = ceiling === undefined || ceiling <= resolved ? resolved : Math.min(callMaxResponseBytes, ceiling);
  }
  if (bytes === resolved) return base;
  return Object.freeze({
    max_response_bytes: bytes,
    max_sse_event_bytes: sseEventLimit(level.sseEventExplicit, bytes),
    max_json_depth: base.max_json_depth,
    max_json_nodes: base.max_json_nodes,
    response_deadline_ms: base.response_deadline_ms,
    sse_idle_timeout_ms: base.sse_idle_timeout_ms,
    sse_deadline_ms: base.sse_deadline_ms,
    dedupe_text: base.dedupe_text,
  });
}

/** Decimal digits only: no sign, no spaces, no exponent, no fraction. */
const DECIMAL = /^[0-9]+$/;
/** Digits beyond which a value is certainly above any ceiling (1 GiB) and above 2^53: treat as "huge". */
const MAX_DIGITS = 15;

/** `parseMaxResponseBytesHeader`'s message for a repeated header. */
const SENT_TWICE = 'X-Max-Response-Bytes must be sent at most once';

/** Result of `parseMaxResponseBytesHeader`. */
export type MaxResponseBytesHeader = { ok: true; value: number | undefined } | { ok: false; message: string };

/**
 * Parses the host's `X-Max-Response-Bytes` request header (the per-call response limit, bytes).
 *
 * @param value the header as Node gives it (`req.headers['x-max-response-bytes']`).
 * @returns
 *   - absent (undefined, or an empty array): `{ ok: true, value: undefined }`;
 *   - one decimal integer >= 1 (digits only: no sign, spaces, fraction or exponent; leading
 *     zeros allowed): `{ ok: true, value }`. Values above 2^53 (more than 15 digits) become
 *     `Number.MAX_SAFE_INTEGER`: `resolveCallLimits` clamps them to the agent's ceiling anyway;
 *   - a repeated header: `{ ok: false, message: 'X-Max-Response-Bytes must be sent at most
 *     once' }`. Node joins repeated field lines into one value (`"5, 5"`), so any value holding
 *     a comma counts (a list, or lines a proxy in front joined: RFC 9110 §5.3), as an array of
 *     2+ does. Before, the join got the message below (review 36, F6:
 *     test/regressions/x-max-response-bytes-sent-twice-said-not-an-integer.test.ts);
 *   - anything else: `{ ok: false, message: 'X-Max-Response-Bytes must be a single decimal
 *     integer >= 1 (bytes)' }`. Each message is a sentence for a 400 reply. Never throws.
 */
export function parseMaxResponseBytesHeader(value: string | string[] | undefined): MaxResponseBytesHeader {
  if (value === undefined) return { ok: true, value: undefined };
  let single: string;
  if (Array.isArray(value)) {
    if (value.length === 0) return { ok: true, value: undefined };
    if (value.length > 1) return { ok: false, message: SENT_TWICE };
    single = value[0] as string;
  } else {
    single = value;
  }
  if (single.includes(',')) return { ok: false, message: SENT_TWICE };
  if (!DECIMAL.test(single)) {
    return { ok: false, message: 'X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)' };
  }
  const digits = single.replace(/^0+/, '');
  if (digits === '') return { ok: false, message: 'X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)' };
  if (digits.length > MAX_DIGITS) return { ok: true, value: Number.MAX_SAFE_INTEGER };
  return { ok: true, value: Number(digits) };
}
