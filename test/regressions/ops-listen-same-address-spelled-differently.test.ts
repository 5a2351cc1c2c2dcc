/**
 * Regression (a new user's trial 9, F7, Low): `--check-config` accepted `listen`
 * 127.0.0.1:P with `ops_listen` `localhost:P` or `::ffff:127.0.0.1:P`, and the gateway then
 * failed at start-up with `listen EADDRINUSE`, though docs/configuration.md promises a
 * configuration error naming `ops_listen.port` when both listeners would share an address.
 * The check compared the host strings (case and IPv6 spelling aside): a name (`localhost`,
 * which Fastify binds on 127.0.0.1 and ::1), an IPv4-mapped IPv6 address or a short IPv4
 * spelling (`127.1`) of the same address slipped through.
 *
 * Input: the trial's two configs checked with the CLI's `--check-config` (in process: helpers/check-config.ts); more spellings
 * parsed in-process.
 * Expected: exit 2 and exactly one problem at `ops_listen.port` saying both hosts take the
 * same address (hosts never echoed); hosts with no common address still pass.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const PORT = 38787;
const SAME_ADDRESS =
  `must differ from listen.port (${PORT}) and both hosts take the same address (localhost is 127.0.0.1 and ::1; ` +
  'an IPv4-mapped IPv6 address ::ffff:a.b.c.d is a.b.c.d): the second listener would fail with EADDRINUSE (use another port, or 0 for any free port)';

function yaml(listenHost: string, opsHost: string, opsPort = PORT): string {
  return `listen: {host: ${JSON.stringify(listenHost)}, port: ${PORT}}\nops_listen: {host: ${JSON.stringify(opsHost)}, port: ${opsPort}}\nagents: {a: {url: "http://127.0.0.1:9/mcp"}}\n`;
}

/** The problems (`path: message`) of the config, or [] when it is accepted. */
function problems(listenHost: string, opsHost: string, opsPort = PORT): string[] {
  try {
    parseConfig(yaml(listenHost, opsHost, opsPort), { env: {} });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

describe('ops_listen on listen\'s address, spelled differently', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  for (const opsHost of ['localhost', '::ffff:127.0.0.1']) {
    it(`--check-config: listen 127.0.0.1, ops_listen ${opsHost}, one port: a config error (was: valid, then EADDRINUSE at start)`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ops-same-'));
      try {
        const file = join(dir, 'ops-same.yaml');
        await writeFile(file, yaml('127.0.0.1', opsHost));
        const run = await checkConfigRun(file);
        assert.deepEqual(run, { code: 2, stdout: '', stderr: `${file}: 1 problem\n  ops_listen.port (line 2, column ${opsHost.length + 30}): ${SAME_ADDRESS}\n` });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  it('other spellings of one address: a config error at ops_listen.port', () => {
    const pairs: [string, string][] = [
      ['localhost', '127.0.0.1'],
      ['localhost', '::1'],
      ['LOCALHOST', '0:0:0:0:0:0:0:1'],
      ['::1', 'localhost.'],
      ['::ffff:7f00:1', '127.0.0.1'],
      ['127.1', '127.0.0.1'],
      ['127.0.0.1', '::ffff:127.0.0.1'],
      ['127.0.0.1', '0x7f.0.0.1'],
      ['localhost', '::ffff:127.0.0.1'],
    ];
    for (const [listenHost, opsHost] of pairs) {
      assert.deepEqual(problems(listenHost, opsHost), [`ops_listen.port: ${SAME_ADDRESS}`], `${listenHost} / ${opsHost}`);
    }
  });

  it('still accepted: no common address, another port, port 0', () => {
    const pairs: [string, string][] = [
      ['127.0.0.1', '::1'],
      ['localhost', '127.0.0.2'],
      ['::ffff:127.0.0.1', '127.0.0.2'],
      ['::ffff:127.0.0.1', '::1'],
      ['gateway.internal', 'localhost'],
    ];
    for (const [listenHost, opsHost] of pairs) assert.deepEqual(problems(listenHost, opsHost), [], `${listenHost} / ${opsHost}`);
    assert.deepEqual(problems('127.0.0.1', 'localhost', PORT + 1), []);
    assert.deepEqual(problems('127.0.0.1', 'localhost', 0), []);
  });
});
