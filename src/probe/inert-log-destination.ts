/**
 * Where the probe's in-process gateway writes its log: stderr, the operator's terminal, each
 * line made inert there.
 *
 * The gateway's lines are pino JSON, and some carry a seller's text (the SSE parser's
 * complaint about a malformed line quotes the seller's `retry` value or field name, at
 * `debug`). JSON escapes C0 controls (`\u001b`), but DEL, the C1 controls (U+0080..U+009F:
 * U+009B is CSI, U+009D is OSC), format characters (bidi controls such as U+202E,
 * U+2066..U+2069) and U+2028/U+2029 are valid in a JSON string as they are, and reached the
 * terminal raw with `probe --verbose` (a team note;
 * test/regressions/probe-verbose-log-bidi-raw.test.ts). The table already shows a seller's
 * strings escaped (shown-text.ts shownText), `--json` with {@link inertJson}; each log line gets
 * that same {@link inertJson}: those characters written `\uhhhh`, the same JSON value, so a
 * reader parsing the lines gets every string exact. Always, not only on a TTY: what the lines
 * mean does not change, and a redirected stderr is often shown on a terminal later.
 *
 * Cost: one regex pass per line, on the probe's stderr only (the gateway's own `serve` logger
 * writes its lines unchanged). Applied after the logger's secret scrubbing (pino's `streamWrite`
 * hook runs before the destination's `write`), so a secret is matched as written.
 */
import type { DestinationStream } from 'pino';
import { inertJson } from './shown-text.js';

/** `destination` with each line written through {@link inertJson} (a pino line is one JSON text and its LF). */
export function inertLogDestination(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(inertJson(line)) };
}
