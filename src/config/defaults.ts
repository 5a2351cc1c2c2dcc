/**
 * Built-in defaults and bounds for the gateway configuration, with their units.
 *
 * These are the values used when neither the YAML file's `defaults:` block nor an agent or
 * tool sets a key. `schema.ts` uses the bounds; `load.ts` applies the defaults;
 * `docs/configuration.md` documents the same numbers (a unit test keeps keys in sync).
 */
import type { DedupeTextMode, GatewayConfig } from './types.js';

/** 1 KiB in bytes. */
export const KiB = 1024;
/** 1 MiB in bytes. */
export const MiB = 1024 * KiB;
/** 1 GiB in bytes. */
export const GiB = 1024 * MiB;
/** One second in milliseconds. */
export const SECOND_MS = 1000;
/** One hour in milliseconds. */
export const HOUR_MS = 3600 * SECOND_MS;

/**
 * The protocol-wide ceiling on a *default* response limit: 4 MiB (4,194,304 bytes).
 *
 * Source: AdCP "MCP response extraction", section "Size Limits": "4 MiB is the MCP default
 * and is also the protocol-wide ceiling on a default, so a client raises the limit for a
 * specific agent or a specific call rather than shipping a larger default." Hence
 * `defaults.max_response_bytes` may not exceed it, while an agent, a tool or a call may.
 */
export const SPEC_DEFAULT_RESPONSE_CEILING_BYTES = 4 * MiB;

/** Inclusive bounds of every numeric key, by kind. */
export const BOUNDS = Object.freeze({
  /** Any `*_bytes` key: 1 byte .. 1 GiB. */
  bytes: Object.freeze({ min: 1, max: GiB }),
  /** Any `*_ms` key: 1 ms .. 24 h. */
  ms: Object.freeze({ min: 1, max: 24 * HOUR_MS }),
  /** `max_json_depth`: nesting levels. */
  depth: Object.freeze({ min: 1, max: 10_000 }),
  /** `max_json_nodes`: JSON values counted. */
  nodes: Object.freeze({ min: 1, max: 100_000_000 }),
  /** `max_batch_messages`: messages in one JSON-RPC batch (each element is at least 1 of `max_json_nodes`' values, whose largest is 100,000,000). */
  messages: Object.freeze({ min: 1, max: 100_000 }),
  /** `backoff_after_breaches`: consecutive breaches; 0 turns the backoff off. */
  breaches: Object.freeze({ min: 0, max: 1_000 }),
  /** `listen.port`: 0 asks the OS for a free port. */
  port: Object.freeze({ min: 0, max: 65_535 }),
  /**
   * `shutdown_sse_retry_ms`, besides 0 (no `retry:` field): the range of the `retry:` values the
   * gateway forwards from a seller (response/sse-encode.ts SSE_RETRY_MIN_MS .. SSE_RETRY_MAX_MS,
   * 500 ms .. 5 min; response/shutdown-retry.ts checks they agree).
   */
  sseRetry: Object.freeze({ min: 500, max: 5 * 60 * 1000 }),
});

/**
 * The longest tool name a config accepts (config/schema.ts TOOL_NAME_PATTERN), in characters.
 * Also the longest tool name or method a host's request has a backoff kind of its own for
 * (admission/agent-guard.ts callKind): no configured tool has a longer name.
 */
export const MAX_TOOL_NAME_CHARS = 128;

/** Minimum length (characters) of a resume secret, from the config or the environment. */
export const MIN_RESUME_SECRET_LENGTH = 32;

/**
 * Largest config file the loader reads: 1 MiB (1,048,576 bytes). A real config is a few KiB;
 * the cap keeps a wrong `--config` (a device, a huge file) from exhausting memory. The file
 * is checked before reading (size, and that it is a regular file) and read with this cap.
 */
export const MAX_CONFIG_FILE_BYTES = MiB;

/** Environment variable that supplies the resume secret when `resume.secret` is absent. */
export const RESUME_SECRET_ENV = 'ADCP_GATEWAY_RESUME_SECRET';
/** Environment variable naming the config file when `--config` is not given. */
export const CONFIG_PATH_ENV = 'ADCP_GATEWAY_CONFIG';
/** Config file used when neither `--config` nor `ADCP_GATEWAY_CONFIG` is given (relative to the cwd). */
export const DEFAULT_CONFIG_PATH = 'config/gateway.yaml';

/** Content codings an agent's `accept_encoding` may list. */
export const CONTENT_CODINGS = ['gzip', 'deflate', 'br', 'identity'] as const;
export type ContentCoding = (typeof CONTENT_CODINGS)[number];

/** Log levels accepted by `log_level` (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = GatewayConfig['log_level'];

/** `dedupe_text` modes. */
export const DEDUPE_TEXT_MODES = ['summary', 'off'] as const satisfies readonly DedupeTextMode[];

