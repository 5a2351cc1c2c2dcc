/**
 * The level of an exchange's `exchange` line: it follows the exchange's outcome (README, Logs,
 * "Levels", whose table test/unit/exchange-line-level.test.ts checks against this).
 *
 * - `info` (30): a clean answer, the seller's answer as it came, whatever it says (`ok`,
 *   `rewritten`: the seller's own JSON-RPC error, `isError` result or 4xx are the seller's
 *   business); a plain end the host resumes from (`resumable_end`); `already_answered`; the
 *   host's own doing (`cancelled`, `host_aborted` of the seller's answer).
 * - `warn` (40): an exchange the gateway refused or that failed: every minted error
 *   (`local_error`: a limit breach, a deadline, a backoff, an unreachable or reset seller, a
 *   seller that is not MCP, a host not reading, an internal error), `shutdown_cut`, and a
 *   stream ended for the seller's fault (`resumable_end` with reason `upstream_encoding_invalid`,
 *   `sse_undelivered` or `sse_wire_overhead`).
 *
 * `host_aborted` keeps the level of the answer the host left (routing/handler.ts takes it
 * before the outcome becomes `host_aborted`): a minted error that none of reached the host
 * (its `reason` stays on the line) is still a failed exchange.
 *
 * Returns one of two string constants: nothing is allocated on any line. Source: a hostile
 * operator's trial 53, F2 (every exchange line was info, so at `log_level: warn` a failed
 * exchange left no line: test/regressions/failed-exchanges-silent-at-warn-level.test.ts).
 */
import type { Outcome } from '../exchange.js';

/** The pino level an exchange line is written at. */
export type ExchangeLineLevel = 'info' | 'warn';

/** The plain ends (`resumable_end`) that the seller's fault caused: its body undecodable, its stream full of bytes that reached the host as nothing, its framing past its bound (routing/wire-meter.ts). */
const SELLER_FAULT_ENDS: ReadonlySet<string> = new Set(['upstream_encoding_invalid', 'sse_undelivered', 'sse_wire_overhead']);

/** The level of the line of an exchange that ended with `outcome` and `reason` (module doc). */
export function exchangeLineLevel(outcome: Outcome | undefined, reason: string | undefined): ExchangeLineLevel {
  if (outcome === 'local_error' || outcome === 'shutdown_cut') return 'warn';
  if (outcome === 'resumable_end' && reason !== undefined && SELLER_FAULT_ENDS.has(reason)) return 'warn';
  return 'info';
}
