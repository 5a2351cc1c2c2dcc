/**
 * The gateway's own fixed texts in its log lines: values it writes from its own vocabulary,
 * never from a host, a seller or the config. Log redaction (log-scrub.ts) leaves a string
 * value that is wholly one of them as it is: such a value is in the gateway's published source,
 * so it holds no secret, even where a configured value (an agent header that is no secret)
 * equals it or part of it. Before, `user-agent: "adcp-buyer-gateway"` blanked `service` in every
 * line, and `x-adcp-features: 'tools/call'` every `method` of a tool call (a hostile new user's
 * trial, F6: test/regressions/log-redaction-corrupts-lines.test.ts).
 *
 * What is here: the `service` name; every `msg` the gateway writes as a literal (checked against
 * the sources by test/unit/log-scrub.test.ts); the MCP method names a `method` holds
 * (metrics.ts METHOD_LABELS); the exchange and refusal lines' `rpc_kind`, `outcome`, `reason`
 * and `text_not_lifted` values; the `resume_secret` values (the exchange and `shutting down`
 * lines); the exchange line's `upstream_error` codes of the transport failures the gateway
 * knows (routing/upstream-failure.ts, routing/llhttp-reasons.ts); discovery surfaces. A value only partly one of these (a seller's
 * message quoting `tools/call`) is redacted as any other.
 */
import { DROP_REASONS, END_REASONS, REASONS, REFUSALS } from '../errors/codes.js';
import type { Outcome } from '../exchange.js';
import type { TextNotLiftedReason } from '../exchange.js';
import type { GatewayControl } from '../app.js';
import { DISCOVERY_SURFACES, METHOD_LABELS, type RpcKindLabel } from './metrics.js';
import { RECONFIGURED_REASONS } from '../routing/open-streams.js';
import { TRANSPORT_FAILURE_CODES } from '../routing/upstream-failure.js';
import { LLHTTP_REASON_CODES } from '../routing/llhttp-reasons.js';

/** The `service` of every line (pino's base). */
export const SERVICE_NAME = 'adcp-buyer-gateway';

/** Every literal `msg` of the gateway's own log calls (a unit test reads the sources for them). */
export const GATEWAY_MESSAGES: readonly string[] = [
  'starting',
  'gateway started',
  'could not start',
  'reloading the config',
  'config reload dropped: the gateway is shutting down',
  'could not end the open exchanges before exiting',
  'shutting down',
  'nothing in flight: ending the SSE streams that answer no request',
  'shutdown_grace_ms nearly over: ending the SSE streams still open',
  'shutdown: SSE calls ended for their clients to resume on a successor',
  'stopped',
  'stopped during startup',
  'signal ignored: the gateway acts on SIGHUP (reload), SIGTERM, SIGINT and SIGQUIT (stop) only',
  'unhandled error',
  'No resume secret configured (resume.secret or ADCP_GATEWAY_RESUME_SECRET): using a random per-process secret, so SSE resumption will not survive a restart or work across replicas.',
  'agent backing off: its answers keep breaking size limits',
  'agent backoff ended: an answer came within limits',
  'refused',
  'unused connection closed',
  'TLS certificate verification is OFF for this agent (tls_insecure_skip_verify: true). Never use this in production.',
  'config file watch stopped: reload with SIGHUP',
  'watching the config file for changes',
  'config file watch off (--no-watch-config): reload with SIGHUP',
  'cannot watch the config file: reload with SIGHUP',
  'config directory watch failed: watching it again',
  'config directory is gone: watching for it to come back (reload with SIGHUP meanwhile)',
  'config directory replaced: watching the new one',
  'config directory is back: watching it again',
  'config reloaded',
  'config reload failed: keeping the running config',
  'config reload failed unexpectedly: keeping the running config',
  'config file check: the same failure as last logged, not logged again',
  'SSE stream: event dropped',
  'SSE stream: events dropped',
  'ignored malformed SSE line',
  'upstream request failed with an unexpected error',
  'exchange',
  'discovery response over its size target (AdCP managing-response-size)',
  'seller answered a request 202 Accepted with a body: sent to the host as 200',
  'response pipeline failed',
  'could not drop the metric series of removed agents',
];

const RPC_KINDS: readonly RpcKindLabel[] = ['request', 'notification', 'response', 'batch', 'none'];

/** Every `outcome` of the exchange and refusal lines (README, Logs, "Levels", lists each: test/unit/exchange-line-level.test.ts). */
export const OUTCOMES = ['ok', 'rewritten', 'local_error', 'refused', 'resumable_end', 'already_answered', 'host_aborted', 'cancelled', 'shutdown_cut'] as const satisfies readonly Outcome[];
/** Fails to compile when `Outcome` gains a value not listed above. */
const EVERY_OUTCOME: Exclude<Outcome, (typeof OUTCOMES)[number]> extends never ? true : never = true;

const TEXT_NOT_LIFTED = [
  'text_bytes',
  'json_depth',
  'json_nodes',
  'proto_key',
  'lone_surrogate',
  'repeated_key',
  'negative_zero',
  'lossy_number',
  'max_response_bytes',
  'max_sse_event_bytes',
  'max_json_depth',
  'max_json_nodes',
] as const satisfies readonly TextNotLiftedReason[];
const EVERY_TEXT_NOT_LIFTED: Exclude<TextNotLiftedReason, (typeof TEXT_NOT_LIFTED)[number]> extends never ? true : never = true;

/** The `resume_secret` values: app.ts GatewayControl.resumeSecret, exchange.ts Exchange.shutdownResumeSecret. */
const RESUME_SECRET_SOURCES = ['configured', 'per_process'] as const satisfies ReadonlyArray<GatewayControl['resumeSecret']>;

const GATEWAY_TEXTS: ReadonlySet<string> = new Set([
  SERVICE_NAME,
  ...GATEWAY_MESSAGES,
  ...METHOD_LABELS,
  ...RPC_KINDS,
  ...(EVERY_OUTCOME ? OUTCOMES : []),
  ...(EVERY_TEXT_NOT_LIFTED ? TEXT_NOT_LIFTED : []),
  ...RESUME_SECRET_SOURCES,
  ...RECONFIGURED_REASONS,
  ...Object.keys(REASONS),
  ...Object.keys(DROP_REASONS),
  ...Object.keys(END_REASONS),
  ...Object.keys(REFUSALS),
  ...DISCOVERY_SURFACES,
  ...TRANSPORT_FAILURE_CODES,
  ...LLHTTP_REASON_CODES,
  'HTTPParserError',
]);

/** Whether `value` (a whole string value of a log line) is one of the gateway's own fixed texts. */
export function isGatewayText(value: string): boolean {
  return GATEWAY_TEXTS.has(value);
}
