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
export const PAGE_ITEMS = 500;

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

/** `items` cut in pages of at most `PAGE_ITEMS` values (a `ConfigItem` of n entries counts n). */
function paginate<T>(items: readonly T[], size: (item: T) => number): T[][] {
  const out: T[][] = [];
  let page: T[] = [];
  let filled = 0;
  for (const item of items) {
    const n = size(item);
    if (filled > 0 && filled + n > PAGE_ITEMS) {
      out.push(page);
      page = [];
      filled = 0;
    }
    page.push(item);
    filled += n;
  }
  if (page.length > 0) out.push(page);
  return out;
}

/** The agents of `raw` as items: each agent without its headers and tools, then those in runs of at most `PAGE_ITEMS`. */
function configItems(agents: Record<string, RawAgent>): ConfigItem[] {
  const items: ConfigItem[] = [];
  const runs = <T>(kind: 'headers' | 'tools', record: Record<string, T> | null | undefined): void => {
    if (record == null) return;
    const entries = Object.entries(record);
    for (let i = 0; i < entries.length; i += PAGE_ITEMS) items.push([kind, entries.slice(i, i + PAGE_ITEMS)] as ConfigItem);
  };
  for (const name of Object.keys(agents)) {
    const { headers, tools, ...rest } = agents[name] as RawAgent;
    items.push(['agent', name, rest as RawAgent]);
    runs('headers', headers);
    // Tools with the same settings (an anchor's aliases) as one object, posted once per page.
    const same = new Map<string, unknown>();
    runs('tools', tools == null ? tools : Object.fromEntries(Object.entries(tools).map(([name, t]) => {
      const key = JSON.stringify(t);
      if (!same.has(key)) same.set(key, t);
      return [name, same.get(key)];
    })));
  }
  return items;
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
  if (job.skipDigest === digest) return { type: 'skip', digest };
  if (job.loaded !== undefined && job.loaded.digest === digest && sameEnvValues(job.loaded, job.env)) return { type: 'unchanged', digest };
  try {
    const { raw, fingerprint } = checkConfigText(text, job.env, job.path);
    const { agents, ...header } = raw;
    pages = paginate(configItems(agents ?? {}), (item) => (item[0] === 'agent' ? 1 : item[1].length));
    return { type: 'config', digest, fingerprint, header: header as RawConfig, pages: pages.length };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    pages = paginate(err.problems, () => 1).map((page) => page.map(wireProblem));
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
