/**
 * package.json's `test` script run as npm runs it (`sh -c`, in the package's directory, the
 * args after `npm test --` appended, npm quoting them) on a scratch tree: `files` written by hand
 * (test sources and their compiled outputs: no compile, no `pretest`), the repository's
 * scripts/ and node_modules/ linked. For the tests of scripts/run-tests.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { REPO } from './repo.js';

export interface NpmTestRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface NpmTestTree {
  root: string;
  /** `npm test` with `extra` appended to the script as written (e.g. ` 'a b'`). */
  npmTest(extra: string): NpmTestRun;
  /** {@link npmTest} without blocking: several runs at once (a test file's cases side by side). */
  npmTestAsync(extra: string): Promise<NpmTestRun>;
  remove(): void;
}

/** A compiled test file whose one test, `name`, passes (or throws). */
export const compiledTest = (name: string, passes = true): string =>
  `import { test } from 'node:test';\ntest(${JSON.stringify(name)}, () => {${passes ? '' : " throw new Error('no'); "}});\n`;

/**
 * The environment of a run: without NODE_TEST_CONTEXT, which node --test sets for the calling
 * file (a node --test run with it reports to that file's runner, not as spec lines); this node first on PATH.
 */
function runEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

export function npmTestTree(prefix: string, files: Record<string, string>): NpmTestTree {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const script = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.test;
  if (script === undefined) throw new Error('package.json has no test script');
  write('package.json', '{"type":"module"}\n');
  symlinkSync(join(REPO, 'scripts'), join(root, 'scripts'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  for (const [path, text] of Object.entries(files)) write(path, text);
  return {
    root,
    npmTest(extra) {
      const run = spawnSync('sh', ['-c', `${script}${extra}`], { cwd: root, env: runEnv(), encoding: 'utf8', timeout: 60_000 });
      return { status: run.status, stdout: run.stdout, stderr: run.stderr };
    },
    npmTestAsync(extra) {
      return new Promise((resolve, reject) => {
        const child = spawn('sh', ['-c', `${script}${extra}`], { cwd: root, env: runEnv(), timeout: 60_000 });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** node --test's spec lines that say what ran: each test's result (durations dropped) and the counts. */
export const specResults = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((line) => /^(✔|✖|ℹ (tests|pass|fail) )/.test(line))
    .map((line) => line.replace(/ \(\d+(\.\d+)?ms\)$/, ''));
