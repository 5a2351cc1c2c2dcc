/**
 * Hostile trial 27, L2: a test file whose name holds a space broke `npm test`: package.json's
 * `test` script listed the compiled files as `$(find test -name '*.test.ts' | sort | sed ...)`,
 * which the shell split at the space, so node --test looked for `dist-test/test/unit/a` and
 * `b.test.js` and failed. The script is run here as npm runs it (`sh -c`, in the package's
 * directory, extra args appended) on a scratch tree with two compiled test files, one named with
 * a space (no compile: the tests' outputs are written by hand; scripts/ and node_modules/ are
 * the repository's, linked).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { REPO } from '../helpers/repo.js';

describe('test-file-name-with-space-breaks-npm-test', () => {
  const root = mkdtempSync(join(tmpdir(), 'npm-test-space-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const script = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.test;
  assert.ok(script !== undefined);
  write('package.json', '{"type":"module"}\n');
  symlinkSync(join(REPO, 'scripts'), join(root, 'scripts'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  write('test/unit/a b.test.ts', '');
  write('test/unit/fails.test.ts', '');
  write('dist-test/test/unit/a b.test.js', "import { test } from 'node:test';\ntest('spaced', () => {});\n");
  write('dist-test/test/unit/fails.test.js', "import { test } from 'node:test';\ntest('fails', () => { throw new Error('no'); });\n");

  /** `npm test -- ...extra` in the scratch tree: the script through sh, the args appended (npm quotes them). */
  const npmTest = (extra: string): { status: number | null; stdout: string; stderr: string } => {
    // Without NODE_TEST_CONTEXT, which node --test sets for this file: a node --test run with it
    // reports to this one's runner, not as spec lines.
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
    delete env.NODE_TEST_CONTEXT;
    const run = spawnSync('sh', ['-c', `${script}${extra}`], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };
  const results = (stdout: string): string[] => stdout.split('\n').filter((line) => /^(✔|✖|ℹ (tests|pass|fail) )/.test(line)).map((line) => line.replace(/ \(\d+(\.\d+)?ms\)$/, ''));

  test('the file named with a space runs; a failing test fails the run with exit 1', () => {
    const run = npmTest('');
    assert.deepEqual(results(run.stdout), ['✔ spaced', '✖ fails', 'ℹ tests 2', 'ℹ pass 1', 'ℹ fail 1', '✖ failing tests:', '✖ fails']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 1);
  });

  test("args after `npm test --` go to node --test: --test-name-pattern=spaced skips the failing test, exit 0", () => {
    const run = npmTest(" '--test-name-pattern=spaced'");
    assert.deepEqual(results(run.stdout), ['✔ spaced', 'ℹ tests 2', 'ℹ pass 1', 'ℹ fail 0']);
    assert.equal(run.stderr, '');
    assert.equal(run.status, 0);
  });
});
