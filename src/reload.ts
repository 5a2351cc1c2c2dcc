/**
 * Config reload: on `SIGHUP` (wired in `cli.ts`) and when the config file changes on disk.
 *
 * - The file is loaded exactly as at start-up (`readConfigText`, then the loader's checks,
 *   what `loadConfigFile` does), read once per reload, but in a worker thread
 *   (config/off-thread.ts, config/reload-worker.ts): the serving loop only assembles the
 *   result, a page per turn. Before, the parse ran on the serving loop and a file within the
 *   documented bounds stalled every agent and /healthz for 1-8 s (a hostile new user's trial
 *   19, M1: test/regressions/config-reload-blocks-event-loop.test.ts).
 * - A file whose text and `${VAR}` values are those the running config was made from
 *   (`configFingerprint`) is not applied: the log says `UNCHANGED_MSG` (so a `SIGHUP` with
 *   nothing changed costs a read, not a parse). A valid file is applied
 *   with `GatewayControl.setConfig`: requests that arrive from then on use it; an exchange in
 *   flight keeps the limits it resolved when it started. The log says `config reloaded`
 *   with the agent names, the first 50 of each list and a count of the rest
 *   (observability/listed-names.ts; never a header value or the resume secret).
 * - An invalid file is logged at error level with its problems (YAML path, line:column; the
 *   first 50 in file order, then `more_problems`, the number left out) as
 *   `config reload failed`, and the running config stays. So is a file that cannot be
 *   read (deleted, no permission, over the 1 MiB cap, not a regular file): its one problem
 *   names the file and why, and `code` is the system error code when there is one
 *   (`ENOENT`: the file is missing). The same for SIGHUP and for a file change.
 * - An agent's TLS settings (`tls_insecure_skip_verify`) apply like the rest: `setConfig`
 *   hands the agents to the upstream dispatcher, whose requests of an agent go on the pool of
 *   its origin and settings, and a pool no agent of the new config uses closes once its
 *   requests are over (routing/upstream-pools.ts; a new user's trial 9, F2: connections made
 *   without certificate checks kept serving after a reload turned the flag off).
 * - Keys that only take effect at start-up (`listen`, `ops_listen`, `resume`, a
 *   `max_request_bytes` above the request body limit the app was built with) are compared,
 *   and a change is logged as a warning naming the key; the rest of the file applies.
 *
 * The watcher (src/config-watch.ts): `fs.watch` on the file's *directory* (editors save by
 * renaming a new file over the old one; a Kubernetes ConfigMap swaps a `..data` symlink
 * there). Only events for the file's name, or for a symlink its path goes through, count
 * (an event with no filename counts); other files in the directory neither trigger nor delay
 * a check. A check runs `debounceMs` after the last such event, or at the latest `maxDelayMs`
 * after the first. A directory replaced (deleted and re-created, renamed over, a symlinked
 * directory repointed) is watched again and a check runs; one that stays missing for 10 min,
 * or cannot be watched, ends the watch with one warning (reload with SIGHUP). It reads the file and reloads only when its bytes differ from the last
 * text it loaded or rejected, so editors' multi-step saves cost one small read each, and one
 * failure is logged once. A check that cannot read the file is logged unless it fails
 * exactly as the last failure logged did (same problems, same code) with no successful load
 * in between: editors fire several events per save, and an oversized or missing file would
 * otherwise repeat its line for each (a debug line, `REPEATED_FAILURE_MSG`, says a check
 * found it again).
 * Such a check also forgets the last text, so the next file that reads is loaded and logged
 * whatever its bytes: an operator who restores the file sees `config reloaded` (or
 * `UNCHANGED_MSG`, when it is the text of the running config).
 * (Before, a file check dropped every read error silently: only SIGHUP reported it, a new
 * user's trial: test/regressions/config-watch-read-error-silent.test.ts.)
 * `SIGHUP` always reads the file and reports what it finds (`UNCHANGED_MSG` included). The
 * `${VAR}` values come from `env`, for the bin the process's environment, fixed at its start:
 * a reload never sees a new value there (README, "Config reload"; a hostile operator's trial
 * 53, F6: `export` then `SIGHUP` logged `UNCHANGED_MSG`). `watch: false` (the bin's
 * `--no-watch-config`): `SIGHUP` only, for a writer that cannot replace the file atomically
 * (trial 53, F5: a slow in-place write was read, and applied, half-written).
 * Reloads never overlap: they run one after another; those asked for while one waits to
 * start are coalesced with it (see `schedule`). Once the gateway shuts down (`close`), a
 * reload still waiting, or one whose file is still loading, is dropped: one line,
 * `DROPPED_MSG`, and nothing applied (a hostile operator's trial 49, finding 3); so is a file
 * check still in its debounce (trial 51, finding 3: dropped silently before).
 */
