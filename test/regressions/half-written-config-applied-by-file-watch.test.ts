/**
 * Regression (a hostile operator's trial 53, F5, Low): a slow in-place write of the config
 * file was applied half-written. `GAP=1.5 ./partial_write.sh` truncated the file, wrote its
 * first half (valid YAML: agent `json` only), waited 1.5 s, then appended the rest (agent
 * `sse`): the watch's check, 100 ms after the first write, logged `config reloaded ...
 * "removed":["sse"]`, the agent's GET stream ended `agent_removed`, a GET was refused 404
 * `unknown_agent`, and then `added:["sse"]`. The docs did not advise atomic writes, and there
 * was no way to turn the watch off.
 *
 * Now the gateway takes `--no-watch-config` (it then reloads on SIGHUP only), and README and
 * docs/configuration.md say to write a new file and rename it over the config, and what the
 * debounce is (100 ms after the last change, at the latest 1 s after the first).
 *
 * Input: the gateway as its own process (src/main.ts) in front of real SDK 1.x sellers
 * (test/support/sdk1/drain-sellers.ts: agent `json`, stateless; agent `sse`, with sessions);
 * real SDK 1.x clients call through it.
 *
 * Expectation:
 * - `--no-watch-config`: the same slow in-place write (the first half, 1.5 s, the rest) applies
 *   nothing: during the gap an SDK client connects to agent `sse` and its `sse_call` gets its
 *   result; no `config reloaded` or `config reload failed` line; one line at start, `config
 *   file watch off (--no-watch-config): reload with SIGHUP`; a SIGHUP after the write logs
 *   `config unchanged` (before: the flag was an unknown option, exit 2);
 * - with the watch, the documented way: the new text written slowly to `gateway.yaml.new` in
 *   the same directory, then renamed over the config: exactly one `config reloaded` line, with
 *   `added: ["extra"]` and nothing removed;
 * - `--help` lists the flag; README and docs/configuration.md say to write a new file and
 *   rename it, the debounce, and the flag.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runCli, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { SSE_RESULT, startDrainSellers, type DrainSellers } from '../support/sdk1/drain-sellers.js';

const GAP_MS = 1_500;
const WATCH_OFF = 'config file watch off (--no-watch-config): reload with SIGHUP';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let sellers: DrainSellers;
let dir: string;

before(async () => {
  sellers = await startDrainSellers();
  sellers.release('sse_call');
  dir = await mkdtemp(join(tmpdir(), 'gw-half-written-'));
});

after(async () => {
  await sellers.close();
  await rm(dir, { recursive: true, force: true });
});

/** The config's two halves: the first is a valid config on its own (agent `json` only). */
const firstHalf = (): string => `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  json:\n    url: ${sellers.jsonUrl}\n`;
const secondHalf = (): string => `  sse:\n    url: ${sellers.sseUrl}\n`;

const reloadLines = (gw: GatewayProcess): string[] =>
  gw.logs.map((l) => l.msg ?? '').filter((m) => m === 'config reloaded' || m.startsWith('config reload failed') || m.startsWith('config unchanged'));

describe('half-written-config-applied-by-file-watch', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('--no-watch-config: a slow in-place write applies nothing; agent sse keeps serving; SIGHUP after it finds the file unchanged', async () => {
    const file = join(dir, 'no-watch.yaml');
    await writeFile(file, firstHalf() + secondHalf());
    const gw = await startGatewayProcess(file, { args: ['--no-watch-config'] });
    const client = new Client({ name: 'half-written-host', version: '1.0.0' });
    try {
      await gw.waitForLog(WATCH_OFF);
      // A slow writer: truncate and write the first half, pause, append the rest.
      await writeFile(file, firstHalf());
      await sleep(GAP_MS / 2);
      await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(`${gw.address}/agents/sse/mcp`))), 10_000, 'connect sse');
      assert.deepEqual(await withTimeout(client.callTool({ name: 'sse_call', arguments: {} }), 10_000, 'sse_call'), SSE_RESULT);
      await sleep(GAP_MS / 2);
      await appendFile(file, secondHalf());
      await sleep(1_500); // past the watch's 100 ms debounce and 1 s ceiling: nothing may come
      assert.deepEqual(reloadLines(gw), []);
      gw.child.kill('SIGHUP');
      await gw.waitForLog('config unchanged');
      assert.deepEqual(reloadLines(gw), ['config unchanged: the file and the values of its ${VAR} references are those of the running config; nothing to reload']);
    } finally {
      await client.close().catch(() => {});
      gw.kill();
    }
  });

  test('with the watch: the new text written slowly to another file and renamed over the config is applied once, whole', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, firstHalf() + secondHalf());
    const gw = await startGatewayProcess(file);
    try {
      await gw.waitForLog('gateway started');
      await sleep(300); // the watch's start-up check
      const before = reloadLines(gw).length;
      const next = join(dir, 'gateway.yaml.new');
      await writeFile(next, firstHalf());
      await sleep(GAP_MS);
      await appendFile(next, `${secondHalf()}  extra:\n    url: ${sellers.jsonUrl}\n`);
      await rename(next, file);
      const reloaded = await gw.waitForLog('config reloaded');
      await sleep(1_500);
      assert.deepEqual(reloadLines(gw).slice(before), ['config reloaded']);
      assert.deepEqual([reloaded.added, reloaded.removed], [['extra'], []]);
    } finally {
      gw.kill();
    }
  });

  test('--help lists --no-watch-config', async () => {
    const run = await runCli(['--help']);
    assert.equal(run.code, 0);
    assert.match(run.stdout.replace(/\s+/g, ' '), /--no-watch-config serving: do not reload when the config file changes on disk; reload on SIGHUP only/);
  });

  test('README and docs/configuration.md: write a new file and rename it, the debounce, --no-watch-config', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    assert.match(readme, /\*\*Write the file whole: a new file renamed over it\.\*\* The watch checks the file 100 ms after the last change to it, or at the latest 1 s after the first/);
    assert.match(readme, /Or start the gateway with `--no-watch-config`: it then reloads only on `SIGHUP`/);
    const config = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8').replace(/\s+/g, ' ');
    assert.match(config, /Write a new file in the same directory and rename it over the config .* or run the gateway with `--no-watch-config`/);
  });
});
