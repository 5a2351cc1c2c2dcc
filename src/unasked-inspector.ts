/**
 * Closes Node's inspector when it is open though the process was not started to be inspected:
 * src/main.ts calls it right after the signal listeners are in place.
 *
 * Reported failure (hostile trial 46, item 2): the bin's SIGUSR1 listener (src/stop-signals.ts)
 * keeps Node from opening its inspector from the bin's first statement on, but a SIGUSR1 in the
 * tens of milliseconds of Node's own start-up before that (up to 80 ms on Node 20 at load 6)
 * still opened it, an unauthenticated debugging port on 127.0.0.1:9229, for the life of the
 * process (`node --disable-sigusr1`, Node >= 22.14, closes that window; Node 20 has no such
 * flag). Now the bin closes it then, and writes one warning line on stderr (where Node wrote its
 * `Debugger listening on ...`; the config's logger is not made yet)
 * (test/regressions/sigusr1-startup-window-inspector-left-open.test.ts).
 *
 * "Started to be inspected": `--inspect`, `--inspect-brk` or `--inspect-wait` (with or without
 * `=[host:]port`) in `process.execArgv` or in `NODE_OPTIONS`. `--inspect-port` alone opens
 * nothing (it only says where a SIGUSR1 would), so it does not count.
 *
 * Node's `inspector.close()` returns at once when no debugger session is attached (a bare TCP
 * connection included); with one attached it waits until that session ends (checked on Node
 * 20): whoever attached in that window can already run any code in the process.
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

/** The flags that start Node inspected (not `--inspect-port`, not `--inspect-publish-uid`). */
const INSPECT_FLAG = /^--inspect(?:-brk|-wait)?(?:=|$)/;

/** Whether the process was started to be inspected: see the module's comment. */
export function startedToBeInspected(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  if (execArgv.some((arg) => INSPECT_FLAG.test(arg))) return true;
  return (nodeOptions ?? '').split(/\s+/).some((arg) => INSPECT_FLAG.test(arg.replace(/^["']/, '')));
}

/** The warning line's text (without its newline). */
export function inspectorClosedLine(url: string): string {
  let where = url;
  try {
    where = new URL(url).host; // not the session's id
  } catch {
    // as Node wrote it
  }
  return `adcp-buyer-gateway: warning: closed Node's inspector on ${where}: it opened during Node's start-up (a SIGUSR1 before the gateway listened for it), not by --inspect; to debug, start with node --inspect`;
}

/**
 * Closes `inspector` when it is open and the process was not started to be inspected, writing
 * {@link inspectorClosedLine} through `write`. Returns whether it closed it.
 */
export function closeUnaskedInspector(
  inspector: InspectorControl,
  write: (text: string) => void = (text) => process.stderr.write(text),
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const url = inspector.url();
  if (url === undefined || startedToBeInspected(execArgv, nodeOptions)) return false;
  inspector.close();
  write(`${inspectorClosedLine(url)}\n`);
  return true;
}
