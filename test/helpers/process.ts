/**
 * The gateway (or another repo script) as a real child process, run from the repo with a
 * clean environment, for the CLI, probe, reload, shutdown and two-process tests: the CLI as
 * `node dist/main.js` when dist/ is current with src/ (see `cliArgv`), other scripts as
 * `node --import tsx <script>`. What `--check-config` says of a config's contents is checked
 * in the test's own process (./check-config.ts): a spawn is for what only the process shows.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { distStaleness } from '../../scripts/build-if-stale.js';
import { REPO } from './repo.js';
import { withTimeout } from './timeout.js';

/** The repository root (the cwd the CLI runs in unless a test says otherwise): ./repo.ts. */
export { REPO };
/** The `adcp-buyer-gateway` bin as built (package.json `bin`). */
const MAIN_DIST = join(REPO, 'dist/main.js');
/** The bin's source. */
const MAIN_SRC = join(REPO, 'src/main.ts');
// Absolute, so the CLI can run with a cwd outside the repo.
const TSX = import.meta.resolve('tsx');

let cliEntry: readonly string[] | undefined;

/**
 * Node's argv for the CLI with `args`: `dist/main.js ...args` (~0.35 s to start) when dist/ is
 * current with src/ (scripts/build-if-stale.ts `distStaleness`; `npm test`'s `pretest` builds
 * it), else `--import tsx src/main.ts ...args` (~0.9 s), with one line on stderr saying why:
 * a file run by hand after an edit under src/ tests the edit, never a stale build. Decided
 * once per test process.
 */
export function cliArgv(args: readonly string[]): string[] {
  if (cliEntry === undefined) {
    const stale = distStaleness(REPO);
    if (stale !== null) process.stderr.write(`test/helpers/process.ts: ${stale}: the CLI runs from ${relative(REPO, MAIN_SRC)} through tsx (npm run build, or npm test, to run dist/)\n`);
    cliEntry = stale === null ? [MAIN_DIST] : ['--import', TSX, MAIN_SRC];
  }
  return [...cliEntry, ...args];
}

/**
 * How long a CLI run, or a gateway process's start, may take before the test gives up. A hang
 * guard, not a timing: a run takes ~1 s of CPU through tsx (which compiles the sources), ~0.35 s
 * from dist/, and 30 s was too little when another suite shared the 2-core CI machine
 * (reported failure: 8-9 CLI spawn timeouts in a fresh-clone run beside `.ci/run`).
 */
export const PROCESS_TIMEOUT_MS = 90_000;

/** A test's own backstop around runs that may queue for a slot (see `runSlot`). */
export const PROCESS_TEST_TIMEOUT_MS = 3 * PROCESS_TIMEOUT_MS;

// Run-to-end children (runCli, runScript) one test process runs at once, one per core: a
// `concurrency: true` describe of 14 CLI tests started 14 tsx compiles together, and each one's
// 30 s clock ran while the others took the CPU. Queued runs start their clock when they start.
const RUN_SLOTS = Math.max(1, availableParallelism());
let runsActive = 0;
const runsWaiting: Array<() => void> = [];

async function runSlot<T>(run: () => Promise<T>): Promise<T> {
  if (runsActive >= RUN_SLOTS) await new Promise<void>((resolve) => runsWaiting.push(resolve));
  runsActive += 1;
  try {
    return await run();
  } finally {
    runsActive -= 1;
    runsWaiting.shift()?.();
  }
}

export interface SpawnOptions {
  /** Default: the repo. */
  cwd?: string;
  /** Added to the clean environment (PATH and HOME only: no ADCP_* leaking in from the developer's shell). */
  env?: NodeJS.ProcessEnv;
  /** The child's stdin: `ignore` (default) or an open pipe nobody writes to. */
  stdin?: 'ignore' | 'pipe';
  /** Node's own options, before the script (`--disable-sigusr1`, as the Dockerfile's ENTRYPOINT gives). */
  nodeArgs?: readonly string[];
}

export type ChildProcess = ChildProcessByStdio<Writable | null, Readable, Readable>;

/** `node --import tsx <script> ...args`, stdout and stderr piped. */
export function spawnTsx(script: string, args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  return spawnNode(['--import', TSX, script, ...args], opts);
}

/** The CLI with `args` (`cliArgv`), stdout and stderr piped. */
export function spawnCli(args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  return spawnNode(cliArgv(args), opts);
}

/** The environment of a child (the CLI's, a script's): PATH and HOME, then `env` (no ADCP_* leaking in from the developer's shell). */
export function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
}

