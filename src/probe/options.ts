/**
 * The `probe` command's constants the command line needs before the probe itself is loaded
 * (src/cli.ts loads src/probe/probe.ts, and with it the whole gateway, only when it runs).
 */

/** Default per-request timeout of the probe's client (the gateway's own deadlines apply first). */
export const DEFAULT_PROBE_TIMEOUT_MS = 60_000;

/** Exit codes of `probe`. */
export const PROBE_EXIT = Object.freeze({
  /** Every surface within its target. */
  WITHIN: 0,
  /** A surface over its target, or an error. */
  OVER_OR_ERROR: 1,
  /** Bad command line, invalid config or unknown agent. */
  USAGE: 2,
});
