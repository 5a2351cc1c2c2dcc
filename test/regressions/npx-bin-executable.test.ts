/**
 * Regression from a new user's trial (2026-12-02): "`npx adcp-buyer-gateway` fails in a
 * clone" (`sh: 1: adcp-buyer-gateway: Permission denied`, exit 127), although README.md and
 * docs/configuration.md say it works after `npm ci`: tsc wrote dist/main.js, the package's
 * `bin`, with mode 0644. The build script now makes it executable.
 *
 * Runs the package's `build:tsc` script into a temporary directory under node_modules (the
 * compile `npm ci`'s `prepare` runs through `npm run build`, with `--outDir`), then the bin
 * file itself as a program: its `#!/usr/bin/env node` line and its mode must make it run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

test('npx adcp-buyer-gateway fails in a clone: the built bin is executable and runs', { timeout: 120_000 }, async () => {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string>; version: string };
  assert.equal(pkg.bin['adcp-buyer-gateway'], './dist/main.js');
  // Inside node_modules: the output resolves the package's dependencies from there, as dist/ does.
  const dir = await mkdtemp(join(process.cwd(), 'node_modules', '.adcp-bin-test-'));
  try {
    // The compile script (`npm run build` runs it through scripts/build-if-stale.ts) with its
    // paths moved to `dir` (tsc's --outDir, the chmod's file).
    const script = pkg.scripts['build:tsc']!.replace('tsc -p tsconfig.build.json', `tsc -p tsconfig.build.json --outDir ${dir}`).replace("'dist/main.js'", `'${join(dir, 'main.js')}'`);
    assert.notEqual(script, pkg.scripts['build:tsc'], 'the compile script has the expected shape');
    execFileSync('sh', ['-c', script], { stdio: 'pipe', env: { ...process.env, PATH: `${join(process.cwd(), 'node_modules', '.bin')}:${process.env.PATH ?? ''}` } });
    const mode = (await stat(join(dir, 'main.js'))).mode;
    assert.equal(mode & 0o111, 0o111, `dist/main.js mode ${(mode & 0o777).toString(8)}`);
    assert.equal(execFileSync(join(dir, 'main.js'), ['--version'], { encoding: 'utf8' }).trim(), pkg.version);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
