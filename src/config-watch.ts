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
 *
 * The directory itself may go away: `rm -rf conf; mkdir conf`, `mv conf conf.old; mv conf.new
 * conf`, a symlinked directory repointed. On Linux the watch then ends without an `'error'`
 * event (inotify drops it, or it follows the renamed directory to its new name), and before,
 * every later edit was ignored without a log line (a new user's trial 12, M1:
 * test/regressions/config-watch-dir-replaced-stops-reload.test.ts). So the directory's
 * identity (`stat`'s device and inode, symlinks followed) is checked every `identityCheckMs`
 * (1 s) and `debounceMs` after an event that names the directory itself; when it changed,
 * the watch moves to what the path names now and a check is due (the file may have changed
 * with it). When the path is missing (or the watch fails), it is tried again every
 * `identityCheckMs`, at most `MAX_REWATCH_TRIES` times (10 min): once it is back, watched and
 * checked; if it never is, or the watch fails for another reason than a missing path, the
 * warning `config file watch stopped: reload with SIGHUP` is logged once and the watch ends.
 * A directory already missing when the watch starts (removed while the gateway started) is
 * looked for the same way: before, it logged `cannot watch the config file: reload with
 * SIGHUP` and was never watched again (a hostile new operator's trial 45, L5:
 * test/regressions/config-dir-gone-during-startup-never-watched.test.ts).
 * The timers are unref'd, the debounce's and its ceiling's too (they were not: review 36, F6:
 * test/regressions/config-watch-debounce-timers-hold-process-open.test.ts), and the directory
 * watch is not persistent: the watch never holds the process open. The gateway's listeners do,
 * for as long as the watch runs (reload.ts closes it at shutdown), so a due check is not lost.
 */
import { lstatSync, readlinkSync, stat, statSync, watch, type FSWatcher, type Stats } from 'node:fs';
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
  /** How often the directory's identity is checked, and a missing one tried again, in ms. Default `IDENTITY_CHECK_MS` (1000). */
  identityCheckMs?: number;
  /** Tries to watch a directory that went away before the watch stops. Default `MAX_REWATCH_TRIES` (600). */
  maxRewatchTries?: number;
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

/** How often the directory's identity is checked, and a missing one tried again, in ms: 1 s. */
export const IDENTITY_CHECK_MS = 1000;

/** Tries to watch the directory again after it went away before giving up: 600 (10 min at 1 s). */
export const MAX_REWATCH_TRIES = 600;

/** The warning of a directory that is missing (at the start of the watch, or later): it is looked for every `identityCheckMs`. */
export const GONE_MSG = 'config directory is gone: watching for it to come back (reload with SIGHUP meanwhile)';

/** Errors that mean the directory is (for now) not there: keep trying. Anything else stops the watch. */
const MISSING_CODES = new Set(['ENOENT', 'ENOTDIR']);

/** Identity of a directory: its device and inode (symlinks followed). */
function identity(s: Stats): string {
  return `${s.dev}:${s.ino}`;
}

/**
 * Starts the watch; returns its `close` (idempotent; true when a check was waiting, in its
 * debounce, and is dropped: reload.ts logs that), or undefined when the directory cannot
 * be watched at start for another reason than being missing (logged at warn level: reload
 * with SIGHUP). A directory missing at start, or replaced or removed later, is watched once
 * it is there (see the module doc); a watch that cannot be re-established logs
 * `config file watch stopped: reload with SIGHUP` once and stops.
 */
