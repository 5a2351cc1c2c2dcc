/**
 * Hostile trial 31 (Info): `npm test -- --test-reporter=tap` did not start: scripts/run-tests.ts
 * always gave node `--test-reporter=spec`, and with a second reporter node wants one
 * `--test-reporter-destination` each ("The argument '--test-reporter' must match the number of
 * specified '--test-reporter-destination'", ERR_INVALID_ARG_VALUE, exit 1, nothing run). Now the
 * default reporter is given only when the args name none (run-tests.ts nodeTestArgs).
 *
 * Input: the `test` script run as npm runs it on a scratch tree of one compiled test file
 * (test/helpers/npm-test-tree.ts), with a reporter named both ways; and nodeTestArgs itself.
 * Expected: the named reporter's output alone (TAP's `ok 1 - passes`), exit 0.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { compiledTest, npmTestTree, specResults } from '../helpers/npm-test-tree.js';
import { DEFAULT_REPORTER, NODE_TEST_OPTIONS, nodeTestArgs } from '../../scripts/run-tests.js';

describe('npm-test-reporter-option-refused', () => {
  const tree = npmTestTree('npm-test-reporter-', {
    'test/unit/a.test.ts': '',
    'dist-test/test/unit/a.test.js': compiledTest('passes'),
  });
  after(() => tree.remove());

  for (const [label, extra] of [
    ['--test-reporter=tap', ' --test-reporter=tap'],
    ['--test-reporter tap (the value as the next arg)', ' --test-reporter tap test/unit/a.test.ts'],
  ] as const) {
    test(`${label}: TAP alone, exit 0`, () => {
      const run = tree.npmTest(extra);
      assert.equal(run.stderr, '');
      assert.equal(run.status, 0);
      const lines = run.stdout.split('\n');
      assert.ok(lines.includes('ok 1 - passes'), run.stdout);
      assert.ok(lines.includes('# pass 1'), run.stdout);
      // No spec line beside it.
      assert.deepEqual(specResults(run.stdout), []);
    });
  }

  test('no reporter named: spec, as before', () => {
    const run = tree.npmTest('');
    assert.deepEqual(specResults(run.stdout), ['✔ passes', 'ℹ tests 1', 'ℹ pass 1', 'ℹ fail 0']);
    assert.equal(run.status, 0);
  });

  test('nodeTestArgs: the default reporter only when none is named', () => {
    assert.deepEqual(nodeTestArgs([], ['f.js']), [...NODE_TEST_OPTIONS, DEFAULT_REPORTER, 'f.js']);
    assert.deepEqual(nodeTestArgs(['--test-name-pattern=x'], ['f.js']), [...NODE_TEST_OPTIONS, DEFAULT_REPORTER, '--test-name-pattern=x', 'f.js']);
    assert.deepEqual(nodeTestArgs(['--test-reporter', 'dot'], ['f.js']), [...NODE_TEST_OPTIONS, '--test-reporter', 'dot', 'f.js']);
    assert.deepEqual(nodeTestArgs(['--test-reporter=dot', '--test-reporter-destination=stdout'], []), [
      ...NODE_TEST_OPTIONS,
      '--test-reporter=dot',
      '--test-reporter-destination=stdout',
    ]);
    // A destination alone names no reporter: the default stays (node pairs it with spec).
    assert.deepEqual(nodeTestArgs(['--test-reporter-destination=out.txt'], []), [...NODE_TEST_OPTIONS, DEFAULT_REPORTER, '--test-reporter-destination=out.txt']);
  });
});
