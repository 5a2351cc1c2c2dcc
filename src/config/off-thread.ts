/**
 * Loads the config file for a reload in a worker thread (config/reload-worker.ts), so the
 * serving loop never reads, parses or validates it: it only takes the result, one page per
 * event-loop turn (at most `PAGE_ITEMS` agents, headers, tools or problems: ~1 ms), and
 * assembles the frozen config with `ConfigAssembler` (load.ts), the same object a start-up load
 * makes. Before, a reload blocked every agent and /healthz for as long as the file took to check:
 * 1-8 s for files within the documented bounds (a hostile new user's trial 19, M1:
 * test/regressions/config-reload-blocks-event-loop.test.ts).
 *
 * One worker per `ConfigThread`, started at the first load and kept (unref'd: it never holds
 * the process open); one load at a time (the reloader runs them in turn). A worker that dies or
 * fails is replaced at the next load; the load it was running rejects.
 *
 * The worker runs the module next to this one: `reload-worker.js` from dist/, `reload-worker.ts`
 * under tsx (through a bootstrap that registers tsx's loader in the worker: {@link newWorker}).
 */
import { Worker } from 'node:worker_threads';
import { ConfigAssembler, ConfigError, unknownKeyProblem, type ConfigFingerprint, type ConfigProblem, type OwnListener } from './load.js';
import type { RawAgent, RawConfig, RawTool } from './schema.js';
import type { GatewayConfig } from './types.js';

/** A load for the worker. */
export interface LoadJob {
  readonly type: 'load';
  /** The config file, absolute. */
  readonly path: string;
  /** The environment for `${VAR}` (a plain copy). */
  readonly env: Record<string, string | undefined>;
  /** A file whose text has this digest is skipped (`skip`): a file check that finds the text it last loaded or rejected. */
  readonly skipDigest?: string | undefined;
  /** The running config's fingerprint: the same text and variable values answer `unchanged`. */
  readonly loaded?: ConfigFingerprint | undefined;
  /** The listeners the gateway runs on, which no agent url may name (load.ts `agentUrlSelfProblems`). */
  readonly running?: readonly OwnListener[] | undefined;
}

/** One problem as sent: an unknown key's message is made on this side, when read (`parent`: the path of its mapping). */
export type WireProblem = Omit<ConfigProblem, 'message'> & ({ message: string } | { unknownKey: string; parent: Array<string | number> });

/** An agent (without headers and tools), or a run of the headers or tools of the agent before it. */
export type ConfigItem = ['agent', string, RawAgent] | ['headers', Array<[string, string]>] | ['tools', Array<[string, RawTool]>];

export type LoadReply =
  | { readonly type: 'read-error'; readonly code: string | undefined; readonly problems: WireProblem[] }
  | { readonly type: 'skip' }
  | { readonly type: 'unchanged'; readonly digest: string }
  | { readonly type: 'invalid'; readonly digest: string; readonly pages: number }
  | { readonly type: 'config'; readonly fingerprint: ConfigFingerprint; readonly header: RawConfig; readonly pages: number }
  | { readonly type: 'failed'; readonly message: string };

export interface PageRequest {
  readonly type: 'page';
  readonly index: number;
}

export interface PageReply {
  readonly type: 'page';
  readonly index: number;
  readonly items: unknown[];
}

/** What a load found. `digest`: the SHA-256 of the text read (absent when it could not be read). */
type LoadOutcome =
  | { readonly kind: 'config'; readonly digest: string; readonly config: GatewayConfig }
  | { readonly kind: 'error'; readonly digest: string | undefined; readonly error: ConfigError }
  | { readonly kind: 'skip' }
  | { readonly kind: 'unchanged'; readonly digest: string };

function fromWire(p: WireProblem): ConfigProblem {
  const at = p.line === undefined ? {} : { line: p.line, ...(p.column === undefined ? {} : { column: p.column }) };
  if ('unknownKey' in p) return unknownKeyProblem({ path: p.path, message: '', ...at }, p.unknownKey, p.parent);
  return { path: p.path, message: p.message, ...at };
}

/** Whether this module runs as TypeScript source (tsx: the tests, `npm run demo`), not from dist/. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './reload-worker.ts' : './reload-worker.js', import.meta.url);

/**
 * A new worker on `WORKER_URL`. From source, through a bootstrap that registers tsx's loader in
 * the worker first: on Node 20 a worker does not get the loader hooks the parent registered
 * with `--import tsx` (the `.ts` entry failed with ERR_UNKNOWN_FILE_EXTENSION).
 */
function newWorker(): Worker {
  if (!FROM_SOURCE) return new Worker(WORKER_URL);
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;
  return new Worker(boot, { eval: true });
}

export class ConfigThread {
  private worker: Worker | undefined;
  /** The reply the running load waits for; a worker error or exit rejects it. */
  private waiting: { resolve: (m: LoadReply | PageReply) => void; reject: (err: Error) => void } | undefined;

  /**
   * Reads and checks the file in the worker; a valid one is assembled here, a page per turn.
   * Rejects only when the worker fails (not for an invalid or unreadable file).
   */
  async load(job: Omit<LoadJob, 'type'>): Promise<LoadOutcome> {
    const reply = (await this.ask({ ...job, env: { ...job.env }, type: 'load' })) as LoadReply;
    switch (reply.type) {
      case 'failed':
        throw new Error(`config worker: ${reply.message}`);
      case 'skip':
      case 'unchanged':
        return reply.type === 'skip' ? { kind: 'skip' } : { kind: 'unchanged', digest: reply.digest };
      case 'read-error':
        return { kind: 'error', digest: undefined, error: new ConfigError(reply.problems.map(fromWire), job.path, reply.code === undefined ? {} : { code: reply.code }) };
      case 'invalid': {
        const problems: ConfigProblem[] = [];
        for (let i = 0; i < reply.pages; i++) for (const p of await this.page(i)) problems.push(fromWire(p as WireProblem));
        return { kind: 'error', digest: reply.digest, error: new ConfigError(problems, job.path) };
      }
      case 'config': {
        const assembler = new ConfigAssembler(reply.header, job.env, job.path);
        for (let i = 0; i < reply.pages; i++) {
          for (const item of (await this.page(i)) as ConfigItem[]) {
            if (item[0] === 'agent') assembler.addAgent(item[1], item[2]);
            else if (item[0] === 'headers') assembler.addHeaders(item[1]);
            else assembler.addTools(item[1]);
          }
        }
        return { kind: 'config', digest: reply.fingerprint.digest, config: assembler.finish(reply.fingerprint) };
      }
    }
  }

  /** Stops the worker (a running load rejects). */
  close(): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
  }

  private async page(index: number): Promise<unknown[]> {
    // Each page is taken in a turn of its own: the worker answers after this one ends.
    const reply = (await this.ask({ type: 'page', index })) as PageReply;
    return reply.items;
  }

  private ask(message: LoadJob | PageRequest): Promise<LoadReply | PageReply> {
    const worker = this.worker ?? this.start();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      worker.postMessage(message);
    });
  }

  private start(): Worker {
    const worker = newWorker();
    worker.unref();
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(err);
    };
    worker.on('message', (m: LoadReply | PageReply) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.resolve(m);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`config worker exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}
