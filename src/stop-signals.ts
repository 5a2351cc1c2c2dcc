/**
 * SIGTERM, SIGINT, SIGQUIT, SIGHUP and the signals the gateway ignores from the bin's first
 * statement on (src/main.ts), before the rest of the gateway is loaded: no other import than Node's, so that nothing loads before the handlers
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
 * SIGQUIT (Ctrl-\, nginx's graceful stop) is a stop signal too: it ended the process by its
 * default action (exit status 131, no line). The {@link IGNORED_SIGNALS}, signals whose default
 * action ends a process but that no operator means as a stop, are listened for the same way
 * and handed to {@link onIgnoredSignal}'s handler (the serving gateway logs one warning line
 * each). Reported failure (a hostile operator's trial 45, finding 1): SIGUSR1 opened Node's
 * inspector, an unauthenticated debugging port on loopback
 * (test/regressions/sigusr1-opens-node-inspector.test.ts), and SIGUSR2 ended the gateway with
 * a call in flight, exit status 140, no line
 * (test/regressions/sigusr2-kills-gateway-without-log.test.ts).
 *
 * Node's own start-up, before the bin's first statement runs (some tens of milliseconds; more
 * under a loader such as tsx), is out of reach: a signal then still has the default action
 * (SIGUSR1: the inspector opens, unless Node runs with `--disable-sigusr1`, Node >= 22.14, as
 * the Dockerfile's ENTRYPOINT does; `NODE_OPTIONS=--disable-sigusr1` works too, Node 20 refuses
 * both). Under that flag Node drops SIGUSR1 itself: the listener here never sees it (no line).
 */
import { constants } from 'node:os';

/** The signals that stop the gateway. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Signals whose default action ends the process (SIGUSR1's, in Node: opening the inspector)
 * and that the gateway has no action for, where the platform has them: a listener keeps that
 * default from running (checked on Linux with Node 20, 22 and 24: SIGUSR1 opens no inspector
 * while a listener is on). Not here: the signals of a crash or of a debugger or profiler
 * (SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGSYS, SIGTRAP, SIGPROF), and SIGXCPU, the
 * kernel's for a CPU-time limit; SIGPOLL is SIGIO's other name (one listener, not two).
 */
export const IGNORED_SIGNALS: readonly NodeJS.Signals[] = (['SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGVTALRM', 'SIGIO', 'SIGPWR', 'SIGSTKFLT'] as const).filter(
  (signal) => Object.hasOwn(constants.signals, signal),
);

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
const ignored = new SignalRoute<NodeJS.Signals>(IGNORED_SIGNALS);
let installed = false;

/**
 * Installs the process's listeners of the stop signals, SIGHUP and the
 * {@link IGNORED_SIGNALS}, holding any signal until {@link onStopSignal} / {@link onHangupSignal}
 * / {@link onIgnoredSignal} set a handler. Once per process: later calls do nothing.
 */
export function installStopSignals(): void {
  if (installed) return;
  installed = true;
  stops.install();
  hangups.install();
  ignored.install();
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
 * Sets what one of the {@link IGNORED_SIGNALS} does: `handler`, called with each (at once,
 * before this returns, for the first that came while held). Does nothing before
 * {@link installStopSignals} or after {@link restoreStopSignals}.
 */
export function onIgnoredSignal(handler: (signal: NodeJS.Signals) => void): void {
  ignored.route(handler);
}

/**
 * Gives the stop signals, SIGHUP and the {@link IGNORED_SIGNALS} back their default action (the
 * listeners are removed: SIGUSR1 then ends the process, as SIGUSR2 does; Node's inspector is
 * not armed again). A signal held so far is raised again when `reraise` is true (the process
 * then dies by it), dropped otherwise (the command ended on its own meanwhile).
 */
export function restoreStopSignals(reraise: boolean): void {
  const held = [stops.restore(), hangups.restore(), ignored.restore()];
  if (!reraise) return;
  for (const signal of held) if (signal !== undefined) process.kill(process.pid, signal);
}
