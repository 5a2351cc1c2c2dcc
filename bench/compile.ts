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
 * the 2-core reference machine.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, relative } from 'node:path';
import { REPO_DIR, compiledModule } from './children.js';

/** Bench modules started as child processes (compiled with everything they import). */
export const CHILD_MODULES = ['gateway-child.ts', 'passthrough.ts', 'seller.ts', 'attacker.ts', 'micro.ts'] as const;

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
    return { dir, out, hash: hashSources(dir), diagnostics, ms: performance.now() - t0 };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** sha256 over the relative path and bytes of every file of src/ and of the bench's .ts files, in name order. */
function hashSources(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string, keep: (name: string) => boolean): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, keep);
      else if (keep(e.name)) {
        hash.update(relative(dir, p));
        hash.update(readFileSync(p));
      }
    }
  };
  walk(join(dir, 'src'), () => true);
  walk(join(dir, 'bench'), (name) => name.endsWith('.ts'));
  return hash.digest('hex').slice(0, 12);
}
