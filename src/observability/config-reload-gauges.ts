/**
 * Whether the config file on disk is the one in force, as two gauges (the names Prometheus and
 * Alertmanager give the same thing, `prometheus_config_last_reload_successful`, ...):
 *
 * - `adcp_gateway_config_last_reload_successful`: 1 at start (the gateway started from the
 *   file) and after a reload that applied the file or found it unchanged (its text and `${VAR}`
 *   values those of the running config); 0 after a reload that failed (the file broken,
 *   unreadable, missing: the running config stays). Alert on `== 0`.
 * - `adcp_gateway_config_last_reload_success_timestamp_seconds`: when that last success was,
 *   in seconds since the Unix epoch (milliseconds as a fraction): start, or the reload; a
 *   failure leaves it.
 *
 * Set for each reload attempt `config_reloads_total` counts (reload.ts `onResult`: not a file
 * check that finds the same bytes again, nor one that repeats the failure last logged, which
 * change nothing here either). Source: a hostile operator's trial 53, F8 (no metric told a
 * broken file on disk from an applied one: test/regressions/broken-config-on-disk-no-metric.test.ts).
 */
import { Gauge, type Registry } from 'prom-client';

/** What a reload attempt came to (`config_reloads_total`'s `result`). */
export type ConfigReloadResult = 'ok' | 'error' | 'unchanged';

export interface ConfigReloadGauges {
  /** Sets both gauges after a reload attempt. */
  record(result: ConfigReloadResult): void;
}

/**
 * Registers both gauges on `registers` under `prefix` (`adcp_gateway_`), set as at a start
 * from a valid file at `now()` (ms since the epoch; `Date.now` by default).
 */
export function configReloadGauges(prefix: string, registers: Registry[], now: () => number = Date.now): ConfigReloadGauges {
  const successful = new Gauge({
    name: `${prefix}config_last_reload_successful`,
    help: 'Whether the last config reload succeeded (1: applied, or the file unchanged; 0: failed, the running config kept); 1 at start.',
    registers,
  });
  const stamp = new Gauge({
    name: `${prefix}config_last_reload_success_timestamp_seconds`,
    help: 'When the config in force was last loaded or found unchanged (start, or a successful reload), in seconds since the Unix epoch.',
    registers,
  });
  const succeeded = (): void => {
    successful.set(1);
    stamp.set(now() / 1000);
  };
  succeeded();
  return {
    record(result) {
      if (result === 'error') successful.set(0);
      else succeeded();
    },
  };
}
