/**
 * Regression (a hostile new operator's trial 45, L5, Low): if the config's directory was gone
 * when the watch started (removed while the gateway started: `rm -rf cdir` as soon as the
 * `starting` line appeared, re-created 1 s later), the gateway logged
 * `cannot watch the config file: reload with SIGHUP` (with the error's stack) and never
 * watched it again, while the README says an edit made during start-up is applied too and
 * describes a 10-minute watch for a directory that goes missing.
 *
 * Now (src/config-watch.ts) a directory missing when the watch starts takes the same path as
 * one that goes missing later: `config directory is gone: watching for it to come back (reload
 * with SIGHUP meanwhile)`, looked for every second, watched and its file checked once back.
 *
 * Input: a gateway started from `<tmp>/conf/gateway.yaml` (agent `a`); the directory removed
 * before the reloader (watching) is created; then re-created with a file serving `a` and `b`,
 * then edited to serve `c`.
 * Expected: warn `config directory is gone ...` (code ENOENT), info `config directory is
 * back: watching it again`, `config reloaded` with [a, b] then [c]; never
 * `cannot watch the config file` nor `config file watch stopped`.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import { createReloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { startGateway } from '../helpers/gateway.js';

const yaml = (...agents: string[]): string => `log_level: silent\nagents:\n${agents.map((a) => `  ${a}: { url: "http://127.0.0.1:9/mcp" }\n`).join('')}`;
const GONE = 'config directory is gone: watching for it to come back (reload with SIGHUP meanwhile)';

test('a config directory missing when the watch starts is watched once it is back (was: never, reload with SIGHUP)', { timeout: 60_000 }, async () => {
  const base = await mkdtemp(join(tmpdir(), 'gw-startup-dir-gone-'));
  const conf = join(base, 'conf');
  const file = join(conf, 'gateway.yaml');
  await mkdir(conf);
  await writeFile(file, yaml('a'));
  const gw = await startGateway(await loadConfigFile(file, { env: {} }));
  await rm(conf, { recursive: true });
  const log = captureLog();
  const reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: log.logger, debounceMs: 20 });
  try {
    const gone = await log.waitFor(GONE);
    assert.deepEqual({ level: gone.level, code: gone.code, dir: gone.dir }, { level: 40, code: 'ENOENT', dir: conf });

    await mkdir(conf);
    await writeFile(file, yaml('a', 'b'));
    assert.equal((await log.waitFor('config directory is back: watching it again')).level, 30);
    const reloaded = await log.waitUntil((e) => e.msg === 'config reloaded' && JSON.stringify(e.agents) === '["a","b"]', 'config reloaded [a, b]');
    assert.equal(reloaded.trigger, 'file');

    await writeFile(file, yaml('c'));
    await log.waitUntil((e) => e.msg === 'config reloaded' && JSON.stringify(e.agents) === '["c"]', 'config reloaded [c]');
    assert.deepEqual([...gw.app.gateway.config.agents.keys()], ['c']);
    assert.deepEqual(
      log.entries.filter((e) => e.msg.startsWith('cannot watch the config file') || e.msg.startsWith('config file watch stopped')).map((e) => e.msg),
      [],
    );
  } finally {
    reloader.close();
    await gw.close();
    await rm(base, { recursive: true, force: true });
  }
});
