/**
 * The code under test, as deployed: the bench's child processes run compiled JavaScript
 * under plain `node` (what `npm run build` / `node dist/main.js` / the Dockerfile run), not
 * TypeScript through tsx's loader.
 *
 * `compileSnapshot()` copies src/ and bench/ (with package.json, tsconfig.json and a
 * node_modules link) to a temporary directory, then compiles the child entry modules
 * (`CHILD_MODULES`, and what they import: all of the gateway's src/) with the repository's
 * `tsc` into `<dir>/out/{src,bench}/*.js`. Every child of one run (the main gateway, the
 * fresh gateway per memory load minutes later, the pass-through, ...) runs that one output,
 * even while others edit src/. Returns the directory, `out`, and a short sha256 of the
 * copied sources (src/ and the child modules' bench/ files).
 *
 * Type errors do not stop the run (tsc still emits; they are returned as `diagnostics` for
 * the report's warnings); a missing output file does (throws). tsc's wall time is ~6 s on
 * the 2-core reference machine (~15 s of CPU on a loaded one).
 *
 * Compile cache: tsc's output is a function of the copied sources, package.json,
 * tsconfig.json, the module list and tsc's version, so a compile is kept under
 * `node_modules/.cache/adcp-bench-compile/<sha256 of those>/` (written beside, then renamed
 * into place: a half-written entry is never used) and the next snapshot of the same inputs
 * copies it instead of running tsc (~0.1 s). The bench's CI smoke test compiled the same tree
 * three times (`bench/run.ts --quick`, then `bench/ab.ts --quick`'s head and its base HEAD:
 * ~45 s of CPU of a CI run near its 15 minutes, stop 54). The newest {@link CACHE_ENTRIES}
 * entries are kept. `ADCP_BENCH_NO_COMPILE_CACHE=1` compiles every time.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, relative } from 'node:path';
import { REPO_DIR, compiledModule } from './children.js';

/** Bench modules started as child processes (compiled with everything they import). */
export const CHILD_MODULES = ['gateway-child.ts', 'passthrough.ts', 'seller.ts', 'attacker.ts', 'micro.ts'] as const;

/** The compile cache's directory (see the module's docs). */
const CACHE_DIR = join(REPO_DIR, 'node_modules', '.cache', 'adcp-bench-compile');

/** Compiles the cache keeps (the newest by modification time); each is ~2 MB. */
const CACHE_ENTRIES = 4;

/** Upper bound on tsc's run (a loaded CI machine; measured ~6 s on a quiet one). */
const TSC_TIMEOUT_MS = 180_000;

export interface CompiledSnapshot {
  /** The temporary directory (remove it when the run ends). */
  readonly dir: string;
  /** Where the JavaScript is: `<out>/bench/<module>.js`, `<out>/src/...`. */
  readonly out: string;
  /** First 12 hex digits of the sha256 of the copied sources. */
  readonly hash: string;
  /** tsc's diagnostics when it exited non-zero (type errors; the output was still emitted). */
  readonly diagnostics: string | undefined;
  /** Wall time of the copy and the compile, ms. */
  readonly ms: number;
  /** True when the output came from the compile cache (no tsc run). */
  readonly cached: boolean;
}

/**
 * Copies src/ and bench/ of `root` (default: this repository; bench/ab.ts passes a worktree of
 * another revision) to a temporary directory and compiles `modules` (default: the child
 * modules; bench/sse-loop.ts passes itself) there with this repository's tsc and node_modules.
 */
