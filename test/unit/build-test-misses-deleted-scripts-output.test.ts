/**
 * Hostile trial 27, L1: `npm run build:test` (scripts/build-tests.ts) did not compile again a
 * file removed by hand from dist-test/scripts, dist-test/bench or dist-test/examples: tsc's
 * incremental record (dist-test/.tsbuildinfo) said it was emitted, and the check for missing
 * outputs looked only at src/ and test/, so a test importing it failed with ERR_MODULE_NOT_FOUND
 * until dist-test/ was removed. The check now covers every file of tsc's program, as its record
 * lists them. On a scratch project of four small files (tsc runs three times, ~1.5 s of CPU).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { buildTests, missingOutputs } from '../../scripts/build-tests.js';

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['es5'],
    types: [],
    noCheck: true,
    incremental: true,
    rootDir: '.',
    outDir: 'dist-test',
    tsBuildInfoFile: 'dist-test/.tsbuildinfo',
  },
  include: ['src', 'test'],
};

describe('build-test-misses-deleted-scripts-output', () => {
  const root = mkdtempSync(join(tmpdir(), 'build-test-misses-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const imported = ['dist-test/scripts/s.js', 'dist-test/bench/b.js', 'dist-test/examples/e.js'];

  test('an output removed by hand from dist-test/scripts, bench and examples is compiled again', () => {
    write('package.json', '{"type":"module"}\n');
    write('tsconfig.test.json', JSON.stringify(TSCONFIG));
    write('src/x.ts', 'export const x = 1;\n');
    write('scripts/s.ts', 'export const s = 2;\n');
    write('bench/b.ts', 'export const b = 3;\n');
    write('examples/e.ts', 'export const e = 4;\n');
    write('test/unit/a.test.ts', "import { s } from '../../scripts/s.js';\nimport { b } from '../../bench/b.js';\nimport { e } from '../../examples/e.js';\nexport const sum = s + b + e;\n");
    const lines: string[] = [];
    assert.equal(buildTests(root, (line) => lines.push(line)), true);
    assert.deepEqual(lines, ['tests compiled into dist-test/ (tsconfig.test.json)\n']);
    const before = imported.map((path) => readFileSync(join(root, path), 'utf8'));
    assert.equal(before[0], 'export const s = 2;\n');
    assert.deepEqual(missingOutputs(root), []);

    for (const path of imported) rmSync(join(root, path));
    assert.deepEqual(missingOutputs(root), ['bench/b.ts', 'examples/e.ts', 'scripts/s.ts']);
    lines.length = 0;
    assert.equal(buildTests(root, (line) => lines.push(line)), true);
    assert.deepEqual(lines, ['dist-test/ lacks the output of bench/b.ts and 2 more: compiling everything\n', 'tests compiled into dist-test/ (tsconfig.test.json)\n']);
    assert.deepEqual(
      imported.map((path) => (existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : 'missing')),
      before,
    );
  });
});
