/**
 * `npm test`'s `pretest` (after scripts/build-if-stale.ts) and `npm run build:test`: compiles
 * src/ and test/ (all of src/: src/config/reload-worker.ts is a worker's entry, which no module
 * imports), and what the tests import (scripts/, bench/, examples/), into dist-test/ (scripts/repo-root.ts `TEST_BUILD_DIR`, gitignored), the
 * repository's layout one directory down, with tsconfig.test.json, so that `npm test` runs
 * plain `node --test dist-test/test/**\/*.test.js` (scripts/run-tests.ts): a test process that imports the gateway
 * and the MCP SDK took ~1.84 s of CPU through tsx (which compiles every module it loads, in
 * each of the ~410 test processes) and ~0.81 s compiled.
 *
 * The compile is `tsc -p tsconfig.test.json`: emit only (`noCheck`: `npm run typecheck` checks
 * the types; a syntax error still fails it, and then `npm test` with exit 1 before any test
 * runs) and incremental (dist-test/.tsbuildinfo): only files whose text changed are emitted
 * again (tsc compares each file's hash with the one recorded, so a file restored with an old
 * mtime is seen; `tsc -b` compares mtimes and would miss it). ~9 s of CPU from nothing, ~6 s
 * when nothing changed (tsc still reads and parses every file).
 *
 * tsc does not look at the outputs: when the output of a file it compiles (src/, test/, or one
 * they import from scripts/, bench/, examples/, as its record lists them) is still missing after
 * the compile (removed by hand from dist-test/), the record (dist-test/.tsbuildinfo) is removed
 * and everything is emitted again. Then outputs whose source is gone (a test file deleted or
 * renamed) are removed, so that no compiled test runs, and no compiled module is imported,
 * without its source.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isEntryPoint } from '../src/entry-point.js';
import { repoRoot, TEST_BUILD_DIR } from './repo-root.js';

const ROOT = repoRoot(import.meta.url, 1);

/** The tsc record of the last compile, relative to the root (tsconfig.test.json `tsBuildInfoFile`). */
export const TEST_BUILD_INFO = `${TEST_BUILD_DIR}/.tsbuildinfo`;

/**
 * The files tsc compiled into `root`/dist-test whose output is not there (paths relative to
 * `root`, `/`-separated, sorted), e.g. `test/unit/new.test.ts` or `scripts/node-binary.ts`
 * removed by hand from dist-test/scripts. The files are those under src/ and test/
 * (tsconfig.test.json's `include`) and those of tsc's program as its record of the last compile
 * lists them ({@link compiledSources}): what the tests import from scripts/, bench/, examples/.
 */
export function missingOutputs(root: string): string[] {
  const sources = new Set([...filesUnder(root, 'src', '.ts'), ...filesUnder(root, 'test', '.ts'), ...compiledSources(root)]);
  return [...sources].filter((path) => !path.endsWith('.d.ts') && !existsSync(join(root, TEST_BUILD_DIR, path.replace(/\.ts$/, '.js')))).sort();
}

/**
 * The `.ts` files (not `.d.ts`) under `root`, outside node_modules/, of tsc's program as the
 * record of the last compile ({@link TEST_BUILD_INFO}) lists them, its `fileNames`: paths
 * relative to the record's directory, with the lib and @types files. Each is emitted into
 * dist-test/ (tsc emits every file of its program but those from node_modules/ and .d.ts
 * files). None when there is no record yet; an error when the record lists no files (another
 * TypeScript's form of it: test/unit/build-test-misses-deleted-scripts-output.test.ts compiles
 * a scratch project with the installed one).
 */
export function compiledSources(root: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(root, TEST_BUILD_INFO), 'utf8');
  } catch {
    return [];
  }
  let fileNames: unknown;
  try {
    fileNames = (JSON.parse(text) as { fileNames?: unknown }).fileNames;
  } catch {
    fileNames = undefined;
  }
  if (!Array.isArray(fileNames) || !fileNames.every((name) => typeof name === 'string')) {
    throw new Error(`${TEST_BUILD_INFO} lists no fileNames (the files of tsc's program): scripts/build-tests.ts cannot tell which outputs dist-test/ should hold`);
  }
  return fileNames
    .map((name) => relative(root, resolve(root, TEST_BUILD_DIR, name)).split(sep).join('/'))
    .filter((path) => !path.startsWith('../') && !isAbsolute(path) && !path.split('/').includes('node_modules') && path.endsWith('.ts') && !path.endsWith('.d.ts'));
}

/**
 * The `.js` files under `root`/dist-test without their `.ts` source under `root` (paths
 * relative to `root`, `/`-separated), e.g. `dist-test/test/unit/gone.test.js` once
 * test/unit/gone.test.ts was deleted.
 */
export function orphanedOutputs(root: string): string[] {
  if (!existsSync(join(root, TEST_BUILD_DIR))) return [];
  return filesUnder(root, TEST_BUILD_DIR, '.js').filter((path) => !existsSync(join(root, path.slice(TEST_BUILD_DIR.length + 1).replace(/\.js$/, '.ts'))));
}

/** The files under `root`/`dir`, at any depth, whose names end with `suffix` (paths relative to `root`, `/`-separated). */
export function filesUnder(root: string, dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(root, path, suffix));
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out;
}

/** `tsc -p tsconfig.test.json` in `root`; false (tsc's errors on stderr, one line of ours) when it failed. */
function compile(root: string): boolean {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.test.json'], { cwd: root, stdio: 'inherit' });
  if (run.status === 0) return true;
  process.stderr.write(`tsc -p tsconfig.test.json failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): npm test runs the compiled tests, so the tests do not run\n`);
  return false;
}

/**
 * Compiles `root` (the repository, or a scratch tree with its own tsconfig.test.json) into its
 * dist-test/ as described above; false when tsc failed. Our progress lines go to `write`.
 */
export function buildTests(root: string, write: (line: string) => void = (line) => process.stdout.write(line)): boolean {
  if (!compile(root)) return false;
  const missing = missingOutputs(root);
  if (missing.length > 0) {
    write(`${TEST_BUILD_DIR}/ lacks the output of ${missing[0]}${missing.length > 1 ? ` and ${missing.length - 1} more` : ''}: compiling everything\n`);
    rmSync(join(root, TEST_BUILD_INFO), { force: true });
    if (!compile(root)) return false;
  }
  const orphans = orphanedOutputs(root);
  for (const path of orphans) rmSync(join(root, path));
  const removed = orphans.length === 0 ? '' : `, ${orphans.length} without a source removed`;
  write(`tests compiled into ${TEST_BUILD_DIR}/ (tsconfig.test.json${removed})\n`);
  return true;
}

if (isEntryPoint(import.meta.url) && !buildTests(ROOT)) process.exitCode = 1;
