/**
 * SIGTERM, SIGINT and SIGHUP from the bin's first statement on (src/main.ts), before the rest of the
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
 * SIGHUP, the serving gateway's config reload (src/cli.ts), is held the same way until the
 * reload is wired ({@link onHangupSignal}: one that came meanwhile runs the reload then, as
 * the file may have changed after startup read it), and ignored once a shutdown has begun.
 * Reported failure: a SIGHUP during startup or a graceful shutdown had the default action,
 * exit status 129 and no log line (same test file).
 *
 * Node's own start-up, before the bin's first statement runs (some tens of milliseconds; more
 * under a loader such as tsx), is out of reach: a signal then still has the default action.
 */

/** The signals that stop the gateway. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Where some signals go: a handler, `hold` (the first one waits for the next handler set),
 * `ignore`, or `default` (no listener: the default action, before {@link installStopSignals}
 * and after {@link restoreStopSignals}).
 */
class SignalRoute<S extends NodeJS.Signals> {
  private to: ((signal: S) => void) | 'hold' | 'ignore' | 'default' = 'default';
  private held: S | undefined;
  private readonly listener = (signal: NodeJS.Signals): void => {
    if (typeof this.to === 'function') this.to(signal as S);
    else if (this.to === 'hold') this.held ??= signal as S;
  };

  constructor(private readonly signals: readonly S[]) {}

  /** Listens, holding what comes. */
  install(): void {
    this.to = 'hold';
    for (const signal of this.signals) process.on(signal, this.listener);
  }

  /** Sends what comes to `to`; a held signal goes to a handler at once. No-op while `default`. */
  route(to: ((signal: S) => void) | 'hold' | 'ignore'): void {
    if (this.to === 'default') return;
    this.to = to;
    const held = this.held;
    if (typeof to === 'function' && held !== undefined) {
      this.held = undefined;
      to(held);
    }
  }

  /** Stops listening; returns the held signal (now dropped), if any. */
  restore(): S | undefined {
    if (this.to === 'default') return undefined;
    this.to = 'default';
    for (const signal of this.signals) process.off(signal, this.listener);
    const held = this.held;
    this.held = undefined;
    return held;
  }
}

const stops = new SignalRoute<StopSignal>(STOP_SIGNALS);
const hangups = new SignalRoute<'SIGHUP'>(['SIGHUP']);
let installed = false;

/**
 * Installs the process's SIGTERM, SIGINT and SIGHUP listeners, holding any signal until
 * {@link onStopSignal} / {@link onHangupSignal} set a handler. Once per process: later calls
 * do nothing.
 */
export function installStopSignals(): void {
  if (installed) return;
  installed = true;
  stops.install();
  hangups.install();
}

/**
 * Sets what handles the next stop signals: `handler`, called with each (a signal held so far
 * is handed to it at once, before this returns), or `'hold'` (the first signal waits for the
 * next handler set). Does nothing before {@link installStopSignals} or after
 * {@link restoreStopSignals}.
 */
export function onStopSignal(handler: ((signal: StopSignal) => void) | 'hold'): void {
  stops.route(handler);
}

/**
 * Sets what a SIGHUP does: `reload`, called for each (at once, before this returns, for one
 * that came while held), or `'ignore'`. Does nothing before {@link installStopSignals} or
 * after {@link restoreStopSignals}.
 */
export function onHangupSignal(reload: (() => void) | 'ignore'): void {
  hangups.route(reload);
}

/**
 * Gives SIGTERM, SIGINT and SIGHUP back their default action (the listeners are removed). A
 * signal held so far is raised again when `reraise` is true (the process then dies by it),
 * dropped otherwise (the command ended on its own meanwhile).
 */
export function restoreStopSignals(reraise: boolean): void {
  const held = [stops.restore(), hangups.restore()];
  if (!reraise) return;
  for (const signal of held) if (signal !== undefined) process.kill(process.pid, signal);
}
