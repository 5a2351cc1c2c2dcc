/**
 * `npm test` (after its `pretest`, scripts/build-tests.ts): `node --test --test-concurrency=3
 * --test-reporter=spec <files>` (spec unless the args name a reporter: {@link nodeTestArgs}), the files the compiled tests, `dist-test/X.test.js` for each
 * `X.test.ts` under test/ (sorted), given to node as an argv array: a file whose name holds a
 * space runs (the script's `$(find test ... | sed ...)` was split at it by the shell: hostile
 * trial 27, L2). Args after `npm test --` select (scripts/test-selection.ts): options go to node
 * before the files (e.g. `npm test -- --test-name-pattern=resume`; after them node took them
 * for files), and a test file named (`npm test -- test/unit/x.test.ts`, or its
 * `dist-test/test/unit/x.test.js`) runs alone, not after the whole suite (hostile trial 30,
 * L4); a name that is no test file is refused, one line on stderr, exit 1. The exit code
 * is node's; a signal it dies of is raised again here, and SIGINT, SIGTERM and SIGHUP sent to
 * this process are passed on to it. The root is the working directory, as for the script it
 * replaces: npm runs scripts in the package's directory.
 */
import { spawn } from 'node:child_process';
import { isEntryPoint } from '../src/entry-point.js';
import { filesUnder } from './build-tests.js';
import { TEST_BUILD_DIR } from './repo-root.js';
import { selectTests } from './test-selection.js';

/**
 * node's options before `npm test --`'s options and the files. Three files at once: a full run
 * at two kept the 2-core CI machine about half busy (user + sys 1,254 s over 1,191 s of wall
 * time: the files wait on timers, sockets and the gateways they start), and CI took 865 s of
 * its 15 minutes (stop 53); the suite passed with two runs side by side (four files at once).
 */
export const NODE_TEST_OPTIONS = ['--test', '--test-concurrency=3'];

/** The reporter when `npm test --` names none. */
export const DEFAULT_REPORTER = '--test-reporter=spec';

/**
 * node's argv: {@link NODE_TEST_OPTIONS}, {@link DEFAULT_REPORTER} unless `options` names a
 * reporter (`--test-reporter=X` or `--test-reporter X`), then `options` and `files`. node wants
 * one `--test-reporter-destination` per reporter, so with the default beside a user's reporter
 * (`npm test -- --test-reporter=tap`) it refused to start (ERR_INVALID_ARG_VALUE; hostile
 * trial 31, Info: test/unit/npm-test-reporter-option-refused.test.ts).
 */
export function nodeTestArgs(options: readonly string[], files: readonly string[]): string[] {
  const namesReporter = options.some((o) => o === '--test-reporter' || o.startsWith('--test-reporter='));
  return [...NODE_TEST_OPTIONS, ...(namesReporter ? [] : [DEFAULT_REPORTER]), ...options, ...files];
}

/** The compiled test files for the `.test.ts` files under `root`/test, relative to `root`, sorted by source path: e.g. `dist-test/test/unit/a b.test.js`. */
export function compiledTestFiles(root: string): string[] {
  return filesUnder(root, 'test', '.test.ts')
    .sort()
    .map((path) => `${TEST_BUILD_DIR}/${path.replace(/\.ts$/, '.js')}`);
}

function main(): void {
  const root = process.cwd();
  const selection = selectTests(root, process.argv.slice(2), compiledTestFiles(root));
  if ('error' in selection) {
    process.stderr.write(`${selection.error}\n`);
    process.exitCode = 1;
    return;
  }
  const child = spawn(process.execPath, nodeTestArgs(selection.options, selection.files), { stdio: 'inherit' });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`node --test did not start (${error.message})\n`);
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exitCode = code ?? 1;
  });
}

if (isEntryPoint(import.meta.url)) main();
