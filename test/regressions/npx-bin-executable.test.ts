/**
 * Regression from a new user's trial (2026-12-02): "`npx adcp-buyer-gateway` fails in a
 * clone" (`sh: 1: adcp-buyer-gateway: Permission denied`, exit 127), although README.md and
 * docs/configuration.md say it works after `npm ci`: tsc wrote dist/main.js, the package's
 * `bin`, with mode 0644. The build script now makes it executable.
 *
 * Runs the package's `build:tsc` script into a temporary directory under node_modules (the
 * compile `npm ci`'s `prepare` runs through `npm run build`, with `--outDir`), then the bin
 * file itself as a program: its `#!/usr/bin/env node` line and its mode must make it run.
 * When dist/ is built (`npm test`'s `pretest` built it with this very script), the script's
 * `tsc` is a stand-in first on PATH that writes what tsc writes for a new output directory:
 * dist/'s files, each created with mode 0644 (tsc's mode for a file it creates, the reported
 * failure's). The real compile took ~15 s of CPU of a CI run near its 15 minutes (stop 54);
 * what is under test is the script around tsc. Without dist/, the real tsc compiles.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A `tsc` for `tsc -p tsconfig.build.json --outDir DIR`: copies dist/ to DIR, every file
 * created 0644 (as tsc creates its outputs; dist/main.js itself is 0755 after the build).
 */
const TSC_STAND_IN = `#!/usr/bin/env node
const { chmodSync, cpSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const outDir = process.argv[process.argv.indexOf('--outDir') + 1];
cpSync('dist', outDir, { recursive: true });
const walk = (d) => { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) walk(p); else chmodSync(p, 0o644); } };
walk(outDir);
`;

test('npx adcp-buyer-gateway fails in a clone: the built bin is executable and runs', { timeout: 120_000 }, async () => {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string>; version: string };
  assert.equal(pkg.bin['adcp-buyer-gateway'], './dist/main.js');
  // Inside node_modules: the output resolves the package's dependencies from there, as dist/ does.
  const dir = await mkdtemp(join(process.cwd(), 'node_modules', '.adcp-bin-test-'));
  let standIn: string | undefined;
  try {
    // The compile script (`npm run build` runs it through scripts/build-if-stale.ts) with its
    // paths moved to `dir` (tsc's --outDir, the chmod's file).
    const script = pkg.scripts['build:tsc']!.replace('tsc -p tsconfig.build.json', `tsc -p tsconfig.build.json --outDir ${dir}`).replace("'dist/main.js'", `'${join(dir, 'main.js')}'`);
    assert.notEqual(script, pkg.scripts['build:tsc'], 'the compile script has the expected shape');
    let bin = join(process.cwd(), 'node_modules', '.bin');
    if (existsSync(join('dist', 'main.js'))) {
      standIn = await mkdtemp(join(tmpdir(), 'adcp-tsc-stand-in-'));
      bin = standIn;
      await writeFile(join(standIn, 'tsc.cjs'), TSC_STAND_IN);
      await writeFile(join(standIn, 'tsc'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(standIn, 'tsc.cjs'))} "$@"\n`);
      await chmod(join(standIn, 'tsc'), 0o755);
    }
    execFileSync('sh', ['-c', script], { stdio: 'pipe', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
    const mode = (await stat(join(dir, 'main.js'))).mode;
    assert.equal(mode & 0o111, 0o111, `dist/main.js mode ${(mode & 0o777).toString(8)}`);
    assert.equal(execFileSync(join(dir, 'main.js'), ['--version'], { encoding: 'utf8' }).trim(), pkg.version);
  } finally {
    await rm(dir, { recursive: true, force: true });
    if (standIn !== undefined) await rm(standIn, { recursive: true, force: true });
  }
});
