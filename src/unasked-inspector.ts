/**
 * Closes Node's inspector when it is open though the process was not started to be inspected:
 * src/main.ts calls {@link guardAgainstUnaskedInspector} right after the signal listeners are
 * in place.
 *
 * Reported failure (hostile trial 46, item 2): the bin's SIGUSR1 listener (src/stop-signals.ts)
 * keeps Node from opening its inspector from the bin's first statement on, but a SIGUSR1 in the
 * tens of milliseconds of Node's own start-up before that (up to 80 ms on Node 20 at load 6)
 * still opened it, an unauthenticated debugging port on 127.0.0.1:9229, for the life of the
 * process (`node --disable-sigusr1`, Node >= 22.14, closes that window; Node 20 has no such
 * flag). Now the bin closes it, and writes one warning line on stderr (where Node wrote its
 * `Debugger listening on ...`; the config's logger is not made yet)
 * (test/regressions/sigusr1-startup-window-inspector-left-open.test.ts).
 *
 * Not once but four times: Node opens the inspector asynchronously. Its SIGUSR1 handler wakes a
 * watchdog thread, which asks the main thread to open it (an interrupt, and a callback on the
 * event loop), so a signal caught just before the bin's listener could open it after a check
 * made at once had found it closed (review 31, finding 2: 3 of ~75 timed runs). So the check is
 * made at once, again once the event loop has turned (`setImmediate`), and after 100 ms and 1 s
 * (slack for the watchdog thread under load); the timers are unref'd (they keep no process
 * alive), and a check finding nothing open does nothing.
 *
 * "Started to be inspected": `--inspect`, `--inspect-brk` or `--inspect-wait` (with or without
 * `=[host:]port`) in `process.execArgv` or in `NODE_OPTIONS`. `--inspect-port` alone opens
 * nothing (it only says where a SIGUSR1 would), so it does not count. Nor is an inspector
 * closed that a preload opened on purpose ({@link keepsInspector}): VS Code's auto-attach and
 * JavaScript Debug Terminal run `NODE_OPTIONS=--require <bootloader>`, which calls
 * `inspector.open()` and sets `VSCODE_INSPECTOR_OPTIONS`; `ADCP_GATEWAY_KEEP_INSPECTOR=1` says
 * so for any other (review 31, finding 3: the developer's debugging session was cut at
 * start-up). Node reports the same `process.debugPort` either way, so the line says what is
 * known: an inspector the process was not started with, not that a SIGUSR1 opened it.
 *
 * Node's `inspector.close()` closes the port and ends a debugger session attached to it (its
 * WebSocket is closed), returning within tens of milliseconds (Node 20.20.2: 6 to 95 ms with a
 * session attached and its Runtime and Debugger domains enabled): whoever attached before can
 * already have run any code in the process.
 *
 * Only Node's own modules, and only as given: the bin imports this before the gateway loads
 * (src/main.ts), and `node:inspector` is imported by the bin only where Node has an inspector
 * (`process.features.inspector`: a build without one throws on importing it).
 */

/** What of `node:inspector` this needs. */
export interface InspectorControl {
  url(): string | undefined;
  close(): void;
}

/** The variable that keeps an inspector a preload opened (`1`; any other value does not). */
export const KEEP_INSPECTOR_ENV = 'ADCP_GATEWAY_KEEP_INSPECTOR';

/** When the check is made again after the first, besides the next turn of the event loop (ms). */
export const RECHECK_AFTER_MS: readonly number[] = [100, 1000];

/** The flags that start Node inspected (not `--inspect-port`, not `--inspect-publish-uid`). */
const INSPECT_FLAG = /^--inspect(?:-brk|-wait)?(?:=|$)/;

/** Whether the process was started to be inspected: see the module's comment. */
export function startedToBeInspected(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  if (execArgv.some((arg) => INSPECT_FLAG.test(arg))) return true;
  return (nodeOptions ?? '').split(/\s+/).some((arg) => INSPECT_FLAG.test(arg.replace(/^["']/, '')));
}

/** Whether `env` asks to keep an inspector a preload opened: `ADCP_GATEWAY_KEEP_INSPECTOR=1`, or `VSCODE_INSPECTOR_OPTIONS` set (not empty: VS Code's debugger). */
export function keepsInspector(env: NodeJS.ProcessEnv): boolean {
  return env[KEEP_INSPECTOR_ENV] === '1' || (env.VSCODE_INSPECTOR_OPTIONS ?? '') !== '';
}

/** The warning line's text (without its newline). */
export function inspectorClosedLine(url: string): string {
  let where = url;
  try {
    where = new URL(url).host; // not the session's id
  } catch {
    // as Node wrote it
  }
  return (
    `adcp-buyer-gateway: warning: closed Node's inspector on ${where}, an inspector this process was not started with ` +
    `(a SIGUSR1 during Node's start-up opens one, as can a preload); to debug, start with node --inspect, or set ${KEEP_INSPECTOR_ENV}=1 to keep one a preload opens`
  );
}

/**
 * Closes `inspector` when it is open, the process was not started to be inspected and `env`
 * does not ask to keep it ({@link keepsInspector}), writing {@link inspectorClosedLine} through
 * `write`. Returns whether it closed it.
 */
export function closeUnaskedInspector(
  inspector: InspectorControl,
  write: (text: string) => void = (text) => process.stderr.write(text),
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const url = inspector.url();
  if (url === undefined || startedToBeInspected(execArgv, env.NODE_OPTIONS) || keepsInspector(env)) return false;
  inspector.close();
  write(`${inspectorClosedLine(url)}\n`);
  return true;
}

/** The inspectors already guarded: a second call does nothing. */
const guarded = new WeakSet<InspectorControl>();

/**
 * {@link closeUnaskedInspector} now, once the event loop has turned and after each of
 * {@link RECHECK_AFTER_MS} (unref'd: no handle keeps the process alive). Idempotent.
 */
export function guardAgainstUnaskedInspector(inspector: InspectorControl, write?: (text: string) => void): void {
  if (guarded.has(inspector)) return;
  guarded.add(inspector);
  const check = (): void => void closeUnaskedInspector(inspector, write);
  check();
  setImmediate(check).unref();
  for (const ms of RECHECK_AFTER_MS) setTimeout(check, ms).unref();
}
