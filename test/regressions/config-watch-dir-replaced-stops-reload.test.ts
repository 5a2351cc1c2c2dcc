/**
 * Regression (a new user's hostile trial 12, M1): reloading on file change stopped for good,
 * with no log line, when the config's directory was replaced. On Linux, `fs.watch` on a
 * directory ends without an `'error'` event when the directory is deleted (inotify drops the
 * watch) and follows it when it is renamed, and the only warning was in the error handler
 * (src/config-watch.ts). `rm -rf conf; mkdir conf` and a write: one `config reload failed`
 * (ENOENT), then every edit ignored; `mv conf conf.old; mv conf.new conf`: nothing logged at
 * all. The old config kept being served (agent a: 200, new agents: 404) until SIGHUP.
 *
 * Input: the real gateway process (src/main.ts) on `<tmp>/conf/gateway.yaml` serving agent
 * `a`, a real seller on 127.0.0.1 answering every POST. Then (1) the directory deleted and
 * re-created with a file serving `a` and `b`, then edited to serve only `c`; (2) a new
 * directory renamed over it (`mv conf conf.old; mv conf.new conf`) serving `b`, then edited
 * to serve only `c`.
 * Expected: the new directory is watched again (logged: `config directory is gone` at warn,
 * `config directory is back` at info; a swap `config directory replaced`), each file is
 * applied (`config reloaded`, its agents), and after the last edit `c` is served (200, the
 * seller's bytes) and `a`, `b` are not (404 `unknown_agent`); no `config file watch stopped`.
 * And the watcher itself: a directory that never comes back stops the watch with
 * `config file watch stopped: reload with SIGHUP` logged once, after its tries.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { watchConfigFile } from '../../src/config-watch.js';
import { captureLog } from '../helpers/capture-log.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess, type LogEntry } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const PONG = '{"jsonrpc":"2.0","id":1,"result":{}}';
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const STOPPED = 'config file watch stopped: reload with SIGHUP';

let seller: RawSeller;
before(async () => {
  seller = await startRawSeller((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(PONG) }).end(PONG);
  });
});
after(() => seller.close());

const yaml = (...agents: string[]) =>
  `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n${agents.map((a) => `  ${a}: { url: "${seller.url}" }\n`).join('')}`;

/** The first line logged (already, or within 15 s) that `test` accepts. */
async function logged(gw: GatewayProcess, label: string, test: (e: LogEntry) => boolean): Promise<LogEntry> {
  return withTimeout(
    (async () => {
      for (;;) {
        const found = gw.logs.find(test);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    15_000,
    `log ${label}; lines: ${JSON.stringify(gw.logs.map((e) => e.msg))}`,
  );
}

/** A `config reloaded` line whose agents are exactly `agents`. */
const reloadedTo = (gw: GatewayProcess, ...agents: string[]) =>
  logged(gw, `config reloaded ${agents}`, (e) => e.msg === 'config reloaded' && JSON.stringify(e.agents) === JSON.stringify(agents));

/** Status and body of a ping to each agent. */
async function served(gw: GatewayProcess, agents: string[]): Promise<Record<string, [number, string]>> {
  const out: Record<string, [number, string]> = {};
  for (const a of agents) {
    const res = await fetch(`${gw.address}/agents/${a}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: PING,
    });
    const body = await res.text();
    out[a] = [res.status, res.status === 200 ? body : ((JSON.parse(body) as { error?: { data?: { reason?: string } } }).error?.data?.reason ?? body)];
  }
  return out;
}

async function withGateway(body: (base: string, conf: string, gw: GatewayProcess) => Promise<void>): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'gw-watch-dir-'));
  const conf = join(base, 'conf');
  await mkdir(conf);
  await writeFile(join(conf, 'gateway.yaml'), yaml('a'));
  let gw: GatewayProcess | undefined;
  try {
    gw = await startGatewayProcess(join(conf, 'gateway.yaml'));
    assert.deepEqual(await served(gw, ['a']), { a: [200, PONG] });
    await body(base, conf, gw);
    assert.deepEqual(await served(gw, ['a', 'b', 'c']), { a: [404, 'unknown_agent'], b: [404, 'unknown_agent'], c: [200, PONG] });
    assert.deepEqual(
      gw.logs.filter((e) => e.msg === STOPPED),
      [],
    );
  } finally {
    gw?.kill();
    await rm(base, { recursive: true, force: true });
  }
}

describe('the config file watch survives its directory being replaced', () => {
  it('deleted and re-created (rm -rf conf; mkdir conf): the new file and a later edit apply', OPTIONS, async () => {
    await withGateway(async (_base, conf, gw) => {
      await rm(conf, { recursive: true });
      const gone = await logged(gw, 'gone', (e) => e.msg?.startsWith('config directory is gone') === true);
      assert.equal(gone.level, 40);
      assert.equal(gone.code, 'ENOENT');
      await mkdir(conf);
      await writeFile(join(conf, 'gateway.yaml'), yaml('a', 'b'));
      assert.equal((await logged(gw, 'back', (e) => e.msg === 'config directory is back: watching it again')).level, 30);
      assert.equal((await reloadedTo(gw, 'a', 'b')).trigger, 'file');
      await writeFile(join(conf, 'gateway.yaml'), yaml('c'));
      assert.equal((await reloadedTo(gw, 'c')).trigger, 'file');
    });
  });

  it('swapped by rename (mv conf conf.old; mv conf.new conf): the new file and a later edit apply', OPTIONS, async () => {
    await withGateway(async (base, conf, gw) => {
      await mkdir(join(base, 'conf.new'));
      await writeFile(join(base, 'conf.new', 'gateway.yaml'), yaml('b'));
      await rename(conf, join(base, 'conf.old'));
      await rename(join(base, 'conf.new'), conf);
      // Seen as replaced; `gone` then `back` if the gateway looked between the two renames.
      await logged(gw, 'replaced', (e) => e.msg === 'config directory replaced: watching the new one' || e.msg === 'config directory is back: watching it again');
      assert.equal((await reloadedTo(gw, 'b')).trigger, 'file');
      await writeFile(join(conf, 'gateway.yaml'), yaml('c'));
      assert.equal((await reloadedTo(gw, 'c')).trigger, 'file');
    });
  });

  it('a directory that never comes back: the watch stops after its tries, logged once', OPTIONS, async () => {
    const base = await mkdtemp(join(tmpdir(), 'gw-watch-dir-gone-'));
    const conf = join(base, 'conf');
    await mkdir(conf);
    const log = captureLog();
    const close = watchConfigFile({
      file: join(conf, 'gateway.yaml'),
      debounceMs: 10,
      maxDelayMs: 50,
      identityCheckMs: 20,
      maxRewatchTries: 5,
      log: log.logger,
      onChange: () => {},
    });
    try {
      assert.ok(close);
      await rm(conf, { recursive: true });
      const stopped = await log.waitFor(STOPPED);
      assert.equal(stopped.level, 40);
      await new Promise((r) => setTimeout(r, 200)); // ten more periods: nothing more is logged
      assert.deepEqual(
        log.entries.filter((e) => e.level >= 40).map((e) => e.msg),
        ['config directory is gone: watching for it to come back (reload with SIGHUP meanwhile)', STOPPED],
      );
    } finally {
      close?.();
      await rm(base, { recursive: true, force: true });
    }
  });
});
