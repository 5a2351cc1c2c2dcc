/**
 * Regression (a new user's trial): the config file watcher (src/reload.ts) restarted its
 * 100 ms quiet period on every file event in the config's directory, not only events for
 * the config file. With a sibling file written every 50 ms, an edit to the config applied
 * 4.5 s late, once the sibling writes stopped; with the gateway's own log file there at ~15
 * requests/s, 1.3 s late. A busy sibling file held back every reload, without bound.
 *
 * Input: a real gateway app and its reloader (as test/integration/reload.test.ts) watching a
 * temp config dir; a sibling file in that dir rewritten every ~10 ms by a bounded loop.
 * Expected:
 * - the config replaced while the sibling writes continue is applied before they end;
 * - sibling writes alone start no check: the first reload logged is the config change's
 *   (a reloader's first check always loads and logs, whatever the bytes);
 * - a Kubernetes ConfigMap update (`gateway.yaml -> ..data/gateway.yaml`, `..data` swapped
 *   by renaming `..data_tmp` over it) is still seen, sibling writes or not;
 * - events for the config itself, without pause, still end in a check (`maxDelayMs`);
 * - `eventCounts`: an event without a filename counts (platforms that give none).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { eventCounts, watchedNames } from '../../src/config-watch.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createReloader, type ReloaderOptions } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { startGateway } from '../helpers/gateway.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const LIMIT_A = 8192;
const LIMIT_B = 4096;
/** Writes per loop (each followed by a ~10 ms pause): at least 4 s of writes, well past any check. */
const LOOP_WRITES = 400;
const yaml = (limit: number) => `log_level: silent\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n    max_response_bytes: ${limit}\n`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `write(n)` for n = 1..LOOP_WRITES, ~10 ms apart, until `stop()`; `done` settles when it ends. */
function writeLoop(write: (n: number) => Promise<void>): { done: Promise<'writes ended'>; written: () => number; stop: () => void } {
  let n = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped && n < LOOP_WRITES) {
      await write(++n);
      await pause(10);
    }
    return 'writes ended' as const;
  })();
  return { done, written: () => n, stop: () => void (stopped = true) };
}

async function withReloader(
  layout: (dir: string) => Promise<string>,
  opts: Partial<ReloaderOptions>,
  body: (ctx: { dir: string; file: string; limit: () => number | undefined; log: ReturnType<typeof captureLog> }) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-reload-sibling-'));
  const file = await layout(dir);
  const gw = await startGateway(await loadConfigFile(file, { env: {} }));
  const log = captureLog();
  const reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: log.logger, ...opts });
  try {
    await body({ dir, file, limit: () => gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes, log });
  } finally {
    reloader.close();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const plainFile = async (dir: string): Promise<string> => {
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml(LIMIT_A));
  return file;
};

/** `gateway.yaml -> ..data/gateway.yaml`, `..data -> ..2026_a`, as a Kubernetes ConfigMap volume. */
const configMap = async (dir: string): Promise<string> => {
  await mkdir(join(dir, '..2026_a'));
  await writeFile(join(dir, '..2026_a', 'gateway.yaml'), yaml(LIMIT_A));
  await symlink('..2026_a', join(dir, '..data'));
  await symlink(join('..data', 'gateway.yaml'), join(dir, 'gateway.yaml'));
  return join(dir, 'gateway.yaml');
};

