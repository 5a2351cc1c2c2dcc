/**
 * Hostile trial 27, L2: a test file whose name holds a space broke `npm test`: package.json's
 * `test` script listed the compiled files as `$(find test -name '*.test.ts' | sort | sed ...)`,
 * which the shell split at the space, so node --test looked for `dist-test/test/unit/a` and
 * `b.test.js` and failed. The script is run here as npm runs it (test/helpers/npm-test-tree.ts)
 * on a scratch tree with two compiled test files, one named with a space.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { compiledTest, npmTestTree, specResults } from '../helpers/npm-test-tree.js';

describe('test-file-name-with-space-breaks-npm-test', () => {
  const tree = npmTestTree('npm-test-space-', {
    'test/unit/a b.test.ts': '',
    'test/unit/fails.test.ts': '',
    'dist-test/test/unit/a b.test.js': compiledTest('spaced'),
    'dist-test/test/unit/fails.test.js': compiledTest('fails', false),
  });
  after(() => tree.remove());

  test('the file named with a space runs; a failing test fails the run with exit 1', () => {
    const run = tree.npmTest('');
    assert.deepEqual(specResults(run.stdout), ['✔ spaced', '✖ fails', 'ℹ tests 2', 'ℹ pass 1', 'ℹ fail 1', '✖ failing tests:', '✖ fails']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 1);
  });

  test("args after `npm test --` go to node --test: --test-name-pattern=spaced skips the failing test, exit 0", () => {
    const run = tree.npmTest(" '--test-name-pattern=spaced'");
    assert.deepEqual(specResults(run.stdout), ['✔ spaced', 'ℹ tests 2', 'ℹ pass 1', 'ℹ fail 0']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 0);
  });
});