function spawnNode(script: readonly string[], opts: SpawnOptions): ChildProcess {
  const argv = [...(opts.nodeArgs ?? []), ...script];
  const options = { cwd: opts.cwd ?? REPO, env: cliEnv(opts.env) };
  return opts.stdin === 'pipe'
    ? spawn(process.execPath, argv, { ...options, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, argv, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Everything the child has written so far, as text. */
export function captureOutput(child: ChildProcess): { readonly stdout: string; readonly stderr: string } {
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out.stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out.stderr += s));
  return out;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends Omit<SpawnOptions, 'stdin'> {
  /**
   * `pipe` (default): captured. `closed`: the read end is closed at once, long before the
   * child (~0.35 s to start, ~1 s through tsx) writes, as when its reader has left
   * (`| head -1`): writes fail with EPIPE.
   */
  stdout?: 'pipe' | 'closed';
}

/** Runs the CLI (`cliArgv`) with `args` to its end (see `runScript`). */
export function runCli(args: readonly string[], opts: RunOptions = {}): Promise<CliRun> {
  return runNode(cliArgv(args), 'the CLI', args, opts);
}

/**
 * Runs `node --import tsx <script> ...args` to its end and resolves with its exit code and
 * output. At most one such run (or `runCli`'s) per core at a time in this process (later ones
 * queue); SIGKILL and a rejection after PROCESS_TIMEOUT_MS of running.
 */
export function runScript(script: string, args: readonly string[], opts: RunOptions = {}): Promise<CliRun> {
  return runNode(['--import', TSX, script, ...args], script, args, opts);
}

function runNode(argv: readonly string[], what: string, args: readonly string[], opts: RunOptions): Promise<CliRun> {
  return runSlot(
    () =>
      new Promise<CliRun>((resolve, reject) => {
        const child = spawnNode(argv, opts);
        const out = captureOutput(child);
        if (opts.stdout === 'closed') child.stdout.destroy();
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`${what} timed out after ${PROCESS_TIMEOUT_MS} ms: ${args.join(' ')}\n${out.stdout}\n${out.stderr}`));
        }, PROCESS_TIMEOUT_MS);
        child.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout: out.stdout, stderr: out.stderr });
        });
      }),
  );
}

/** One JSON log line of the gateway process. */
export interface LogEntry {
  msg?: string;
  level?: number;
  [key: string]: unknown;
}

export interface GatewayProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`, from the `gateway started` line. */
  readonly address: string;
  /** Every JSON line on stdout so far. */
  readonly logs: LogEntry[];
  /** The first line whose `msg` starts with `msg`, already logged or when it is (30 s at most). */
  waitForLog(msg: string): Promise<LogEntry>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The exit code, once the process has exited. */
  readonly exited: Promise<number | null>;
  /** SIGKILL, unless it has already exited (for `finally`). */
  kill(): void;
}

/**
 * Starts the gateway (the CLI, `cliArgv`) on `configFile` (then `opts.args`, e.g.
 * `--no-watch-config`) and waits for its `gateway started` line. The config must log at info
 * (the default) so that line is written.
 */
export async function startGatewayProcess(
  configFile: string,
  opts: Pick<SpawnOptions, 'stdin' | 'env' | 'nodeArgs'> & { args?: readonly string[] } = {},
): Promise<GatewayProcess> {
  const child = spawnCli(['--config', configFile, ...(opts.args ?? [])], opts);
  const logs: LogEntry[] = [];
  const waiters: Array<{ msg: string; resolve: (e: LogEntry) => void }> = [];
  const matches = (entry: LogEntry, msg: string): boolean => entry.msg?.startsWith(msg) === true;
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as LogEntry;
      logs.push(entry);
      for (const w of waiters.filter((w) => matches(entry, w.msg))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(entry);
      }
    }
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitForLog = (msg: string): Promise<LogEntry> => {
    const found = logs.find((e) => matches(e, msg));
    if (found) return Promise.resolve(found);
    return withTimeout(new Promise<LogEntry>((resolve) => waiters.push({ msg, resolve })), PROCESS_TIMEOUT_MS, `log "${msg}"; stderr: ${stderr}`);
  };
  const kill = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  let started: LogEntry;
  try {
    started = await Promise.race([waitForLog('gateway started'), exited.then((code) => Promise.reject(new Error(`exited ${code}: ${stderr}`)))]);
  } catch (err) {
    kill();
    throw err;
  }
  if (typeof started.address !== 'string') {
    kill();
    throw new Error(`no address in the "gateway started" line: ${JSON.stringify(started)}`);
  }
  return { child, address: started.address, logs, waitForLog, stderr: () => stderr, exited, kill };
}
