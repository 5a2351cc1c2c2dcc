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
 * follows the response limit).
 * @internal
 */
export interface ResolvedLevel {
  readonly limits: Limits;
  readonly sseEventExplicit: number | undefined;
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
  return Object.freeze({ limits, sseEventExplicit });
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
    const level: ResolvedLevel = { limits: agent.limits, sseEventExplicit: explicit };
    const tools = new Map<string, ResolvedLevel>();
    for (const name of Object.keys(agent.tools)) tools.set(name, resolveLevel(level, agent.tools[name]));
    made = { agent: level, tools };
    fallbackResolutions.set(agent, made);
  }
  return made;
}

/**
 * The limits in force for one call.
 *
 * @param agent the agent the request is routed to (from the loaded config).
 * @param toolName the tool of a `tools/call` (or undefined for any other method). A name with
 *   no `tools:` entry gets the agent's limits.
 * @param callMaxResponseBytes the request's `X-Max-Response-Bytes`, already parsed by
 *   `parseMaxResponseBytesHeader` (a positive integer, bytes), or undefined when absent.
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
export function resolveCallLimits(agent: AgentConfig, toolName: string | undefined, callMaxResponseBytes: number | undefined): Limits {
  const resolution = resolutionOf(agent);
  const level = (toolName === undefined ? undefined : resolution.tools.get(toolName)) ?? resolution.agent;
  const base = level.limits;
  if (callMaxResponseBytes === undefined) return base;
  const resolved = base.max_response_bytes;
  let bytes: number;
  if (callMaxResponseBytes <= resolved) {
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
 *   - anything else, including a repeated header (an array of 2+, or Node's `"a, b"` join):
 *     `{ ok: false, message }`, a sentence for a 400 reply. Never throws.
 */
export function parseMaxResponseBytesHeader(value: string | string[] | undefined): MaxResponseBytesHeader {
  if (value === undefined) return { ok: true, value: undefined };
  let single: string;
  if (Array.isArray(value)) {
    if (value.length === 0) return { ok: true, value: undefined };
    if (value.length > 1) return { ok: false, message: 'X-Max-Response-Bytes must be sent at most once' };
    single = value[0] as string;
  } else {
    single = value;
  }
  if (!DECIMAL.test(single)) {
    return { ok: false, message: 'X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)' };
  }
  const digits = single.replace(/^0+/, '');
  if (digits === '') return { ok: false, message: 'X-Max-Response-Bytes must be a single decimal integer >= 1 (bytes)' };
  if (digits.length > MAX_DIGITS) return { ok: true, value: Number.MAX_SAFE_INTEGER };
  return { ok: true, value: Number(digits) };
}