import { resolve as resolvePath } from 'node:path';
import type { Logger } from 'pino';
import { skipsVerification, warnInsecureAgent, type GatewayControl } from './app.js';
import { watchConfigFile } from './config-watch.js';
import { configFingerprint, ConfigError, readConfigText, textDigest, type ConfigProblem, type OwnListener } from './config/load.js';
import { ConfigThread } from './config/off-thread.js';
import { shownProblems } from './config/problem-list.js';
import { listedNames } from './observability/listed-names.js';
import { requestBodyLimit } from './config/resolve.js';
import type { GatewayConfig } from './config/types.js';

/** What started a reload. */
export type ReloadTrigger = 'sighup' | 'file' | 'manual';

export type ReloadResult =
  | {
      readonly ok: true;
      readonly trigger: ReloadTrigger;
      readonly config: GatewayConfig;
      readonly restartNeeded: readonly string[];
      /** true when the file's text and its `${VAR}` values were those of the running config: nothing was applied (`UNCHANGED_MSG`). */
      readonly unchanged?: true;
    }
  | { readonly ok: false; readonly trigger: ReloadTrigger; readonly problems: readonly ConfigProblem[] };

export interface ReloaderOptions {
  /** The config file, as given on the command line (relative to the cwd, or absolute). */
  path: string;
  /** Environment for `${VAR}` and `ADCP_GATEWAY_RESUME_SECRET`. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The running gateway (`app.gateway`). */
  control: Pick<GatewayControl, 'config' | 'setConfig'>;
  log: Logger;
  /** Watch the file for changes. Default true. */
  watch?: boolean;
  /** Quiet period after the last file event that counts before the file is checked, in ms. Default 100. */
  debounceMs?: number;
  /**
   * Longest wait from the first file event that counts to the check, in ms, however often
   * the file keeps changing (at least `debounceMs`). Default 1000.
   */
  maxDelayMs?: number;
  /**
   * The config the app was built with (start-up only keys are compared with it).
   * Default: `control.config` when the reloader is created.
   */
  startupConfig?: GatewayConfig;
  /**
   * The addresses the gateway listens on (`listen`, and `ops_listen` when it has one: its
   * start-up host, the port it got), which no agent url of a new file may name either: a change
   * of `listen` applies only after a restart, and a reload that checked only the file's `listen`
   * applied an agent url naming the running port (a hostile trial 45, L4). Default: none (only
   * the file's listeners are checked, as at start-up).
   */
  listening?: readonly OwnListener[];
  /**
   * Called after every reload attempt that is logged, applied or failed (metrics:
   * `config_reloads_total`); not for a file check that finds no change, nor one that
   * repeats the failure last logged.
   */
  onResult?: (result: ReloadResult) => void;
}

export interface Reloader {
  /** Loads the file now and applies it when valid. Resolves when done; never rejects. */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /**
   * Stops reloading (the gateway shuts down): stops watching, and a reload still waiting to
   * start (a file check in its debounce included), or running (its file being loaded), is
   * dropped, not applied: one `DROPPED_MSG` line each.
   */
  close(): void;
}

/** Default quiet period after a file event: 100 ms. */
export const DEFAULT_RELOAD_DEBOUNCE_MS = 100;

/** Default longest wait from the first file event to the check: 1000 ms. */
export const DEFAULT_RELOAD_MAX_DELAY_MS = 1000;

/** The info line of a reload that found the running config's text and variable values: nothing is applied. */
export const UNCHANGED_MSG = 'config unchanged: the file and the values of its ${VAR} references are those of the running config; nothing to reload';

/** The info line of a reload dropped because the gateway began shutting down before it was applied (`Reloader.close`). */
export const DROPPED_MSG = 'config reload dropped: the gateway is shutting down';

/** The debug line of a file check that failed exactly as the failure last logged (which is not logged again). */
export const REPEATED_FAILURE_MSG = 'config file check: the same failure as last logged, not logged again';