export function compileSnapshot(root: string = REPO_DIR, modules: readonly string[] = CHILD_MODULES): CompiledSnapshot {
  const t0 = performance.now();
  const dir = mkdtempSync(join(os.tmpdir(), 'adcp-bench-src-'));
  try {
    cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(join(root, 'bench'), join(dir, 'bench'), { recursive: true, filter: (p) => !/\/bench\/profiles(\/|$)/.test(p) && !p.endsWith('.md') });
    for (const f of ['package.json', 'tsconfig.json']) copyFileSync(join(root, f), join(dir, f));
    symlinkSync(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const out = join(dir, 'out');
    writeFileSync(
      join(dir, 'tsconfig.bench.json'),
      JSON.stringify({
        extends: './tsconfig.json',
        compilerOptions: { noEmit: false, rootDir: '.', outDir: './out', declaration: false, sourceMap: false, incremental: false },
        files: modules.map((m) => `bench/${m}`),
        include: [],
      }),
    );
    const tsc = createRequire(join(REPO_DIR, 'package.json')).resolve('typescript/bin/tsc');
    const hash = hashSources(dir);
    const key = cacheKey(dir, hash, modules, tsc);
    const entry = join(CACHE_DIR, key);
    const useCache = process.env.ADCP_BENCH_NO_COMPILE_CACHE !== '1';
    if (useCache && existsSync(join(entry, 'complete'))) {
      try {
        cpSync(join(entry, 'out'), out, { recursive: true });
        const now = new Date();
        utimesSync(entry, now, now); // the newest entries are kept
        const diagnostics = readFileSync(join(entry, 'complete'), 'utf8');
        return { dir, out, hash, diagnostics: diagnostics === '' ? undefined : diagnostics, ms: performance.now() - t0, cached: true };
      } catch {
        // Pruned by another run while copied: compile.
        rmSync(out, { recursive: true, force: true });
      }
    }
    let diagnostics: string | undefined;
    try {
      execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.bench.json')], { cwd: dir, timeout: TSC_TIMEOUT_MS, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; signal?: string | null };
      if (e.signal) throw new Error(`tsc did not finish (${e.signal}) within ${TSC_TIMEOUT_MS} ms`);
      diagnostics = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim();
    }
    for (const m of modules) {
      if (!existsSync(compiledModule(out, m))) throw new Error(`tsc emitted no ${relative(dir, compiledModule(out, m))}${diagnostics ? `:\n${diagnostics}` : ''}`);
    }
    if (useCache) keepInCache(entry, out, diagnostics ?? '');
    return { dir, out, hash, diagnostics, ms: performance.now() - t0, cached: false };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The cache entry's name: sha256 (hex, 32 digits) over the sources' hash, the snapshot's
 * package.json and tsconfig.json, the modules, tsc's version and this repository's
 * package-lock.json (the node_modules every compile uses: its types decide tsc's diagnostics).
 */
function cacheKey(dir: string, sources: string, modules: readonly string[], tsc: string): string {
  const typescript = JSON.parse(readFileSync(join(tsc, '..', '..', 'package.json'), 'utf8')) as { version: string };
  const lock = join(REPO_DIR, 'package-lock.json');
  const hash = createHash('sha256');
  for (const part of [sources, readFileSync(join(dir, 'package.json'), 'utf8'), readFileSync(join(dir, 'tsconfig.json'), 'utf8'), modules.join('\n'), typescript.version, existsSync(lock) ? readFileSync(lock, 'utf8') : '']) {
    hash.update(part);
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * Copies `out` to the cache as `entry` (written beside, then renamed: another process's copy
 * of the same key may win, which is the same output) with `diagnostics` in its `complete`
 * file, and keeps the newest {@link CACHE_ENTRIES}. A cache that cannot be written (a
 * read-only node_modules) is skipped: the run goes on compiled.
 */
function keepInCache(entry: string, out: string, diagnostics: string): void {
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const staging = mkdtempSync(`${entry}.tmp-`);
    cpSync(out, join(staging, 'out'), { recursive: true });
    writeFileSync(join(staging, 'complete'), diagnostics);
    try {
      renameSync(staging, entry);
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
    // A staging directory of a run that died while copying: gone once older than a compile may take.
    for (const name of readdirSync(CACHE_DIR)) {
      const path = join(CACHE_DIR, name);
      if (name.includes('.tmp-') && Date.now() - statSync(path).mtimeMs > TSC_TIMEOUT_MS) rmSync(path, { recursive: true, force: true });
    }
    const entries = readdirSync(CACHE_DIR)
      .filter((name) => /^[0-9a-f]{32}$/.test(name))
      .map((name) => ({ path: join(CACHE_DIR, name), mtimeMs: statSync(join(CACHE_DIR, name)).mtimeMs }))
      .sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const old of entries.slice(CACHE_ENTRIES)) rmSync(old.path, { recursive: true, force: true });
  } catch {
    // No cache: the next run compiles again.
  }
}

/** sha256 over the relative path and bytes (each followed by a NUL) of every file of src/ and of the bench's .ts files, in name order. */
function hashSources(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string, keep: (name: string) => boolean): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, keep);
      else if (keep(e.name)) {
        hash.update(relative(dir, p));
        hash.update('\0');
        hash.update(readFileSync(p));
        hash.update('\0');
      }
    }
  };
  walk(join(dir, 'src'), () => true);
  walk(join(dir, 'bench'), (name) => name.endsWith('.ts'));
  return hash.digest('hex').slice(0, 12);
}
