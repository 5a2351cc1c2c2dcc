/**
 * Child script for test/integration/stop-signals.test.ts:
 *
 *   stop-signals-child.ts <handler|hold-handler|reraise|drop>
 *
 * Installs the stop-signal listeners (src/stop-signals.ts), sends itself SIGTERM and waits
 * until that signal was dispatched (a listener of its own, added after the module's, tells),
 * then: `handler` sets a handler (the held signal is handed to it: it prints
 * `handled SIGTERM`, then a second SIGTERM is handled too: `handled SIGTERM`, exit 0);
 * `hold-handler` holds again, sends SIGINT too, then sets a handler (only the first signal
 * was held: `handled SIGTERM`); `reraise` gives the default action back, raising the held
 * signal (the process dies by SIGTERM, printing nothing); `drop` gives it back and drops it
 * (prints `alive`, exit 0).
 */
import { installStopSignals, onStopSignal, restoreStopSignals } from '../../src/stop-signals.js';

const mode = process.argv[2];
// Signal listeners do not keep the event loop alive: this does, until the script is done.
const keepAlive = setInterval(() => {}, 1000);

/** Sends `signal` to this process; resolves once the listeners have run. */
function selfSignal(signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    const seen = (): void => {
      process.off(signal, seen);
      resolve();
    };
    process.on(signal, seen);
    process.kill(process.pid, signal);
  });
}

installStopSignals();
await selfSignal('SIGTERM');
if (mode === 'handler') {
  let handled = 0;
  onStopSignal((signal) => {
    process.stdout.write(`handled ${signal}\n`);
    if (++handled === 2) process.exit(0);
  });
  await selfSignal('SIGTERM');
} else if (mode === 'hold-handler') {
  onStopSignal('hold');
  await selfSignal('SIGINT');
  onStopSignal((signal) => process.stdout.write(`handled ${signal}\n`));
  restoreStopSignals(false);
} else if (mode === 'reraise') {
  restoreStopSignals(true);
  // Not reached: the signal's default action has ended the process.
  process.stdout.write('still alive\n');
} else if (mode === 'drop') {
  restoreStopSignals(false);
  process.stdout.write('alive\n');
}
clearInterval(keepAlive);
