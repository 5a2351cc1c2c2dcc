#!/usr/bin/env node
/**
 * The `adcp-buyer-gateway` bin. Its first statement installs the process's signal listeners (stop,
 * SIGHUP, the ignored ones: src/stop-signals.ts), before anything else is loaded; then it loads and runs the
 * command (src/cli.ts). Nothing heavier than Node's own modules is imported statically here:
 * a static import is loaded before this module's first statement runs, and loading the
 * gateway takes ~0.5 s, during which a stop signal had the default action (exit status 143,
 * no log line: test/regressions/stop-signal-during-startup.test.ts).
 */
import { installStopSignals } from './stop-signals.js';
import { isEntryPoint } from './entry-point.js';

if (isEntryPoint(import.meta.url)) {
  installStopSignals();
  const { runCli } = await import('./cli.js');
  await runCli();
}
