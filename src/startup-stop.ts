/**
 * The serving gateway's stop during startup: from the moment the command line says it
 * serves until it binds its ports (src/cli.ts `serve`), a SIGTERM, SIGINT or SIGQUIT stops the process
 * at once: one line, `stopped during startup` (info, with the `signal`), then exit 0 once
 * that line is out (observability/exit-after-log.ts). Nothing is open to wait for: the
 * process has not listened, so no host can have been answered. Exit 0, as for a graceful
 * shutdown (docs/configuration.md, "Errors and exit codes"): the stop asked for was made, and
 * cut nothing.
 *
 * Reported failure: a stop signal in the ~0.5 s before the shutdown hook was installed
 * killed the process with no log line, exit status 143
 * (test/regressions/stop-signal-during-startup.test.ts; src/stop-signals.ts).
 */
import type { Logger } from 'pino';
import { exitAfterLogFlush } from './observability/exit-after-log.js';
import { onStopSignal, type StopSignal } from './stop-signals.js';

export class StartupStop {
  /** True once a stop signal came: startup must go no further (`serve` checks it after each wait). */
  stopping = false;
  private logger: Logger | undefined;

  /** Takes the process's stop signals from now on (src/stop-signals.ts `onStopSignal`). */
  constructor(private readonly exitCode: number) {
    onStopSignal((signal) => this.stop(signal));
  }

  /** The config's logger, once made: the line then goes through it (its `log_level` applies); before, through a logger at `info`. */
  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  private stop(signal: StopSignal): void {
    if (this.stopping) return; // a second signal: the exit is on its way
    this.stopping = true;
    const logger = this.logger;
    const made = logger !== undefined ? Promise.resolve(logger) : import('./observability/logger.js').then((m) => m.createLogger('info'));
    void made.then((log) => {
      log.info({ signal }, 'stopped during startup');
      exitAfterLogFlush(log, this.exitCode);
    });
  }
}