export function watchConfigFile(opts: ConfigWatchOptions): (() => boolean) | undefined {
  const { file, debounceMs, log } = opts;
  const maxDelayMs = Math.max(opts.maxDelayMs, debounceMs);
  const identityCheckMs = opts.identityCheckMs ?? IDENTITY_CHECK_MS;
  const maxRewatchTries = opts.maxRewatchTries ?? MAX_REWATCH_TRIES;
  const dir = dirname(file);
  const dirName = basename(dir);
  let names = watchedNames(file);
  let quiet: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  /** The identity of the directory `watcher` watches (read just before it started). */
  let watched: string | undefined;
  /** The periodic identity check (while watching) or the next try to watch again (while not). */
  let poll: NodeJS.Timeout | undefined;
  /** An identity check soon after an event naming the directory itself. */
  let soon: NodeJS.Timeout | undefined;
  let checking = false;
  let tries = 0;
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
  const dropWatcher = (): void => {
    watcher?.close();
    watcher = watched = undefined;
  };
  const close = (): boolean => {
    const waiting = !closed && quiet !== undefined;
    closed = true;
    clearTimers();
    clearTimeout(poll);
    clearTimeout(soon);
    dropWatcher();
    return waiting;
  };
  const stop = (err: unknown): void => {
    log.warn({ err, dir }, 'config file watch stopped: reload with SIGHUP');
    close();
  };
  const later = (fn: () => void, ms: number): NodeJS.Timeout => setTimeout(fn, ms).unref();

  /** Watches `dir` as it is now, `id` its identity; throws what `fs.watch` throws. */
  const start = (id: string): void => {
    const w = watch(dir, { persistent: false }, (_event, filename) => {
      if (closed || w !== watcher) return;
      if (filename !== null && filename !== undefined && String(filename) === dirName) {
        // inotify names the watched directory itself when it is deleted or renamed.
        clearTimeout(soon);
        soon = later(checkIdentity, debounceMs);
      }
      if (!eventCounts(filename, names)) return;
      if (quiet) quiet.refresh();
      else quiet = later(due, debounceMs);
      deadline ??= later(due, maxDelayMs);
    });
    w.on('error', (err) => {
      if (closed || w !== watcher) return;
      // Once per run of tries (a watch that keeps failing is not logged each second).
      if (tries === 0) log.warn({ err, dir }, 'config directory watch failed: watching it again');
      dropWatcher();
      retry();
    });
    watcher = w;
    watched = id;
  };

  /** Not watching: try again `identityCheckMs` from now, or stop after `maxRewatchTries`. */
  const retry = (err?: unknown): void => {
    if (closed) return;
    if (tries >= maxRewatchTries) return stop(err);
    tries += 1;
    clearTimeout(poll);
    poll = later(checkIdentity, identityCheckMs);
  };

  /**
   * Reads what `dir` names now. Watching and unchanged: check again later. Changed (replaced,
   * or back after it was missing): watch it, and a check is due. Missing: try again later.
   */
  function checkIdentity(): void {
    if (closed || checking) return;
    clearTimeout(soon);
    checking = true;
    stat(dir, (statErr, s) => {
      checking = false;
      if (closed) return;
      const id = statErr ? undefined : s.isDirectory() ? identity(s) : undefined;
      if (id !== undefined && id === watched) {
        tries = 0; // the watch has lasted a period: a later loss gets its full tries
        clearTimeout(poll);
        poll = later(checkIdentity, identityCheckMs);
        return;
      }
      const wasWatching = watcher !== undefined;
      dropWatcher();
      if (id === undefined) {
        const code = (statErr as NodeJS.ErrnoException | null)?.code ?? 'ENOTDIR';
        if (!MISSING_CODES.has(code)) return stop(statErr);
        if (wasWatching) log.warn({ dir, code }, GONE_MSG);
        return retry(statErr);
      }
      try {
        start(id);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        return MISSING_CODES.has(code) ? retry(err) : stop(err);
      }
      if (wasWatching) log.info({ dir }, 'config directory replaced: watching the new one');
      else log.info({ dir }, 'config directory is back: watching it again');
      clearTimeout(poll);
      poll = later(checkIdentity, identityCheckMs);
      due();
    });
  }

  try {
    start(identity(statSync(dir)));
    poll = later(checkIdentity, identityCheckMs);
    log.debug({ dir, files: [...names] }, 'watching the config file for changes');
    return close;
  } catch (err) {
    dropWatcher();
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (MISSING_CODES.has(code)) {
      // Gone already (removed while the gateway started): looked for as when it goes later.
      log.warn({ dir, code }, GONE_MSG);
      retry(err);
      return close;
    }
    log.warn({ err, dir }, 'cannot watch the config file: reload with SIGHUP');
    return undefined;
  }
}
