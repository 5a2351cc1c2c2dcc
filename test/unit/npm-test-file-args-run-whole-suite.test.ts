/**
 * Hostile trial 30, L4: `npm test -- test/unit/lone-surrogate.test.ts` (or its compiled
 * `dist-test/test/unit/lone-surrogate.test.js`) ran the whole suite, 433 files, and the named one
 * again: scripts/run-tests.ts put the args after `npm test --` before the full file list. Now an
 * arg that is not an option names the file to run, source or compiled (scripts/test-selection.ts);
 * a name that is no test file is refused, one line on stderr, exit 1, nothing run; options still
 * go to node, a value of one of node's test and module-loading options also as the next arg.
 *
 * Input: the `test` script run as npm runs it on a scratch tree of three compiled test files
 * (test/helpers/npm-test-tree.ts). Expected: node's spec lines for exactly the files named.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { compiledTest, npmTestTree, specResults } from '../helpers/npm-test-tree.js';

const REFUSED_HINT = "(test/.../X.test.ts or dist-test/test/.../X.test.js); an option's value goes after = (--option=value)";

// The cases run side by side (each is an `npm test` of its own, ~2 s mostly waiting on process
// start-up): one after another the file took ~33 s alone, 58 s in a CI run.
describe('npm-test-file-args-run-whole-suite', { concurrency: 4 }, () => {
  const tree = npmTestTree('npm-test-file-args-', {
    'test/unit/a b.test.ts': '',
    'test/unit/fails.test.ts': '',
    'test/regressions/other.test.ts': '',
    'test/unit/helper.ts': '',
    'dist-test/test/unit/a b.test.js': compiledTest('spaced'),
    'dist-test/test/unit/fails.test.js': compiledTest('fails', false),
    'dist-test/test/regressions/other.test.js': compiledTest('other'),
    'dist-test/test/unit/helper.js': '',
    // Compiled, its source gone: no test file.
    'dist-test/test/unit/stale.test.js': compiledTest('stale'),
  });
  after(() => tree.remove());

  const passesAlone = (name: string): string[] => [`✔ ${name}`, 'ℹ tests 1', 'ℹ pass 1', 'ℹ fail 0'];

  for (const [label, arg] of [
    ['its source', "'test/unit/a b.test.ts'"],
    ['its compiled file', "'dist-test/test/unit/a b.test.js'"],
    ['its source after ./', "'./test/unit/a b.test.ts'"],
    ['its source, absolute', `'${tree.root}/test/unit/a b.test.ts'`],
  ]) {
    test(`a file named by ${label}: that file alone runs, exit 0`, async () => {
      const run = await tree.npmTestAsync(` ${arg}`);
      assert.deepEqual(specResults(run.stdout), passesAlone('spaced'));
      assert.equal(run.stderr, '');
      assert.equal(run.status, 0);
    });
  }

  test('the failing file alone: exit 1', async () => {
    const run = await tree.npmTestAsync(' test/unit/fails.test.ts');
    assert.deepEqual(specResults(run.stdout), ['✖ fails', 'ℹ tests 1', 'ℹ pass 0', 'ℹ fail 1', '✖ failing tests:', '✖ fails']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 1);
  });

  test('two files, one named twice (source and compiled): each runs once', async () => {
    const run = await tree.npmTestAsync(" test/regressions/other.test.ts 'dist-test/test/unit/a b.test.js' 'test/unit/a b.test.ts'");
    assert.deepEqual(specResults(run.stdout).sort(), ['ℹ fail 0', 'ℹ pass 2', 'ℹ tests 2', '✔ other', '✔ spaced']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 0);
  });

  test('an option with its value as the next arg, no file: the whole suite, the option applied', async () => {
    const run = await tree.npmTestAsync(' --test-name-pattern spaced');
    assert.deepEqual(specResults(run.stdout), ['✔ spaced', 'ℹ tests 3', 'ℹ pass 1', 'ℹ fail 0']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 0);
  });

  test('an option (both forms) and a file: the file, the option applied', async () => {
    for (const option of [' --test-name-pattern other', " '--test-name-pattern=other'"]) {
      const run = await tree.npmTestAsync(`${option} test/unit/fails.test.ts`);
      assert.deepEqual(specResults(run.stdout), ['ℹ tests 1', 'ℹ pass 0', 'ℹ fail 0'], option);
      assert.equal(run.stderr, '', option);
      assert.equal(run.status, 0, option);
    }
  });

  for (const [arg, shown] of [
    ['test/unit/nope.test.ts', 'test/unit/nope.test.ts'],
    ['dist-test/test/unit/stale.test.js', 'dist-test/test/unit/stale.test.js'],
    ['test/unit/helper.ts', 'test/unit/helper.ts'],
    ['test/unit', 'test/unit'],
    ["'test/unit/a b.test.ts' --title spaced", 'spaced'],
  ]) {
    test(`${arg}: refused, one line on stderr, exit 1, nothing run`, async () => {
      const run = await tree.npmTestAsync(` ${arg}`);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `npm test: ${JSON.stringify(shown)} is not a test file ${REFUSED_HINT}\n`);
      assert.equal(run.status, 1);
    });
  }

  // Hostile trial 31, L1: an option that takes a value, last: node took the first test file for
  // its value and, no file named, ran every file it found (helpers included), exit 0.
  for (const args of [' test/unit/fails.test.ts --test-name-pattern', ' --test-name-pattern', ' test/unit/fails.test.ts --test-concurrency']) {
    test(`${args.trim()}: refused, the option needs a value, exit 1, nothing run`, async () => {
      const run = await tree.npmTestAsync(args);
      const option = args.trim().split(' ').at(-1)!;
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `npm test: ${option} needs a value (${option}=value, or the value as the next argument)\n`);
      assert.equal(run.status, 1);
    });
  }
});
