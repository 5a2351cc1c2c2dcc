/**
 * Parent side of the bench's child processes: fork a bench module's compiled JavaScript
 * (compile.ts; `useCompiled` says where it is) under plain `node` with an IPC channel, wait
 * for `ready` (bounded), ask for stats (bounded), shut down (bounded, then SIGKILL to that
 * one pid). Every child started here is remembered so the bench can end them all on exit.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ChildStats, ParentMessage } from './child-stats.js';

export const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
export const REPO_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Rejects after `ms` with a message naming what timed out; clears its timer either way. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface BenchChild {
  readonly label: string;
  readonly pid: number;
  readonly port: number;
  readonly baseUrl: string;
  /** CPU and memory figures; `reset` starts a new peak window after reading. */
  stats(reset: boolean): Promise<ChildStats>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Pids of the children still running (for the machine-load accounting). */
export function livePids(): number[] {
  return [...live].flatMap((c) => (c.pid !== undefined && c.exitCode === null && c.signalCode === null ? [c.pid] : []));
}

/** SIGKILLs every child still running (each by its own pid). Used on exit and on a fatal error. */
export function killAllChildren(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}

/**
 * Bounds a bench run: past `ms` it logs, runs `cleanUp` (default: every child killed) and
 * exits 2; SIGINT and SIGTERM run `cleanUp` and exit 130. Returns the watchdog (unref'd:
 * clear it when the run ends).
 */
export function guardRun(ms: number, log: (msg: string) => void, cleanUp: () => void = killAllChildren): NodeJS.Timeout {
  const watchdog = setTimeout(() => {
    log(`watchdog: the run exceeded ${ms / 1000} s, stopping`);
    cleanUp();
    process.exit(2);
  }, ms);
  watchdog.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      cleanUp();
      process.exit(130);
    });
  }
  return watchdog;
}

let compiledOut: string | undefined;

/** Sets the directory of the compiled run (compile.ts `CompiledSnapshot.out`) every child is started from. */
export function useCompiled(out: string): void {
  compiledOut = out;
}

export interface StartOptions {
  /** Module under bench/ (e.g. `seller.ts`), one of compile.ts `CHILD_MODULES`; its compiled `.js` runs. */
  module: string;
  args?: string[];
  env?: Record<string, string>;
  /** Extra Node flags (`--cpu-prof`, `--expose-gc`). */
  nodeFlags?: string[];
  readyTimeoutMs?: number;
}

/** Forks a child that reports `{type:'ready', port}` (server children, see child-stats.ts). */
export async function startChild(label: string, opts: StartOptions): Promise<BenchChild> {
  const child = spawnChild(opts);
  const ready = await withTimeout(
    new Promise<number>((resolve, reject) => {
      const onMessage = (raw: unknown): void => {
        const msg = raw as ChildMessage;
        if (msg.type === 'ready') {
          child.off('message', onMessage);
          resolve(msg.port);
        }
      };
      child.on('message', onMessage);
      child.once('exit', (code, signal) => reject(new Error(`${label} exited before it was ready (code ${code}, signal ${signal})`)));
      child.once('error', reject);
    }),
    opts.readyTimeoutMs ?? 30_000,
    `${label} start`,
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });

  let seq = 0;
  const pending = new Map<number, (s: ChildStats) => void>();
  child.on('message', (raw: unknown) => {
    const msg = raw as ChildMessage;
    if (msg.type === 'stats') {
      pending.get(msg.seq)?.(msg);
      pending.delete(msg.seq);
    }
  });
  let closing: Promise<void> | undefined;
  return {
    label,
    pid: child.pid!,
    port: ready,
    baseUrl: `http://127.0.0.1:${ready}`,
    stats(reset) {
      const n = ++seq;
      const p = new Promise<ChildStats>((resolve) => pending.set(n, resolve));
      child.send({ type: 'stats', seq: n, reset } satisfies ParentMessage);
      return withTimeout(p, 10_000, `${label} stats`);
    },
    close() {
      closing ??= (async () => {
        if (child.connected) child.send({ type: 'shutdown' } satisfies ParentMessage);
        // A --cpu-prof child needs a moment to write its profile.
        await reaped(child, 15_000);
      })();
      return closing;
    },
  };
}

/** `<out>/bench/<module as .js>` for a bench module name such as `seller.ts`. */
export function compiledModule(out: string, module: string): string {
  return join(out, 'bench', module.replace(/\.ts$/, '.js'));
}

/** Forks a bench module's compiled `.js` under plain `node`, stdout/stderr inherited, with IPC. Throws before `useCompiled`. */
export function spawnChild(opts: StartOptions): ChildProcess {
  if (compiledOut === undefined) throw new Error('bench children: useCompiled(out) was not called');
  const child = fork(compiledModule(compiledOut, opts.module), opts.args ?? [], {
    cwd: REPO_DIR,
    execArgv: opts.nodeFlags ?? [],
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Runs a one-shot child that sends one result message and exits (micro-benchmark). */
export async function runOnce<T>(label: string, opts: StartOptions & { timeoutMs: number; input?: unknown }): Promise<T> {
  const child = spawnChild(opts);
  try {
    return await withTimeout(
      new Promise<T>((resolve, reject) => {
        child.on('message', (raw: unknown) => {
          const msg = raw as { type: string; result?: T; message?: string };
          if (msg.type === 'result') resolve(msg.result as T);
          else if (msg.type === 'error') reject(new Error(`${label}: ${msg.message}`));
        });
        child.once('exit', (code) => reject(new Error(`${label} exited (code ${code}) without a result`)));
        if (opts.input !== undefined) child.send(opts.input as never);
      }),
      opts.timeoutMs,
      label,
    );
  } finally {
    await reaped(child, 5_000);
  }
}

/**
 * Waits (bounded) for a child to exit, SIGKILLing it after `graceMs`: once its exit is seen,
 * Node has reaped it, so its CPU time is in this process's cutime/cstime (machine.ts).
 */
export async function reaped(child: ChildProcess, graceMs: number): Promise<void> {
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  if (!gone()) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await withTimeout(exited, graceMs, 'child exit').catch(() => {
      child.kill('SIGKILL');
      return withTimeout(exited, 5_000, 'child exit after SIGKILL').catch(() => undefined);
    });
  }
  live.delete(child);
}
