/**
 * The build's stamp: what scripts/build-if-stale.ts records when a build of dist/ begins, and
 * reads to decide whether dist/ is still what a build would write (`distStaleness`).
 *
 * The build's inputs ({@link buildInputs}): every file and directory under src/ (a directory
 * for a deleted or renamed file), package.json (its `type` decides whether tsc emits ES
 * modules or CommonJS under `module: NodeNext`) and every tsconfig*.json at the root (one may
 * extend another). Each is recorded as (path, size, mtime, ctime): the inode's change time
 * (ctime) moves on every write, rename and restore, and no process can set it back, so a file
 * restored with an old mtime (`cp -p`, `tar x`, `rsync -t`) is seen although its mtime is old.
 *
 * The stamp (JSON): `startedAtMs`, when the build began, taken before the inputs are read: the
 * mtime the file system gave the stamp file as it was created, so the clock the inputs' times
 * come from (Linux stamps files with a coarse clock that can lag Date.now() by a tick, so a file
 * written just after Date.now() could look older), and `inputs` ([path, size, mtimeMs, ctimeMs]
 * each, paths relative to the root, `/`-separated, directory entries by name). Written at the
 * build's start to {@link STARTED_STAMP} (the old {@link BUILD_STAMP} removed first), and
 * renamed to {@link BUILD_STAMP} only once the build succeeded: an interrupted or failed build
 * leaves no stamp, so dist/ reads as stale. A stamp is ~11 KB (~150 inputs); reading it and
 * stat-ing the inputs takes ~6 ms.
 *
 * Reported failure (a review, Low): staleness was judged from mtimes alone (dist/ current when
 * no input was newer than the oldest output), so a source edited during the build (after tsc
 * read it, before it wrote its outputs), a source restored with its old mtime, and a change of
 * package.json's `type` each left an outdated dist/ taken as current
 * (test/unit/dist-staleness.test.ts).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The stamp of the last build that succeeded, relative to the root. */
export const BUILD_STAMP = 'dist/.build-stamp';
/** The stamp of a build under way (or one that failed or was interrupted), relative to the root. */
export const STARTED_STAMP = 'dist/.build-started';

/** One input as recorded: its path (relative, `/`-separated), size in bytes, mtime and ctime in ms since the epoch. */
export type InputStat = [path: string, size: number, mtimeMs: number, ctimeMs: number];

export interface BuildStamp {
  /** When the build began, by the file system's clock (ms since the epoch: see file comment). */
  startedAtMs: number;
  inputs: InputStat[];
}

/**
 * The build's inputs under `root` (see file comment), each with its stat, and the sources
 * (src/ files ending `.ts`, not `.d.ts`, relative, `/`-separated) that each have an output.
 */
export function buildInputs(root: string): { inputs: InputStat[]; sources: string[] } {
  const inputs: InputStat[] = [];
  const sources: string[] = [];
  const add = (path: string): void => {
    const s = statSync(join(root, path));
    inputs.push([path, s.size, s.mtimeMs, s.ctimeMs]);
  };
  const visit = (dir: string): void => {
    add(dir);
    const entries = readdirSync(join(root, dir), { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const entry of entries) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) visit(path);
      else {
        add(path);
        if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(path);
      }
    }
  };
  visit('src');
  add('package.json');
  for (const name of readdirSync(root).sort()) if (/^tsconfig.*\.json$/.test(name)) add(name);
  return { inputs, sources };
}

/** Records the start of a build of dist/ under `root` ({@link STARTED_STAMP}); removes the last build's stamp. */
export function beginBuildStamp(root: string): BuildStamp {
  rmSync(join(root, BUILD_STAMP), { force: true });
  mkdirSync(join(root, 'dist'), { recursive: true });
  const started = join(root, STARTED_STAMP);
  // A new file (a failed build's is removed): its times are those of its creation.
  rmSync(started, { force: true });
  writeFileSync(started, '');
  const stamp: BuildStamp = { startedAtMs: statSync(started).mtimeMs, inputs: buildInputs(root).inputs };
  writeFileSync(started, JSON.stringify(stamp));
  return stamp;
}

/** The build begun by {@link beginBuildStamp} succeeded: its stamp becomes {@link BUILD_STAMP}. */
export function finishBuildStamp(root: string): void {
  renameSync(join(root, STARTED_STAMP), join(root, BUILD_STAMP));
}

/** The stamp of the last build that succeeded under `root`, or why there is none usable (a sentence). */
export function readBuildStamp(root: string): BuildStamp | string {
  let text: string;
  try {
    text = readFileSync(join(root, BUILD_STAMP), 'utf8');
  } catch {
    return `${BUILD_STAMP} is missing (no build finished since the last one began)`;
  }
  try {
    const stamp = JSON.parse(text) as Partial<BuildStamp>;
    if (typeof stamp.startedAtMs === 'number' && Array.isArray(stamp.inputs)) return stamp as BuildStamp;
  } catch {
    // below
  }
  return `${BUILD_STAMP} is unreadable`;
}