/**
 * Built-in values of the `defaults:` block.
 * `max_sse_event_bytes` has no fixed built-in: when no level sets it, it follows the
 * response limit resolved for the exchange.
 */
export const BUILTIN_DEFAULTS = Object.freeze({
  /** bytes: the spec's recommended client safety limit (and the ceiling on a default). */
  max_response_bytes: SPEC_DEFAULT_RESPONSE_CEILING_BYTES,
  /** levels */
  max_json_depth: 64,
  /** JSON values */
  max_json_nodes: 100_000,
  /** ms: 30 s */
  response_deadline_ms: 30 * SECOND_MS,
  /** ms: 5 min */
  sse_idle_timeout_ms: 300 * SECOND_MS,
  /** ms: 1 h */
  sse_deadline_ms: HOUR_MS,
  /** bytes: 4 MiB */
  max_request_bytes: 4 * MiB,
  /**
   * messages: the most requests, notifications and responses one JSON-RPC batch from a host
   * (MCP 2025-03-26; later revisions have no batches) may hold; a larger one is refused
   * `batch_too_large` (HTTP 400) before anything is sent to the seller.
   *
   * Why a bound, and why 100: when a batch's answer breaks a limit (or the seller fails), the
   * gateway answers each of its requests with an error of its own (docs/errors.md, "Where a
   * minted error goes"), about 1.1 KB for a `tools/call` (the tool-result shape: the error JSON
   * twice and a sentence) and about 460 bytes for any other method, and mints them on the event
   * loop all agents share. Without a bound on the count, the request's bounds
   * (`max_request_bytes`, `max_json_nodes`) let one POST of 12,000 `tools/call` to an agent
   * with `max_response_bytes: 100000` get a 13.5 MB answer of the gateway's own, minted in
   * 1-2.6 s of event loop (a hostile new-user trial 14, M1:
   * test/regressions/batch-minted-errors-unbounded.test.ts). At 100 that answer is at most
   * about 115 KB (100 x the largest minted error) and takes milliseconds. Hosts batch a few
   * messages (notifications with a response, a handful of calls), far below it; one that
   * needs more sends several batches, or single messages.
   */
  max_batch_messages: 100,
  dedupe_text: 'summary' as DedupeTextMode,
});

/**
 * Built-in values of the agent guard's keys (src/admission/agent-guard.ts), settable in
 * `defaults:` and per agent.
 */
export const BUILTIN_GUARD = Object.freeze({
  /** bytes: 64 MiB of response bodies held at once per agent (16 default-limit responses). */
  max_buffered_response_bytes: 64 * MiB,
  /** consecutive RESPONSE_TOO_LARGE answers before the agent backs off */
  backoff_after_breaches: 3,
  /** ms: the first backoff */
  backoff_base_ms: 250,
  /** ms: the longest backoff (it doubles per further breach) */
  backoff_max_ms: 10 * SECOND_MS,
});

/** Built-in `listen:` address. */
export const DEFAULT_LISTEN = Object.freeze({ host: '127.0.0.1', port: 8787 });
/** Built-in `log_level`. */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';
/** Built-in `resume.ttl_ms`: 1 h. */
export const DEFAULT_RESUME_TTL_MS = HOUR_MS;
/** Built-in `shutdown_grace_ms`: 10 s from SIGTERM/SIGINT/SIGQUIT to a forced exit. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10 * SECOND_MS;
/**
 * Built-in `shutdown_sse_retry_ms`: 5 s. The `retry:` field written just before each SSE stream a
 * graceful shutdown ends plainly, so a host's client waits that long before it reconnects to the
 * successor (src/response/shutdown-retry.ts). With it the MCP TypeScript SDK client (1.x:
 * 2 attempts by default, each this long after the last) reaches a successor that listens within
 * 10 s of the stream's end; with its own backoff (1 s, then 1.5 s) within 2.5 s (a hostile
 * operator's trial 53, F1: test/regressions/slow-restart-leaves-resumable-sse-call-hanging.test.ts).
 */
export const DEFAULT_SHUTDOWN_SSE_RETRY_MS = 5 * SECOND_MS;
/**
 * Built-in `request_timeout_ms`: 30 s for a host to send one whole request. Fastify turns
 * Node's own request timeout off, so a host that sent a head and then dribbled (or never sent)
 * its body held its connection forever (found by a new user: `request_timeout` was
 * documented without a duration). A request body is at most `max_request_bytes` on a local link.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30 * SECOND_MS;
/** Built-in `accept_encoding` of an agent. */
export const DEFAULT_ACCEPT_ENCODING: readonly ContentCoding[] = Object.freeze(['gzip', 'deflate', 'br']);
