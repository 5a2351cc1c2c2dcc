#!/usr/bin/env node
/**
 * The `adcp-buyer-gateway` bin. Its first statement installs the process's signal listeners (stop,
 * SIGHUP, the ignored ones: src/stop-signals.ts), before anything else is loaded; then it loads and runs the
 * command (src/cli.ts). Nothing heavier than Node's own modules is imported statically here:
 * a static import is loaded before this module's first statement runs, and loading the
 * gateway takes ~0.5 s, during which a stop signal had the default action (exit status 143,
 * no log line: test/regressions/stop-signal-during-startup.test.ts).
 *
 * Right after the listeners, an inspector Node opened though the process was not started to be
 * inspected (a SIGUSR1 in Node's own start-up, before the listener: src/unasked-inspector.ts)
 * is closed, with one warning line on stderr; checked again once the event loop has turned and
 * after 100 ms and 1 s, as Node opens it asynchronously. `node:inspector` is imported only
 * where Node has an inspector (a build without one throws on importing it).
 */
import { installStopSignals } from './stop-signals.js';
import { isEntryPoint } from './entry-point.js';
import { guardAgainstUnaskedInspector } from './unasked-inspector.js';

if (isEntryPoint(import.meta.url)) {
  installStopSignals();
  if (process.features.inspector) guardAgainstUnaskedInspector(await import('node:inspector'));
  const { runCli } = await import('./cli.js');
  await runCli();
}