/** Kubernetes' AtomicWriter: a new timestamped dir, `..data_tmp` pointing at it, renamed over `..data`. */
async function configMapUpdate(dir: string, text: string): Promise<void> {
  await mkdir(join(dir, '..2026_b'));
  await writeFile(join(dir, '..2026_b', 'gateway.yaml'), text);
  await symlink('..2026_b', join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  await rm(join(dir, '..2026_a'), { recursive: true });
}

async function replaceFile(file: string, text: string, n: number): Promise<void> {
  await writeFile(`${file}.${n}.tmp`, text);
  await rename(`${file}.${n}.tmp`, file);
}

/** Starts sibling writes, makes `change` once some are done, and says what came first: the reload or the end of the writes. */
async function changeDuringSiblingWrites(dir: string, log: ReturnType<typeof captureLog>, change: () => Promise<void>): Promise<string> {
  const sibling = writeLoop((n) => writeFile(join(dir, 'gateway.log'), `line ${n}\n`, { flag: 'a' }));
  try {
    while (sibling.written() < 5) await pause(10); // bounded: the loop ends after LOOP_WRITES
    const reloaded = log.waitFor('config reloaded').then(() => 'reloaded');
    reloaded.catch(() => {}); // the writes may end first (the failure); the waiter then times out unobserved
    await change();
    return await Promise.race([reloaded, sibling.done]);
  } finally {
    sibling.stop();
    await sibling.done;
  }
}

describe('a busy sibling file neither holds back nor triggers a config reload', () => {
  it('a config edit applies while a sibling file is still being written', OPTIONS, async () => {
    // maxDelayMs far off: only ignoring the sibling's events lets the check run.
    await withReloader(plainFile, { debounceMs: 500, maxDelayMs: 60_000 }, async ({ dir, file, limit, log }) => {
      assert.equal(await changeDuringSiblingWrites(dir, log, () => replaceFile(file, yaml(LIMIT_B), 1)), 'reloaded');
      assert.equal(log.entries.find((e) => e.msg === 'config reloaded')?.trigger, 'file');
      assert.equal(limit(), LIMIT_B);
    });
  });

  it('sibling writes alone start no check: the first reload logged is the config change', OPTIONS, async () => {
    await withReloader(plainFile, { debounceMs: 20 }, async ({ dir, file, limit, log }) => {
      // Spaced wider than the quiet period: a check per write if the events counted.
      for (let n = 1; n <= 20; n++) {
        await writeFile(join(dir, 'gateway.log'), `line ${n}\n`, { flag: 'a' });
        await pause(50);
      }
      await replaceFile(file, yaml(LIMIT_B), 1);
      await log.waitFor('config reloaded');
      assert.equal(limit(), LIMIT_B, 'the first reload is the change, not a check started by the sibling');
      assert.equal(log.entries.filter((e) => e.msg.startsWith('config reload')).length, 1, JSON.stringify(log.entries));
    });
  });

  it('a Kubernetes ConfigMap update (..data swapped) applies while a sibling file is being written', OPTIONS, async () => {
    await withReloader(configMap, { debounceMs: 500, maxDelayMs: 60_000 }, async ({ dir, limit, log }) => {
      assert.equal(await changeDuringSiblingWrites(dir, log, () => configMapUpdate(dir, yaml(LIMIT_B))), 'reloaded');
      assert.equal(limit(), LIMIT_B);
    });
  });

  it('a config file rewritten without pause is still checked, maxDelayMs after its first event', OPTIONS, async () => {
    await withReloader(plainFile, { debounceMs: 500, maxDelayMs: 1000 }, async ({ file, limit, log }) => {
      const reloaded = log.waitFor('config reloaded').then(() => 'reloaded');
      reloaded.catch(() => {});
      const rewrites = writeLoop((n) => replaceFile(file, yaml(LIMIT_B), n));
      try {
        assert.equal(await Promise.race([reloaded, rewrites.done]), 'reloaded');
      } finally {
        rewrites.stop();
        await rewrites.done;
      }
      assert.equal(limit(), LIMIT_B);
    });
  });

  it('which events count: the config, its symlink hops (and ..data_tmp), any event without a filename', OPTIONS, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-reload-names-'));
    try {
      const names = watchedNames(await configMap(dir));
      assert.deepEqual([...names].sort(), ['..data', '..data_tmp', 'gateway.yaml']);
      assert.equal(eventCounts('gateway.yaml', names), true);
      assert.equal(eventCounts('..data', names), true);
      assert.equal(eventCounts('gateway.log', names), false);
      assert.equal(eventCounts('..2026_b', names), false);
      assert.equal(eventCounts(null, names), true);
      assert.equal(eventCounts(undefined, names), true);
      assert.deepEqual([...watchedNames(join(dir, 'missing.yaml'))], ['missing.yaml']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
