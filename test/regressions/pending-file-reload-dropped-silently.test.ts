/**
 * Regression (a hostile operator's trial 51, finding 3): a file-change reload waiting in its
 * debounce (~100 ms) when the stop signal came was dropped without the line README's Graceful
 * shutdown, step 1, promises (`config reload dropped: the gateway is shutting down`): the
 * reloader's `close()` stopped the watch, whose pending timer was cleared silently.
 *
 * Now `close()` logs that line (trigger `file`) when a file check was waiting (src/reload.ts,
 * src/config-watch.ts).
 *
 * Input: a reloader watching a config file with a 60 s debounce (so the check is still waiting
 * whatever the machine's speed); the file is rewritten, then (once the watch has seen it) the
 * reloader is closed. Control: closed with no edit. Expectation: one dropped line, trigger
 * `file`, the config's path, info level; the control logs none; nothing is applied.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import { createReloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';

const DROPPED = 'config reload dropped: the gateway is shutting down';
const A = 'log_level: silent\nagents:\n  a:\n    url: http://127.0.0.1:9/mcp\n';
const B = `${A}  b:\n    url: http://127.0.0.1:9/mcp\n`;

async function closeWhilePending(edit: boolean) {
  const dir = await mkdtemp(join(tmpdir(), 'gw-pending-reload-'));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, A);
  let config = await loadConfigFile(file, { env: {} });
  let applied = 0;
  const control = {
    get config() {
      return config;
    },
    setConfig(next: typeof config) {
      applied++;
      config = next;
    },
  };
  const log = captureLog();
  const reloader = createReloader({ path: file, env: {}, control, log: log.logger, debounceMs: 60_000, maxDelayMs: 60_000, watch: true });
  try {
    await new Promise((r) => setTimeout(r, 200)); // the start-up check (same text: nothing)
    if (edit) await writeFile(file, B);
    await new Promise((r) => setTimeout(r, 500)); // the watch's event (inotify: within milliseconds)
    reloader.close();
    await new Promise((r) => setTimeout(r, 50));
    return { dropped: log.entries.filter((e) => e.msg === DROPPED).map((e) => [e.trigger, e.config, e.level]), applied, file };
  } finally {
    reloader.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('a file check waiting in its debounce when the reloader closes: one dropped line, trigger file (was: none)', async () => {
  const { dropped, applied, file } = await closeWhilePending(true);
  assert.deepEqual(dropped, [['file', file, 30]]);
  assert.equal(applied, 0);
});

test('control: no file check waiting: no dropped line', async () => {
  const { dropped, applied } = await closeWhilePending(false);
  assert.deepEqual(dropped, []);
  assert.equal(applied, 0);
});
