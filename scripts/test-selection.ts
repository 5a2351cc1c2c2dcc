/**
 * What `npm test -- <args>` runs (scripts/run-tests.ts): the args split into node's options and
 * the test files they name.
 *
 * An arg that starts with `-` is an option, passed on to node; so is the arg after one of
 * {@link OPTIONS_WITH_VALUE} given without `=` (`--test-name-pattern resume`). Any other arg names
 * one test file: its source, `test/.../X.test.ts`, or its compiled file,
 * `dist-test/test/.../X.test.js` (relative to the root or absolute; `./` allowed). With no file
 * named, every test file runs. A name that is neither (no such test, a directory, another
 * option's value given without `=`) is refused.
 *
 * Why (hostile trial 30, L4): the args went to node before the whole suite's files, so
 * `npm test -- test/unit/lone-surrogate.test.ts` ran all ~430 files and the named one again
 * (test/unit/npm-test-file-args-run-whole-suite.test.ts).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { TEST_BUILD_DIR } from './repo-root.js';

/**
 * node's options (20 to 24) that take a value, which may follow as the next arg: those of the
 * test runner and of module loading. Any other option's value goes after `=`.
 */
export const OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set([
  '--test-name-pattern',
  '--test-skip-pattern',
  '--test-reporter',
  '--test-reporter-destination',
  '--test-concurrency',
  '--test-timeout',
  '--test-shard',
  '--test-isolation',
  '--experimental-test-isolation',
  '--test-global-setup',
  '--test-coverage-include',
  '--test-coverage-exclude',
  '--test-coverage-branches',
  '--test-coverage-functions',
  '--test-coverage-lines',
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--conditions',
  '-C',
  '--env-file',
  '--env-file-if-exists',
  '--watch-path',
]);

export type TestSelection = { options: string[]; files: string[] } | { error: string };

/**
 * `args` (after `npm test --`) against `testFiles`, the compiled test files (compiledTestFiles:
 * `dist-test/test/.../X.test.js`, relative to `root`): the options in order, and the files to
 * run, each once in the order named (every test file when none is named); or the one-line
 * error for the first arg that names no test file.
 */
export function selectTests(root: string, args: readonly string[], testFiles: readonly string[]): TestSelection {
  const options: string[] = [];
  const named: string[] = [];
  const known = new Set(testFiles);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('-')) {
      options.push(arg);
      if (OPTIONS_WITH_VALUE.has(arg)) {
        // Its value is the next argument; with none, node would take the first test file for it
        // and, no file named, run every file it finds itself (hostile trial 31, L1: exit 0 with
        // the named failing test never run).
        if (i + 1 >= args.length) return { error: `npm test: ${arg} needs a value (${arg}=value, or the value as the next argument)` };
        options.push(args[++i]!);
      }
      continue;
    }
    const file = compiledPath(root, arg);
    if (file === undefined || !known.has(file)) {
      return {
        error: `npm test: ${JSON.stringify(arg)} is not a test file (test/.../X.test.ts or ${TEST_BUILD_DIR}/test/.../X.test.js); an option's value goes after = (--option=value)`,
      };
    }
    if (!named.includes(file)) named.push(file);
  }
  return { options, files: named.length > 0 ? named : [...testFiles] };
}

/** The compiled path, relative to `root` with `/`, for `arg` naming a test source or compiled test file; undefined for anything else. */
function compiledPath(root: string, arg: string): string | undefined {
  const abs = resolve(root, arg);
  const rel = relative(root, abs);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  const path = rel.split(sep).join('/');
  if (path.startsWith('test/') && path.endsWith('.test.ts')) return `${TEST_BUILD_DIR}/${path.replace(/\.ts$/, '.js')}`;
  if (path.startsWith(`${TEST_BUILD_DIR}/test/`) && path.endsWith('.test.js')) return path;
  return undefined;
}
