/**
 * `--check-config` warnings and notes about settings that do nothing, or that work against
 * the operator (config/table.ts `configNotes`), a hostile new operator's trial 45, L7
 * (test/regressions/check-config-silent-on-settings-that-break-every-call.test.ts):
 * - `resume.ttl_ms` below twice the `retry:` floor (1000 ms): a seller's `retry:` goes out as
 *   the floor (500 ms, response/sse-encode.ts `sseRetryCeilingMs`), more than half a token's
 *   life, so a host that waits as told may resume with an expired token (docs: "keep ttl_ms at
 *   1000 or more");
 * - `shutdown_grace_ms` below 1000: at SIGTERM, SIGINT or SIGQUIT the exchanges in flight get that long,
 *   and the exit cuts those still open;
 * - `tls_insecure_skip_verify: true` on an `http:` url: no TLS, nothing to verify (it warned
 *   "verification is OFF");
 * - configured headers, or a url query, sent over plain `http:` to a host that is not loopback:
 *   the gateway treats header values and the query as secrets (never logged nor echoed), and
 *   anyone on the way can read them there.
 */
import { SSE_RETRY_MIN_MS } from '../response/sse-encode.js';
import { isLoopbackListenHost } from '../request/browser-guard.js';
import type { AgentConfig, GatewayConfig } from './types.js';

/** The `resume.ttl_ms` below which the `retry:` floor is more than half a token's life. */
const MIN_SENSIBLE_RESUME_TTL_MS = 2 * SSE_RETRY_MIN_MS;
/** The `shutdown_grace_ms` below which the exchanges in flight at a stop signal hardly get a chance to finish. */
const MIN_SENSIBLE_SHUTDOWN_GRACE_MS = 1000;

/** Notes on process-wide settings. */
export function gatewayNotes(config: GatewayConfig): string[] {
  const out: string[] = [];
  const ttl = config.resume.ttl_ms;
  if (ttl < MIN_SENSIBLE_RESUME_TTL_MS) {
    out.push(
      `note: resume.ttl_ms ${ttl} is below ${MIN_SENSIBLE_RESUME_TTL_MS}: a seller's retry: goes out as ${SSE_RETRY_MIN_MS} ms (the floor), ` +
        "more than half a resume token's life, so a host that waits as told may resume with an expired token",
    );
  }
  const grace = config.shutdown_grace_ms;
  if (grace < MIN_SENSIBLE_SHUTDOWN_GRACE_MS) {
    out.push(
      `note: shutdown_grace_ms ${grace} is below ${MIN_SENSIBLE_SHUTDOWN_GRACE_MS}: on SIGTERM, SIGINT or SIGQUIT, the JSON exchanges in flight get ${grace} ms to finish ` +
        'before the process exits 1 and cuts them',
    );
  }
  return out;
}

/** The WARNING lines of an agent's transport: verification off on https:, secrets in clear text on http: to a host that is not loopback. */
export function transportWarnings(agent: AgentConfig): string[] {
  const out: string[] = [];
  const plain = agent.url.protocol === 'http:';
  if (agent.tls_insecure_skip_verify && !plain) out.push(`WARNING: agent ${agent.name}: TLS certificate verification is OFF (tls_insecure_skip_verify)`);
  if (!plain || isLoopbackListenHost(agent.url.hostname)) return out;
  const where = 'its url is http: to a host that is not loopback, so anyone on the way can read';
  const headers = Object.keys(agent.headers);
  if (headers.length > 0) out.push(`WARNING: agent ${agent.name}: its headers (${headers.join(', ')}) go in clear text: ${where} them (use https:)`);
  if (agent.url.search !== '') out.push(`WARNING: agent ${agent.name}: its url query goes in clear text: ${where} it (use https:)`);
  return out;
}

/** The note of a setting of the agent that has no effect: `tls_insecure_skip_verify` on an http: url. */
export function transportNotes(agent: AgentConfig): string[] {
  return agent.tls_insecure_skip_verify && agent.url.protocol === 'http:' ? [`note: agent ${agent.name}: tls_insecure_skip_verify has no effect: its url is http:, which has no TLS`] : [];
}
