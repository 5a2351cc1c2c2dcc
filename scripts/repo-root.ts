/**
 * The repository's root directory as seen from a module of it, run from source (through tsx:
 * `scripts/x.ts`, `test/helpers/x.ts`) or compiled for `npm test` into {@link TEST_BUILD_DIR}
 * (tsconfig.test.json, scripts/build-tests.ts: `dist-test/scripts/x.js`,
 * `dist-test/test/helpers/x.js`), whose tree is the repository's one directory further down.
 * The one place the scripts and tests the suite imports find the root (docs/, package.json,
 * test/vectors/, `.cache/`, the .ts sources they spawn through tsx), never from a path
 * relative to their own file, which would name dist-test/ once compiled.
 */
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where tsconfig.test.json compiles src/, test/ and what the tests import (gitignored), relative to the root. */
export const TEST_BUILD_DIR = 'dist-test';

/**
 * The root for the module at `moduleUrl` (its `import.meta.url`), `depth` directories below the
 * root in the source tree (1 for scripts/x.ts, 2 for test/helpers/x.ts). A compiled module
 * (`.js`) under {@link TEST_BUILD_DIR} is one more directory down. E.g.
 * `repoRoot('file:///r/dist-test/test/helpers/repo.js', 2)` is `/r`, as is
 * `repoRoot('file:///r/test/helpers/repo.ts', 2)`.
 */
export function repoRoot(moduleUrl: string, depth: number): string {
  const dir = resolve(dirname(fileURLToPath(moduleUrl)), ...Array<string>(depth).fill('..'));
  return moduleUrl.endsWith('.js') && basename(dir) === TEST_BUILD_DIR ? dirname(dir) : dir;
}
