/**
 * The config file watcher behind `createReloader` (src/reload.ts).
 *
 * `fs.watch` on the file's *directory*: editors save by writing a new file and renaming it
 * over the old one, which replaces the inode a watch on the file would hold, and a
 * Kubernetes ConfigMap swaps a `..data` symlink in the same directory.
 *
 * Only events that can change what the config path reads count (`watchedNames`): the file's
 * own name; the first component, within the directory, of each symlink hop from it (a
 * ConfigMap's `gateway.yaml -> ..data/gateway.yaml` adds `..data`); and `<that>_tmp`, the
 * name Kubernetes' AtomicWriter (pkg/volume/util/atomic_writer.go) creates the new symlink
 * under before renaming it over `..data`. An event without a filename (some platforms give
 * none) counts. Other files in the directory (a log file, an editor's swap file) neither
 * trigger nor delay a check. (Before, every event restarted the quiet period: a sibling file
 * written every 50 ms held an edit back until its writes stopped, a new user's trial:
 * test/regressions/reload-held-back-by-sibling-writes.test.ts.)
 *
 * The names are read with `lstat`/`readlink` (sync, at most `MAX_LINK_HOPS` hops) when the
 * watch starts and again each time a check is due, so a file that becomes a symlink later is
 * followed. The check runs once no event that counts has come for `debounceMs`, or at the
 * latest `maxDelayMs` after the first of them: a file rewritten without pause still loads.
 */
import { lstatSync, readlinkSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Logger } from 'pino';

/** Symlink hops followed from the config path (Linux's own limit is 40, `SYMLOOP_MAX`). */
export const MAX_LINK_HOPS = 40;

export interface ConfigWatchOptions {
  /** The config file, absolute. */
  file: string;
  /** Quiet period after the last event that counts, in ms. */
  debounceMs: number;
  /** Longest wait from the first event that counts to the check, in ms (at least `debounceMs`). */
  maxDelayMs: number;
  log: Logger;
  /** Called when a check is due (the caller reads the file). */
  onChange: () => void;
}

/**
 * The names in `dirname(file)` whose change can change what `file` reads: its basename, and
 * for each symlink hop that lands inside that directory, the hop's first path component and
 * that name + `_tmp`. A path that cannot be read (missing, no permission) ends the chain.
 */
export function watchedNames(file: string): Set<string> {
  const dir = dirname(file);
  const names = new Set([basename(file)]);
  let path = file;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    try {
      if (!lstatSync(path).isSymbolicLink()) break;
      path = resolve(dirname(path), readlinkSync(path));
    } catch {
      break;
    }
    const rel = relative(dir, path);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue; // outside the directory
    const first = rel.split(sep)[0]!;
    names.add(first).add(`${first}_tmp`);
  }
  return names;
}

/** Whether an `fs.watch` event for `filename` counts: no filename (the platform gave none), or one of `names`. */
export function eventCounts(filename: string | Buffer | null | undefined, names: ReadonlySet<string>): boolean {
  if (filename === null || filename === undefined) return true;
  const name = String(filename);
  return name === '' || names.has(name);
}

/**
 * Starts the watch; returns its `close` (idempotent), or undefined when the directory cannot
 * be watched (logged at warn level: reload with SIGHUP). A watch that fails later is logged
 * the same way and stops.
 */
export function watchConfigFile(opts: ConfigWatchOptions): (() => void) | undefined {
  const { file, debounceMs, log } = opts;
  const maxDelayMs = Math.max(opts.maxDelayMs, debounceMs);
  const dir = dirname(file);
  let names = watchedNames(file);
  let quiet: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let closed = false;

  const clearTimers = (): void => {
    clearTimeout(quiet);
    clearTimeout(deadline);
    quiet = deadline = undefined;
  };
  const due = (): void => {
    clearTimers();
    if (closed) return;
    names = watchedNames(file);
    opts.onChange();
  };
  const close = (): void => {
    closed = true;
    clearTimers();
    watcher?.close();
    watcher = undefined;
  };

  try {
    watcher = watch(dir, { persistent: false }, (_event, filename) => {
      if (closed || !eventCounts(filename, names)) return;
      if (quiet) quiet.refresh();
      else quiet = setTimeout(due, debounceMs);
      deadline ??= setTimeout(due, maxDelayMs);
    });
    watcher.on('error', (err) => {
      log.warn({ err, dir }, 'config file watch stopped: reload with SIGHUP');
      close();
    });
    log.debug({ dir, files: [...names] }, 'watching the config file for changes');
    return close;
  } catch (err) {
    log.warn({ err, dir }, 'cannot watch the config file: reload with SIGHUP');
    return undefined;
  }
}