export function createReloader(opts: ReloaderOptions): Reloader {
  const { control, log } = opts;
  const env = opts.env ?? process.env;
  const absolute = resolvePath(opts.path);
  const startup = opts.startupConfig ?? control.config;
  const startupBodyLimit = requestBodyLimit(startup);
  const debounceMs = opts.debounceMs ?? DEFAULT_RELOAD_DEBOUNCE_MS;

  /** Digest of the last text that was loaded or rejected: a file event with the same bytes is no change. */
  let lastDigest: string | undefined;
  /** The failure last logged (its code and problems, as JSON), until a load succeeds: a file check that fails the same way stays quiet. */
  let lastFailure: string | undefined;
  let closed = false;
  const thread = new ConfigThread();

  // Not seeded from the file now: it may already differ from the text the running config
  // came from. The first file event therefore always reads the file (at worst it finds the
  // running config's text and logs `UNCHANGED_MSG`).

  async function attempt(trigger: ReloadTrigger, onlyIfChanged: boolean): Promise<ReloadResult | undefined> {
    // Read, parsed and checked in a worker thread: the serving loop only assembles the result,
    // a page per turn (config/off-thread.ts). The text is read once (one bounded read, like the
    // loader's own: a FIFO or a huge file must not block or grow memory) and compared there.
    const running = control.config;
    const outcome = await thread.load({ path: absolute, env, skipDigest: onlyIfChanged ? lastDigest : undefined, loaded: configFingerprint(running), running: opts.listening });
    // The gateway began shutting down while the file loaded (`close`): nothing applies.
    if (closed) return dropped(trigger);
    if (outcome.kind === 'skip') return undefined;
    if (outcome.kind === 'error' && outcome.digest === undefined) {
      // Whatever the file holds once it reads again is new: loaded and logged.
      lastDigest = undefined;
      // A file check reports it too (deleted, unreadable, oversized), once. An editor that
      // saves by rename never leaves the path missing; one that deletes and rewrites may be
      // caught in between, and the rewrite's own event then loads the file (`config reloaded`).
      return failed(trigger, outcome.error, onlyIfChanged);
    }
    lastDigest = outcome.digest;
    if (outcome.kind === 'error') return failed(trigger, outcome.error);
    if (outcome.kind === 'unchanged') {
      lastFailure = undefined;
      log.info({ trigger, config: absolute }, UNCHANGED_MSG);
      return { ok: true, trigger, config: running, restartNeeded: [], unchanged: true };
    }
    const next = outcome.config;
    const previous = control.config;
    const restartNeeded = restartOnlyChanges(startup, startupBodyLimit, next);
    control.setConfig(next);
    lastFailure = undefined;
    if (next.log_level !== previous.log_level) log.level = next.log_level;
    const before = new Set(previous.agents.keys());
    const agents = [...next.agents.keys()];
    log.info(
      {
        trigger,
        config: absolute,
        ...listedNames('agents', agents),
        ...listedNames('added', agents.filter((a) => !before.has(a))),
        ...listedNames('removed', [...before].filter((a) => !next.agents.has(a))),
      },
      'config reloaded',
    );
    for (const key of restartNeeded) {
      const what = key === 'max_request_bytes' ? `a \`max_request_bytes\` above ${startupBodyLimit} (the request body limit at start-up)` : `\`${key}\``;
      log.warn({ key, config: absolute }, `config reload: ${what} only takes effect after a restart; the running value stays`);
    }
    // Warned when verification goes off: the flag on an https: url, where before it was not (the
    // flag turned on, or the url moved from http:, where it did nothing: review 31, finding 4).
    for (const agent of next.agents.values()) {
      if (skipsVerification(agent) && !skipsVerification(previous.agents.get(agent.name))) warnInsecureAgent(log, agent);
    }
    return { ok: true, trigger, config: next, restartNeeded };
  }

  /**
   * A reload that would start, or finishes, once the reloader is closed (the gateway shuts
   * down: cli.ts): not applied, whatever the file holds; one line says so. Reported failure (a
   * hostile operator's trial 49, finding 3): `SIGHUP` then `SIGTERM` 20 ms later logged
   * `config reloaded` ~395 ms after `shutting down` and applied it, though a shutdown stops
   * reloading (test/regressions/reload-finishing-after-sigterm-logged-applied.test.ts).
   */
  function dropped(trigger: ReloadTrigger): undefined {
    log.info({ trigger, config: absolute }, DROPPED_MSG);
    return undefined;
  }

  /**
   * Logs a failed reload (error level: the first `MAX_SHOWN_PROBLEMS` (50) problems, each with
   * its YAML path, and `more_problems`, the number left out, if any; `code` when the file could
   * not be read) and returns its result (with every problem); with `quietIfRepeated` (a file
   * check), a failure the same as the last one logged is not logged again and returns undefined.
   */
  function failed(trigger: ReloadTrigger, err: unknown, quietIfRepeated = false): ReloadResult | undefined {
    const problems: ConfigProblem[] = err instanceof ConfigError ? err.problems : [{ path: '', message: (err as Error).message }];
    const code = err instanceof ConfigError ? err.code : undefined;
    // The first problems only (a line of 75,000 was over the log's buffer and dropped: F4).
    const { shown, more } = shownProblems(problems);
    const logged = shown.map((p) => ({ path: p.path, ...(p.line === undefined ? {} : { line: p.line, column: p.column }), message: p.message }));
    const omitted = more === 0 ? {} : { more_problems: more };
    const key = JSON.stringify([code ?? null, logged, more]);
    if (quietIfRepeated && key === lastFailure) {
      log.debug({ trigger, config: absolute }, REPEATED_FAILURE_MSG);
      return undefined;
    }
    lastFailure = key;
    log.error({ trigger, config: absolute, ...(code === undefined ? {} : { code }), problems: logged, ...omitted }, 'config reload failed: keeping the running config');
    return { ok: false, trigger, problems };
  }

  /**
   * Runs reloads one at a time, in order. A reload asked for while one is waiting to start is
   * coalesced with it: file checks into one, forced reloads (SIGHUP) into one, and a file check
   * into a waiting forced reload (which reads the file anyway). So however often a reload is
   * asked for while one runs, one more runs after it.
   */
  let chain: Promise<unknown> = Promise.resolve();
  let pendingFileCheck: Promise<ReloadResult | undefined> | undefined;
  let pendingForced: Promise<ReloadResult | undefined> | undefined;
  function schedule(trigger: ReloadTrigger, onlyIfChanged: boolean): Promise<ReloadResult | undefined> {
    if (pendingForced) return pendingForced;
    if (onlyIfChanged && pendingFileCheck) return pendingFileCheck;
    const p = chain.then(async () => {
      if (onlyIfChanged) pendingFileCheck = undefined;
      else pendingForced = undefined;
      try {
        if (closed) return dropped(trigger);
        const result = await attempt(trigger, onlyIfChanged);
        if (result) opts.onResult?.(result);
        return result;
      } catch (err) {
        log.error({ err, trigger }, 'config reload failed unexpectedly: keeping the running config');
        return undefined;
      }
    });
    chain = p;
    if (onlyIfChanged) pendingFileCheck = p;
    else pendingForced = p;
    return p;
  }

  const stopWatch =
    opts.watch === false
      ? undefined
      : watchConfigFile({
          file: absolute,
          debounceMs,
          maxDelayMs: opts.maxDelayMs ?? DEFAULT_RELOAD_MAX_DELAY_MS,
          log,
          onChange: () => {
            if (!closed) void schedule('file', true);
          },
        });

  /**
   * An edit made between the start-up read and the watch's start raised no event, so it was
   * never applied (a hostile trial 21, M1: an agent added then still got 404 8 s later): once
   * the watch runs, the file is read on this thread (one bounded read and a SHA-256, no
   * parse) and checked as after an event when its text is not the running config's, or when
   * it cannot be read. Nothing is logged when it is the same text.
   */
  async function checkSinceStartup(): Promise<void> {
    const loaded = configFingerprint(control.config);
    let same = false;
    try {
      same = loaded !== undefined && textDigest(await readConfigText(absolute)) === loaded.digest;
    } catch {
      // Unreadable now: the check below reports it.
    }
    if (!same && !closed) void schedule('file', true);
  }
  if (stopWatch !== undefined) void checkSinceStartup();

  return {
    async reload(trigger = 'manual') {
      // A forced reload always reads and reports.
      const result = await schedule(trigger, false);
      return result ?? { ok: false, trigger, problems: [{ path: '', message: closed ? DROPPED_MSG : 'reload failed unexpectedly (see the log)' }] };
    },
    close() {
      closed = true;
      // A file check waiting in its debounce is dropped too, with its line (a hostile
      // operator's trial 51, finding 3: it went silently:
      // test/regressions/pending-file-reload-dropped-silently.test.ts). The watch's `close`
      // says so once: a second call finds it closed (config-watch.ts).
      if (stopWatch?.() === true) dropped('file');
      // The worker goes once the reloads asked for are done.
      void chain.then(() => thread.close());
    },
  };
}

/** Top-level keys read once, when the app is built or starts listening. */
const STARTUP_ONLY_KEYS = ['listen', 'ops_listen', 'resume'] as const;

/** Start-up-only keys whose value in `next` differs from the running one (compared, never printed). */
function restartOnlyChanges(startup: GatewayConfig, startupBodyLimit: number, next: GatewayConfig): string[] {
  const out: string[] = [];
  for (const key of STARTUP_ONLY_KEYS) {
    const was = (startup as unknown as Record<string, unknown>)[key];
    const now = (next as unknown as Record<string, unknown>)[key];
    if (JSON.stringify(was) !== JSON.stringify(now)) out.push(key);
  }
  if (requestBodyLimit(next) > startupBodyLimit) out.push('max_request_bytes');
  return out;
}
