/**
 * `npm test` runs the tests compiled into dist-test/ (scripts/build-tests.ts), and they find the
 * repository root through scripts/repo-root.ts from either tree: `repoRoot` for a source and a
 * compiled module, `REPO` (test/helpers/repo.ts) as this very file sees it, and the build's
 * bookkeeping (`missingOutputs`, `compiledSources`, `orphanedOutputs`) on a scratch tree.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { compiledSources, missingOutputs, orphanedOutputs } from '../../scripts/build-tests.js';
import { repoRoot, TEST_BUILD_DIR } from '../../scripts/repo-root.js';
import { REPO } from '../helpers/repo.js';

describe('repoRoot', () => {
  test('a source module and its compiled copy under dist-test/ name the same root', () => {
    assert.equal(TEST_BUILD_DIR, 'dist-test');
    assert.equal(repoRoot('file:///r/test/helpers/repo.ts', 2), '/r');
    assert.equal(repoRoot('file:///r/dist-test/test/helpers/repo.js', 2), '/r');
    assert.equal(repoRoot('file:///r/scripts/node-binary.ts', 1), '/r');
    assert.equal(repoRoot('file:///r/dist-test/scripts/node-binary.js', 1), '/r');
    assert.equal(repoRoot('file:///my%20checkout/scripts/build-wasm.ts', 1), '/my checkout');
  });

  test('a .ts source inside a directory named dist-test stays where it is', () => {
    assert.equal(repoRoot('file:///r/dist-test/test/helpers/repo.ts', 2), '/r/dist-test');
  });

  test('no test names a repository file relative to its own import.meta.url (it would name dist-test/ once compiled)', () => {
    const files = execFileSync('git', ['ls-files', 'test'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter((f) => f.endsWith('.ts'));
    const offenders = files.filter((f) => /new URL\(\s*['"`]\.\.?\/[^'"`]*['"`]\s*,\s*import\.meta\.url/.test(readFileSync(join(REPO, f), 'utf8')));
    assert.deepEqual(offenders, [], 'use join(REPO, ...) (test/helpers/repo.ts)');
  });

  test('REPO, from this file run from source or compiled, is the checkout: its package.json and this source', () => {
    assert.equal((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string }).name, 'adcp-buyer-gateway');
    assert.ok(existsSync(join(REPO, 'test/unit/test-build.test.ts')));
  });
});

describe('the test build bookkeeping (scripts/build-tests.ts)', () => {
  const root = mkdtempSync(join(tmpdir(), 'test-build-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), '');
  };

  test('missingOutputs: src/ and test/ sources (not .d.ts) without their dist-test/ .js; orphanedOutputs: dist-test/ .js without a source', () => {
    for (const path of ['test/unit/a.test.ts', 'test/unit/b.test.ts', 'test/helpers/h.ts', 'test/types.d.ts', 'src/x.ts', 'src/config/worker.ts', 'src/types.d.ts']) write(path);
    for (const path of ['dist-test/test/unit/a.test.js', 'dist-test/test/helpers/h.js', 'dist-test/src/x.js', 'dist-test/src/gone.js', 'dist-test/test/unit/gone.test.js']) write(path);
    assert.deepEqual(missingOutputs(root), ['src/config/worker.ts', 'test/unit/b.test.ts']);
    assert.deepEqual(orphanedOutputs(root).sort(), ['dist-test/src/gone.js', 'dist-test/test/unit/gone.test.js']);
  });

  test("missingOutputs: also the files of tsc's program its record lists (fileNames, relative to dist-test/) under the root, not .d.ts, not in node_modules/", () => {
    for (const path of ['scripts/s.ts', 'bench/b.ts', 'dist-test/bench/b.js']) write(path);
    const fileNames = ['../../lib/lib.es5.d.ts', '../node_modules/@types/node/index.d.ts', '../node_modules/pkg/src/index.ts', '../src/x.ts', '../scripts/s.ts', '../bench/b.ts', '../test/types.d.ts', '../test/unit/a.test.ts'];
    writeFileSync(join(root, 'dist-test/.tsbuildinfo'), JSON.stringify({ fileNames, version: '5.9.3' }));
    assert.deepEqual(compiledSources(root), ['src/x.ts', 'scripts/s.ts', 'bench/b.ts', 'test/unit/a.test.ts']);
    assert.deepEqual(missingOutputs(root), ['scripts/s.ts', 'src/config/worker.ts', 'test/unit/b.test.ts']);
  });

  test('a record without fileNames (another form of it) is an error, not an empty list', () => {
    for (const text of ['', '{"version":"9.0.0"}', '{"fileNames":[1]}']) {
      writeFileSync(join(root, 'dist-test/.tsbuildinfo'), text);
      assert.throws(() => missingOutputs(root), { message: "dist-test/.tsbuildinfo lists no fileNames (the files of tsc's program): scripts/build-tests.ts cannot tell which outputs dist-test/ should hold" });
    }
  });

  test('no dist-test/ yet: every source is missing, nothing is orphaned', () => {
    rmSync(join(root, 'dist-test'), { recursive: true });
    assert.deepEqual(missingOutputs(root), ['src/config/worker.ts', 'src/x.ts', 'test/helpers/h.ts', 'test/unit/a.test.ts', 'test/unit/b.test.ts']);
    assert.deepEqual(orphanedOutputs(root), []);
  });
});
