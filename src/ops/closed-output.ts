/**
 * The CLI's stdout and stderr when their reader leaves early.
 *
 * A reader that stops before the text ends (`adcp-buyer-gateway --help | grep -q Usage`,
 * `--check-config | head -3`) closes the pipe, and the next write fails with EPIPE. Node
 * reports that as an `error` event on `process.stdout`; unhandled, it crashed the CLI with a
 * stack trace and exit 1 (reported failure: a new user's trial, 2026-12-02: `--help` piped to
 * `grep -q` 3 runs in 10, `--check-config` of a 600-agent config piped to `head -3` 5 in 5).
 *
 * With `keepExitCodeOnClosedOutput` installed:
 * - EPIPE: the rest of that stream's text is dropped and the exit code stays the command's
 *   own (0 for a valid config), like any CLI whose reader had what it wanted.
 * - Any other write error (ENOSPC on /dev/full, EIO, ...): the text is lost, so the exit code
 *   becomes `failureCode` and, when the failing stream is stdout, one line on stderr says why.
 *
 * The serving gateway's log lines do not go through `process.stdout` (see
 * observability/log-destination.ts); this only guards the CLI's own text.
 */

let installed = false;

/** Installs the handlers on `process.stdout` and `process.stderr` (once per process). */
export function keepExitCodeOnClosedOutput(failureCode: number): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') return;
      process.exitCode = failureCode;
      if (stream === process.stdout && !process.stderr.destroyed) {
        process.stderr.write(`adcp-buyer-gateway: could not write to stdout: ${err.code ?? err.message}\n`);
      }
    });
  }
}
