/**
 * Regression (a new user's trial): the config file watcher (src/reload.ts) dropped every
 * error reading the file without a word. A config file replaced by one over the 1 MiB cap,
 * made unreadable, or deleted was only reported when the operator sent SIGHUP; an edit that
 * "did nothing" left no trace in the log.
 *
 * Input: a real gateway app and its reloader watching a temp config dir. The file is replaced
 * by one over `MAX_CONFIG_FILE_BYTES`; it is replaced again by the same bytes (more file
 * events, the same failure); the file is deleted; then a valid file is written. (Events for
 * other files in the directory start no check at all since
 * test/regressions/reload-held-back-by-sibling-writes.test.ts.)
 * Expected: the oversized file is logged once, as a failed SIGHUP reload is (`config reload
 * failed: keeping the running config`, error level, trigger `file`, the file and its
 * problem), and the same failure is not logged again for later file events (a debug line
 * says a check found it again); the deleted file, a different failure, is logged once, with
 * `code` `ENOENT`; the running config stays throughout; the valid file is applied.
 *
 * And `readConfigText` keeps the system error code: a missing file's ConfigError has `code`
 * `ENOENT`, an oversized file's (read, then refused) has none.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_CONFIG_FILE_BYTES } from '../../src/config/defaults.js';
import { ConfigError, loadConfigFile, readConfigText } from '../../src/config/load.js';
import { createReloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { startGateway } from '../helpers/gateway.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const FAILED = 'config reload failed';
/** The debug line of a file check that finds the failure it last logged. */
const REPEATED_FAILURE_MSG = 'config file check: the same failure as last logged, not logged again';
const yaml = (limit: number, extra = '') => `log_level: silent\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n    max_response_bytes: ${limit}\n${extra}`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-watch-read-error-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Replaces `file` in one step (a new file renamed over it), as editors save. */
async function replaceFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

describe('a watched config file that cannot be read is logged, once per failure', () => {
  it('oversized, then deleted, then valid: two failures logged once each, the running config kept, then applied', OPTIONS, async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, yaml(8192));
    const gw = await startGateway(await loadConfigFile(file, { env: {} }));
    const log = captureLog();
    const reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: log.logger, debounceMs: 20 });
    try {
      const running = gw.app.gateway.config;
      const limit = () => gw.app.gateway.config.agents.get('s')?.limits.max_response_bytes;

      // Valid YAML, but over the cap: refused before it is read.
      const oversized = yaml(4096, `# ${'x'.repeat(MAX_CONFIG_FILE_BYTES)}\n`);
      await replaceFile(file, oversized);
      const tooLarge = await log.waitFor(FAILED);
      assert.equal(tooLarge.level, 50, 'error, as a failed SIGHUP reload');
      assert.equal(tooLarge.msg, 'config reload failed: keeping the running config');
      assert.equal(tooLarge.trigger, 'file');
      assert.equal(tooLarge.config, file);
      assert.deepEqual(tooLarge.problems, [{ path: '', message: `config file is ${Buffer.byteLength(oversized)} bytes; at most ${MAX_CONFIG_FILE_BYTES}` }]);
      assert.equal(gw.app.gateway.config, running);

      // More events for the file, the same bytes: each check finds the same failure, logged no more.
      for (let i = 0; i < 2; i++) {
        const seen = log.entries.filter((e) => e.msg === REPEATED_FAILURE_MSG).length;
        await replaceFile(file, oversized);
        const again = await log.waitFor(REPEATED_FAILURE_MSG, seen + 1);
        assert.equal(again.level, 20);
      }
      assert.equal(log.entries.filter((e) => e.msg.startsWith(FAILED)).length, 1, JSON.stringify(log.entries));
      assert.equal(gw.app.gateway.config, running);

      // A different failure: logged, with the system error code.
      await rm(file);
      const missing = await log.waitFor(FAILED, 2);
      assert.equal(missing.level, 50);
      assert.equal(missing.trigger, 'file');
      assert.equal(missing.config, file);
      assert.equal(missing.code, 'ENOENT');
      assert.deepEqual(missing.problems, [{ path: '', message: `cannot read ${file}: file not found` }]);
      assert.equal(gw.app.gateway.config, running);
      assert.equal(limit(), 8192);

      // Valid again: applied.
      await replaceFile(file, yaml(4096));
      const reloaded = await log.waitFor('config reloaded');
      assert.equal(reloaded.trigger, 'file');
      assert.equal(limit(), 4096);
      assert.equal(log.entries.filter((e) => e.msg.startsWith(FAILED)).length, 2);
    } finally {
      reloader.close();
      await gw.close();
    }
  });

  it('readConfigText keeps the system error code: ENOENT for a missing file, none for an oversized one', OPTIONS, async () => {
    const missing = join(dir, 'missing.yaml');
    await assert.rejects(readConfigText(missing), (err: unknown) => err instanceof ConfigError && err.code === 'ENOENT' && /file not found/.test(err.message));
    const big = join(dir, 'big.yaml');
    await writeFile(big, `# ${'x'.repeat(MAX_CONFIG_FILE_BYTES)}\n`);
    await assert.rejects(readConfigText(big), (err: unknown) => err instanceof ConfigError && err.code === undefined && /at most 1048576/.test(err.message));
  });
});
