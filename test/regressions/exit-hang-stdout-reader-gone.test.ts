/**
 * Regression from a new user's report: "the gateway can hang forever at exit when whatever
 * reads its stdout dies during shutdown; SIGTERM and SIGINT are then ignored, only SIGKILL
 * ends it" (2 runs in 15). pino 10's default destination is an async sonic-boom 4, flushed at
 * exit with `flushSync()`, which retried every write error, EPIPE included, 100 ms apart,
 * forever. The logger now writes to src/observability/log-destination.ts's destination: its
 * exit flush gives up on EPIPE, and on EAGAIN after ~2 s without progress.
 *
 * Deterministic reproduction: the child's stdout is a pipe whose read end this process
 * closes right after the spawn, before the child writes anything; the child logs 3 lines
 * and calls `process.exit(0)` in the same tick (test/support/log-then-exit.ts), so the exit
 * flush meets EPIPE before the async write's error is delivered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PROCESS_TIMEOUT_MS, REPO, spawnTsx, type ChildProcess } from '../helpers/process.js';

const SCRIPT = join(REPO, 'test/support/log-then-exit.ts');
/** Far more than the child needs (tsx start-up and a ~2 s bounded exit flush included, on a loaded machine): past it, the child hung at exit. */
const EXIT_BOUND_MS = PROCESS_TIMEOUT_MS;
const TEST_OPTIONS = { timeout: EXIT_BOUND_MS + 10_000 };

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the child script with `args`; `reader` decides what happens to its stdout's read end:
 * `gone` (closed at once), `stuck` (kept open, never read), `alive` (read to the end).
 * Rejects if the child has not exited after `EXIT_BOUND_MS` (it is then SIGKILLed).
 */
async function run(args: readonly string[], reader: 'gone' | 'stuck' | 'alive'): Promise<Run> {
  const child: ChildProcess = spawnTsx(SCRIPT, args);
  let stdout = '';
  let stderr = '';
  if (reader === 'gone') child.stdout.destroy();
  else if (reader === 'stuck') child.stdout.pause();
  else child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the process hung at exit: still running ${EXIT_BOUND_MS} ms after the spawn (SIGKILLed); stderr: ${stderr}`));
    }, EXIT_BOUND_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
  if (reader === 'stuck') child.stdout.destroy();
  await closed;
  return { code, signal, stdout, stderr };
}

/** The line `createLogger('info')` writes for `logger.info({ n }, 'line <n>')`, its time replaced by `T`. */
const expectedLine = (n: number): string => `{"level":30,"time":"T","service":"adcp-buyer-gateway","n":${n},"msg":"line ${n}"}`;

/** The output's lines, each time checked for shape then replaced by `T`. */
function lines(stdout: string): string[] {
  const all = stdout.split('\n');
  assert.equal(all.pop(), '', 'the output ends with a newline');
  return all.map((line) => {
    assert.match(line, /"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/);
    return line.replace(/"time":"[^"]*"/, '"time":"T"');
  });
}

test('the gateway hangs at exit when its stdout reader is gone: it now exits with the code it was given', TEST_OPTIONS, async () => {
  const r = await run(['3', 'now'], 'gone');
  // 0: the code the script passed to process.exit; log lines lost with their reader are not a failure of the process.
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, r.stderr);
  assert.equal(r.stderr, '', 'no error, warning or stack about the lost lines');
});

test('a reader that is alive but never reads holds the exit only for the bounded flush: exit code 0', TEST_OPTIONS, async () => {
  // 2,000 lines of ~1 KiB: far more than the pipe and the reader's buffer hold, far less than the 16 MiB bound.
  const r = await run(['2000', 'now', '1000'], 'stuck');
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, r.stderr);
  assert.equal(r.stderr, '');
});

test('with its reader alive, the lines reach stdout whole and in order', TEST_OPTIONS, async () => {
  const r = await run(['3', 'after-flush'], 'alive');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout), [1, 2, 3].map(expectedLine));
});

test('with its reader alive, the exit flush writes out the lines still buffered at process.exit', TEST_OPTIONS, async () => {
  const r = await run(['3', 'now'], 'alive');
  assert.equal(r.code, 0, r.stderr);
  const out = lines(r.stdout);
  // Lines 2 and 3 wait in the buffer behind line 1's async write and are written by the
  // synchronous exit flush, in order. Line 1's write is in flight on libuv's thread pool
  // at the exit: whether it lands before or after them is a race of the async mode, so it
  // is only checked to be whole and at most once.
  assert.deepEqual(
    out.filter((l) => l !== expectedLine(1)),
    [2, 3].map(expectedLine),
  );
  assert.ok(out.filter((l) => l === expectedLine(1)).length <= 1, r.stdout);
});
