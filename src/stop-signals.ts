/**
 * SIGTERM and SIGINT from the bin's first statement on (src/main.ts), before the rest of the
 * gateway is loaded: no other import than Node's, so that nothing loads before the handlers
 * are in place.
 *
 * Reported failure: the handlers were installed only once the gateway listened (the shutdown
 * hook, src/cli.ts), some 0.5 s after the process started (loading the modules, the config,
 * building the app); a stop signal before that had Node's default action: the process died
 * by the signal, exit status 143 (SIGTERM) or 130 (SIGINT), and logged nothing, where
 * docs/configuration.md promises a graceful stop
 * (test/regressions/stop-signal-during-startup.test.ts).
 *
 * The process's stop signals go to one handler at a time, which the CLI sets as it goes
 * ({@link onStopSignal}):
 * - until the command is known, and while the serving gateway binds its ports, a signal is
 *   held (the first one; later ones are dropped) and handed to the next handler set;
 * - a command that is not serving (`--check-config`, `probe`) gives the signals back their
 *   default action ({@link restoreStopSignals}): a held signal is raised again, and the
 *   process dies by it, as any command line tool would;
 * - the serving gateway stops during startup at once (`stopped during startup`, exit 0),
 *   then hands signals to its graceful shutdown once it listens.
 *
 * Node's own start-up, before the bin's first statement runs (some tens of milliseconds; more
 * under a loader such as tsx), is out of reach: a signal then still has the default action.
 */

/** The signals that stop the gateway. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** What is done with a stop signal: a handler, `hold` (keep the first for the next handler), or `default` (the default action). */
type Disposition = ((signal: StopSignal) => void) | 'hold' | 'default';

let disposition: Disposition = 'default';
let held: StopSignal | undefined;
let installed = false;

const listener = (signal: NodeJS.Signals): void => {
  const stop = signal as StopSignal;
  if (typeof disposition === 'function') disposition(stop);
  else if (disposition === 'hold') held ??= stop;
};

/**
 * SIGHUP, the serving gateway's config reload (src/cli.ts), from the bin's first statement
 * too: `hold` until the reload is wired (a SIGHUP meanwhile is remembered, and the reload runs
 * once it is: the file may have changed after startup read it), then the reload, then
 * `ignore` once a shutdown has begun. Reported failure: a SIGHUP during startup (and during a
 * graceful shutdown) had the default action, exit status 129 and no log line
 * (test/regressions/stop-signal-during-startup.test.ts).
 */
let hangup: (() => void) | 'hold' | 'ignore' | 'default' = 'default';
let hangupHeld = false;

const hangupListener = (): void => {
  if (typeof hangup === 'function') hangup();
  else if (hangup === 'hold') hangupHeld = true;
};

/**
 * Installs the process's SIGTERM and SIGINT listeners, holding any signal until
 * {@link onStopSignal} sets a handler. Once per process: later calls do nothing.
 */
export function installStopSignals(): void {
  if (installed) return;
  installed = true;
  disposition = 'hold';
  for (const signal of STOP_SIGNALS) process.on(signal, listener);
  hangup = 'hold';
  process.on('SIGHUP', hangupListener);
}

/**
 * Sets what a SIGHUP does: `reload`, called for each (at once, before this returns, for one
 * that came while held), or `'ignore'`. Does nothing before {@link installStopSignals} or
 * after {@link restoreStopSignals}.
 */
export function onHangupSignal(reload: (() => void) | 'ignore'): void {
  if (!installed || hangup === 'default') return;
  hangup = reload;
  if (typeof reload === 'function' && hangupHeld) {
    hangupHeld = false;
    reload();
  }
}

/**
 * Sets what handles the next stop signals: `handler`, called with each (a signal held so far
 * is handed to it at once, before this returns), or `'hold'` (the first signal waits for the
 * next handler set). Does nothing before {@link installStopSignals} or after
 * {@link restoreStopSignals}.
 */
export function onStopSignal(handler: ((signal: StopSignal) => void) | 'hold'): void {
  if (!installed || disposition === 'default') return;
  disposition = handler;
  if (typeof handler === 'function' && held !== undefined) {
    const signal = held;
    held = undefined;
    handler(signal);
  }
}

/**
 * Gives SIGTERM, SIGINT and SIGHUP back their default action (the listeners are removed). A signal
 * held so far is raised again when `reraise` is true (the process then dies by it), dropped
 * otherwise (the command ended on its own meanwhile).
 */
export function restoreStopSignals(reraise: boolean): void {
  if (!installed || disposition === 'default') return;
  disposition = 'default';
  for (const signal of STOP_SIGNALS) process.off(signal, listener);
  hangup = 'default';
  process.off('SIGHUP', hangupListener);
  const signal = held;
  held = undefined;
  const hangupSignal = hangupHeld;
  hangupHeld = false;
  if (reraise && signal !== undefined) process.kill(process.pid, signal);
  if (reraise && hangupSignal) process.kill(process.pid, 'SIGHUP');
}
