/**
 * `npm test`'s `pretest`: runs `npm run build` unless dist/ is current with src/
 * ({@link distStaleness}), so that the CLI processes the tests start (test/helpers/process.ts
 * `runCli`, `startGatewayProcess`, `spawnCli`) run dist/main.js built from the source under
 * test: ~0.35 s a start where `node --import tsx src/main.ts` takes ~0.9 s (over 100 starts
 * in the suite). After `npm ci`, whose `prepare` built dist/, nothing is rebuilt (.ci/run builds
 * once); after an edit under src/ the build runs (~15 s), and a failed build (tsc's errors on
 * stderr) fails `npm test` with exit 1 before any test runs, and removes dist/main.js so that
 * the next `npm test` builds again.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isEntryPoint } from '../src/entry-point.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** What tsc reads besides src/ (tsconfig.build.json extends tsconfig.json). */
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];

/**
 * Why dist/ (under `root`, the repository) is not what `npm run build` would write from src/
 * now, or null when it is. By modification times, never contents: dist/ is current when every
 * src/X.ts has its dist/X.js and nothing under src/ (a file, or a directory: deleting or
 * renaming a file changes its directory's), nor a tsconfig file, was modified at or after the
 * oldest of those dist/X.js (tsc rewrites every output on each build, so the oldest is the
 * build's time). dist/ files without a source (left by a deleted one) are not looked at.
 * Reads ~300 inodes: a few ms. The answer is a sentence naming one culprit, e.g.
 * `src/cli.ts was modified after dist/ was built (2026-12-04T17:53:06.616Z)`.
 */
export function distStaleness(root: string = ROOT): string | null {
  const inputs: string[] = [];
  const outputs: string[] = [];
  const visit = (dir: string): void => {
    inputs.push(dir);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else {
        inputs.push(path);
        if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) outputs.push(join(root, 'dist', relative(join(root, 'src'), path).replace(/\.ts$/, '.js')));
      }
    }
  };
  visit(join(root, 'src'));
  inputs.push(...CONFIG_FILES.map((f) => join(root, f)));
  let built = Infinity;
  for (const out of outputs) {
    let mtime: number;
    try {
      mtime = statSync(out).mtimeMs;
    } catch {
      return `${relative(root, out)} is missing`;
    }
    built = Math.min(built, mtime);
  }
  for (const input of inputs) {
    if (statSync(input).mtimeMs >= built) return `${relative(root, input)} was modified after dist/ was built (${new Date(built).toISOString()})`;
  }
  return null;
}

function main(): void {
  const stale = distStaleness();
  if (stale === null) {
    process.stdout.write('dist/ is current with src/: not rebuilt\n');
    return;
  }
  process.stdout.write(`${stale}: npm run build\n`);
  // npm sets npm_execpath for the scripts it runs; `npm` from PATH when run by hand.
  const npm = process.env.npm_execpath;
  const run = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) {
    // tsc writes its output even on type errors: without dist/main.js the next `npm test`
    // builds (and fails) again instead of taking that output as current.
    rmSync(join(ROOT, 'dist', 'main.js'), { force: true });
    process.stderr.write(`npm run build failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): the CLI tests run dist/main.js, so the tests do not run\n`);
    process.exitCode = 1;
  }
}

if (isEntryPoint(import.meta.url)) main();
