/**
 * The worker thread of a config reload (started by config/off-thread.ts): it reads, parses,
 * validates and checks the config file off the gateway's serving loop, and sends the result
 * back in pages the main thread takes one event-loop turn each.
 *
 * Before, a reload did all this on the one loop that serves agents and /healthz: a 1.3 KB file
 * of nested aliases (refused, "expands to more than 200000 values") stalled every agent for
 * 1-2 s, a valid 500 KB file of 30,000 tools sharing one anchor 2.4-3.4 s, a refused 1 MB file
 * 4.7-8.4 s, and a SIGHUP with the file unchanged as long again (a hostile new user's trial 19,
 * M1: test/regressions/config-reload-blocks-event-loop.test.ts).
 *
 * Messages (types in off-thread.ts): a `LoadJob` in, one `LoadReply` out; then, for a reply
 * with pages, one `PageRequest` in and one `PageReply` out per page, in order. A new job drops
 * the pages of the last one.
 */
import { readlinkSync } from 'node:fs';
import { constants as osConstants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { checkConfigText, ConfigError, pendingUnknownKey, readConfigText, sameEnvValues, textDigest, type ConfigProblem } from './load.js';
import type { RawAgent, RawConfig } from './schema.js';
import type { ConfigItem, LoadJob, LoadReply, PageReply, PageRequest, WireProblem } from './off-thread.js';

/** Values (agents, headers, tools, problems) per page: ~1 ms of the main thread's time each. */
const PAGE_ITEMS = 500;

let pages: unknown[][] = [];

/**
 * This thread's scheduling priority lowered (nice 10, `PRIORITY_BELOW_NORMAL`), on Linux, where
 * a thread has its own: on a busy machine (the trial's 2 cores, others running) a worker at
 * the serving thread's priority took CPU time from it, and the loop still waited up to ~270 ms
 * behind a reload. The reload is background work: it may take longer; serving may not. Not the
 * least priority (19): on a saturated machine that made a 500 KB file take over 30 s to
 * reload. Elsewhere (no /proc/thread-self) nothing changes.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0 && tid !== process.pid) setPriority(tid, osConstants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Not Linux, or not allowed: the same priority as the serving thread.
  }
}
lowerPriority();

function post(message: LoadReply | PageReply): void {
  parentPort?.postMessage(message);
}

/** `items` in pages of at most `PAGE_ITEMS` each. */
function inPages<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += PAGE_ITEMS) out.push(items.slice(i, i + PAGE_ITEMS));
  return out;
}

/**
 * The agents as pages of at most `PAGE_ITEMS` values: each agent (without its headers and
 * tools) counts one, then its headers and its tools, each in runs cut at a page's edge.
 */
function configPages(agents: Record<string, RawAgent>): ConfigItem[][] {
  const out: ConfigItem[][] = [];
  let page: ConfigItem[] = [];
  let room = PAGE_ITEMS;
  const makeRoom = (): void => {
    if (room > 0) return;
    out.push(page);
    page = [];
    room = PAGE_ITEMS;
  };
  const run = (kind: 'headers' | 'tools', record: Record<string, unknown> | null | undefined): void => {
    const entries = record == null ? [] : Object.entries(record);
    for (let i = 0; i < entries.length; ) {
      makeRoom();
      const part = entries.slice(i, i + room);
      page.push([kind, part] as ConfigItem);
      room -= part.length;
      i += part.length;
    }
  };
  for (const name of Object.keys(agents)) {
    const { headers, tools, ...rest } = agents[name] as RawAgent;
    makeRoom();
    page.push(['agent', name, rest as RawAgent]);
    room--;
    run('headers', headers);
    run('tools', tools);
  }
  if (page.length > 0) out.push(page);
  return out;
}

function wireProblem(p: ConfigProblem): WireProblem {
  const pending = pendingUnknownKey(p);
  const at = p.line === undefined ? {} : { line: p.line, ...(p.column === undefined ? {} : { column: p.column }) };
  if (pending !== undefined) return { path: p.path, ...at, unknownKey: pending.key, parent: pending.parent.map((s) => (typeof s === 'symbol' ? String(s) : s)) };
  return { path: p.path, message: p.message, ...at };
}

async function load(job: LoadJob): Promise<LoadReply> {
  pages = [];
  let text: string;
  try {
    text = await readConfigText(job.path);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { type: 'read-error', code: err.code, problems: err.problems.map(wireProblem) };
  }
  const digest = textDigest(text);
  if (job.skipDigest === digest) return { type: 'skip' };
  if (job.loaded !== undefined && job.loaded.digest === digest && sameEnvValues(job.loaded, job.env)) return { type: 'unchanged', digest };
  try {
    const { raw, fingerprint } = checkConfigText(text, job.env, job.path, digest, job.running ?? []);
    const { agents, ...header } = raw;
    pages = configPages(agents ?? {});
    return { type: 'config', fingerprint, header: header as RawConfig, pages: pages.length };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    pages = inPages(err.problems.map(wireProblem));
    return { type: 'invalid', digest, pages: pages.length };
  }
}

parentPort?.on('message', (message: LoadJob | PageRequest) => {
  if (message.type === 'page') {
    post({ type: 'page', index: message.index, items: pages[message.index] ?? [] });
    if (message.index === pages.length - 1) pages = [];
    return;
  }
  load(message).then(post, (err: unknown) => post({ type: 'failed', message: String((err as Error)?.stack ?? err) }));
});
