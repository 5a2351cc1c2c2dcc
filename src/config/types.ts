/**
 * The resolved, frozen configuration the gateway runs on. Produced once by the loader from
 * the YAML file (see `schema.ts` for the file's shape, which is the single source of truth
 * for keys and defaults); consumed by routing, the request stage and the response pipeline.
 *
 * Units are in the names: `_bytes` are bytes, `_ms` are milliseconds.
 */

import type { GuardSettings } from '../admission/agent-guard.js';

/** How duplicated JSON text in tool results is handled (ARCHITECTURE §5). */
export type DedupeTextMode = 'summary' | 'off';

/** The limits in force for one exchange. Resolved call -> tool -> agent -> defaults -> built-in. */
export interface Limits {
  /** Whole serialized MCP message (JSON body, or the cumulative bytes of one request's SSE stream, what its resume tokens add included). */
  readonly max_response_bytes: number;
  /** Data bytes of one SSE event. Default: the response limit. Never above the response limit once resolved for a call. */
  readonly max_sse_event_bytes: number;
  /** Maximum nesting depth of JSON arrays/objects in a message, an SSE event's data, or a content[].text item. */
  readonly max_json_depth: number;
  /** Maximum number of JSON values (objects, arrays, scalars) in one of the above. */
  readonly max_json_nodes: number;
  /** A JSON response, from the host's request reaching the gateway (a backoff wait included) to its last byte. */
  readonly response_deadline_ms: number;
  /** SSE: longest time with no byte from the seller (comments count). */
  readonly sse_idle_timeout_ms: number;
  /** SSE: the whole stream of one request. */
  readonly sse_deadline_ms: number;
  readonly dedupe_text: DedupeTextMode;
}

/** Per-tool overrides (keys of `agents.<name>.tools.<tool>`). */
export type ToolOverrides = Partial<Limits>;

export interface AgentConfig {
  /** The key under `agents:` (matches `/agents/<name>/mcp`). */
  readonly name: string;
  /** The seller's MCP endpoint. */
  readonly url: URL;
  /** Headers set on every upstream request, `${VAR}` already expanded. Lower-cased names. They replace the host's header of the same name. */
  readonly headers: Readonly<Record<string, string>>;
  /** Bound on the host's request body. */
  readonly max_request_bytes: number;
  /** Bound on the messages (elements) of one JSON-RPC batch from the host (defaults.ts BUILTIN_DEFAULTS.max_batch_messages). */
  readonly max_batch_messages: number;
  /** Ceiling for `X-Max-Response-Bytes`; undefined means "the limit resolved for that call" (a call may only lower it). */
  readonly max_call_response_bytes: number | undefined;
  /** Content codings the gateway asks this seller for, in order (`identity` allowed). */
  readonly accept_encoding: readonly string[];
  /** true only when the config explicitly opts out of TLS certificate verification (logged loudly at start-up). */
  readonly tls_insecure_skip_verify: boolean;
  /** The agent guard's settings (buffered bytes, backoff after breaches), defaults applied. */
  readonly guard: GuardSettings;
  /** Limits for this agent with defaults applied (no tool, no call). */
  readonly limits: Limits;
  /** Per-tool overrides, keyed by tool name. */
  readonly tools: Readonly<Record<string, ToolOverrides>>;
}

export interface GatewayConfig {
  readonly listen: { readonly host: string; readonly port: number };
  /** Separate listener for /healthz, /readyz and /metrics; undefined: they are served on `listen`. Read at start-up only. */
  readonly ops_listen?: { readonly host: string; readonly port: number } | undefined;
  /** Defaults with built-ins applied. */
  readonly defaults: Limits & GuardSettings & { readonly max_request_bytes: number; readonly max_batch_messages: number };
  readonly agents: ReadonlyMap<string, AgentConfig>;
  readonly resume: { readonly secret: string | undefined; readonly ttl_ms: number };
  readonly log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** On SIGTERM/SIGINT/SIGQUIT: how long in-flight exchanges may take before the process exits anyway. */
  readonly shutdown_grace_ms: number;
  /**
   * The `retry:` value, in ms, written just before each SSE stream a graceful shutdown ends
   * plainly (the host's client waits that long before it reconnects, to the successor); 0: none
   * written (response/shutdown-retry.ts).
   */
  readonly shutdown_sse_retry_ms: number;
  /**
   * How long a host may take to send one whole request (head and body), in ms, before it is
   * answered 408 `request_timeout` and its connection closed (Node's `server.requestTimeout`;
   * the head within the lower of this and 60 s, `server.headersTimeout`). Counted from the
   * request's first byte, or for a connection's first request from its accept: a connection
   * that sends nothing gets the 408 too (docs/configuration.md; a hostile new user's trial 15, L3).
   */
  readonly request_timeout_ms: number;
  /**
   * Browser origins whose requests are served (`Origin` header, compared exactly), beside the
   * loopback origins, which are always served (`http` or `https`, `localhost`, `127.0.0.1` or
   * `[::1]`, any port: src/request/browser-guard.ts `isLoopbackOrigin`; DNS rebinding cannot
   * produce one). A request with any other `Origin` is refused 403 `origin_not_allowed`.
   * Empty (the default): only loopback origins; requests without an `Origin` (buyer agents,
   * SDK clients: not browsers) are served. MCP Streamable HTTP, Security Warning: servers MUST
   * validate `Origin` (DNS rebinding).
   */
  readonly allowed_origins: readonly string[];
  /**
   * Host names (`name` or `name:port`, lower case; src/config/schema.ts) whose `Host` header
   * is served besides the loopback names `localhost`, `127.0.0.1` and `[::1]`. A request with
   * another `Host` is refused 403 `host_not_allowed` when the gateway listens on a loopback
   * address (`listen.host`, as at start-up) or this list is not empty; listening elsewhere
   * (`0.0.0.0`) with the list empty, `Host` is not checked. Default empty. MCP Security Best
   * Practices (DNS rebinding: a same-origin GET carries no `Origin`); reported failure:
   * test/regressions/dns-rebinding-host-get-uses-credentials.test.ts.
   */
  readonly allowed_hosts: readonly string[];
  /** Absolute path of the file this came from, if any (for logs and reload). */
  readonly source: string | undefined;
}
