/**
 * The text that replaces a redacted value, in the logs (observability/logger.ts) and in what
 * the gateway shows people (`--check-config`, `probe`: config/display-url.ts). Its own module,
 * with no imports, so that `--check-config` shows an agent url without loading the logger
 * (pino) and the metrics (prom-client) with it: test/regressions/cli-version-loads-metrics-stack.test.ts.
 */
export const REDACTED = '[redacted]';
