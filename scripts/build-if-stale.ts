/**
 * `npm run build` and `npm test`'s `pretest`: builds dist/ from src/ (`npm run build:tsc`)
 * with a stamp (scripts/build-stamp.ts), `npm run build` (`--always`) always, `pretest` unless
 * dist/ is current ({@link distStaleness}), so that the CLI processes the tests start
 * (test/helpers/process.ts `runCli`, `startGatewayProcess`, `spawnCli`) run dist/main.js built
 * from the source under test: ~0.35 s a start where `node --import tsx src/main.ts` takes
 * ~0.9 s (over 100 starts in the suite). After `npm ci`, whose `prepare` ran `npm run build`,
 * nothing is rebuilt (.ci/run builds once); after an edit under src/ the build runs (~15 s),
 * and a failed build (tsc's errors on stderr) fails `npm test` with exit 1 before any test
 * runs, leaves no stamp and removes dist/main.js, so that the next `npm test` builds again.
 * `npm run build:tsc` alone (the Docker image's build, which has no scripts/) writes no stamp:
 * the dist/ it leaves is not taken as current.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isEntryPoint } from '../src/entry-point.js';
import { repoRoot } from './repo-root.js';
import { beginBuildStamp, buildInputs, finishBuildStamp, readBuildStamp, type InputStat } from './build-stamp.js';

const ROOT = repoRoot(import.meta.url, 1);

/**
 * Why dist/ (under `root`, the repository) is not what a build would write from its inputs
 * now (scripts/build-stamp.ts `buildInputs`: src/, package.json, tsconfig*.json), or null when
 * it is. dist/ is current when every src/X.ts has its dist/X.js, the last build finished (its
 * stamp, dist/.build-stamp), and every input is as that build found it when it began: the same
 * inputs, each with the same size, mtime and ctime, and none modified at or after the build
 * began (the later of its mtime and ctime: a file edited while the build ran, or in the same
 * clock tick as its start on a file system with coarse times). dist/ files without a source
 * (left by a deleted one) are not looked at. Reads ~150 inodes and the stamp: ~6 ms. The
 * answer is a sentence naming one culprit, e.g. `src/cli.ts was modified after the build
 * began (2026-12-04T17:53:06.616Z)`.
 */
export function distStaleness(root: string = ROOT): string | null {
  const { inputs, sources } = buildInputs(root);
  for (const source of sources) {
    const out = `dist/${source.slice('src/'.length).replace(/\.ts$/, '.js')}`;
    if (!existsSync(join(root, out))) return `${out} is missing`;
  }
  const stamp = readBuildStamp(root);
  if (typeof stamp === 'string') return stamp;
  const began = new Date(stamp.startedAtMs).toISOString();
  for (const [path, , mtimeMs, ctimeMs] of inputs) {
    if (Math.max(mtimeMs, ctimeMs) >= stamp.startedAtMs) return `${path} was modified after the build began (${began})`;
  }
  const recorded = new Map<string, InputStat>(stamp.inputs.map((input) => [input[0], input]));
  for (const input of inputs) {
    const then = recorded.get(input[0]);
    if (then === undefined) return `${input[0]} is new since the build began (${began})`;
    if (then[1] !== input[1] || then[2] !== input[2] || then[3] !== input[3]) return `${input[0]} is not as the build found it (${began}): its size, mtime or ctime changed`;
    recorded.delete(input[0]);
  }
  for (const path of recorded.keys()) return `${path} was removed since the build began (${began})`;
  return null;
}

/** Runs `npm run <script>` in the repository (npm sets npm_execpath for the scripts it runs; `npm` from PATH when run by hand). */
function npmRun(script: string): ReturnType<typeof spawnSync> {
  const npm = process.env.npm_execpath;
  return npm ? spawnSync(process.execPath, [npm, 'run', script], { cwd: ROOT, stdio: 'inherit' }) : spawnSync('npm', ['run', script], { cwd: ROOT, stdio: 'inherit' });
}

function main(): void {
  const stale = process.argv.includes('--always') ? 'building dist/' : distStaleness();
  if (stale === null) {
    process.stdout.write('dist/ is current with src/: not rebuilt\n');
    return;
  }
  process.stdout.write(`${stale}: npm run build:tsc\n`);
  beginBuildStamp(ROOT);
  const run = npmRun('build:tsc');
  if (run.status !== 0) {
    // tsc writes its output even on type errors: that dist/ has no stamp (dist/.build-started
    // stays), so the next `npm test` builds (and fails) again; nor a bin to run by mistake.
    rmSync(join(ROOT, 'dist', 'main.js'), { force: true });
    process.stderr.write(`npm run build:tsc failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): the CLI tests run dist/main.js, so the tests do not run\n`);
    process.exitCode = 1;
    return;
  }
  finishBuildStamp(ROOT);
}

if (isEntryPoint(import.meta.url)) main();
