/**
 * Regression (a hostile new user's trial 15, L2, Low): `--check-config` next to `probe` was
 * dropped without a word: `--check-config probe ok --config gw.yaml` and `probe ok
 * --check-config` both ran the live network probe (exit 0 on a healthy seller), the check the
 * user asked for never made. commander hands the program's `--check-config` to the probe's
 * `optsWithGlobals` wherever it is written, and the probe's action did not read it.
 * Now the two together are a usage error (src/cli.ts `CHECK_CONFIG_WITH_PROBE`), exit 2, one
 * line on stderr, before any file is read or any seller called, as a repeated `--config` is
 * refused (test/regressions/repeated-config-flag-last-wins.test.ts).
 *
 * Input: a valid config whose only agent is a node:http seller on 127.0.0.1 that counts the
 * requests it gets; the CLI run with `--check-config` before `probe`, after the agent, between
 * `probe` and the agent, and with `--json`; `--check-config` alone, and `probe` alone (controls).
 * Expected: each combination exit 2, stdout empty, stderr exactly the one line, the seller
 * never called; `--check-config` alone prints `<file>: valid` (exit 0); `probe` alone calls the
 * seller (exit 0).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, runCli } from '../helpers/process.js';

const REFUSED =
  "error: option '--check-config' cannot be used with the command 'probe': --check-config checks the config and exits, probe <agent> calls the seller; give one of them\n";

let dir: string;
let file: string;
let seller: Server;
/** Requests the seller received (a refused command line calls none). */
let calls = 0;

before(async () => {
  seller = createServer((req, res) => {
    calls++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as { id?: number; method?: string } | null;
      if (msg?.id === undefined) return void res.writeHead(202).end();
      const result = msg.method === 'initialize' ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } : { tools: [] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  dir = await mkdtemp(join(tmpdir(), 'gw-check-config-probe-'));
  file = join(dir, 'gw.yaml');
  await writeFile(file, `agents:\n  ok:\n    url: http://127.0.0.1:${(seller.address() as AddressInfo).port}/mcp\n`);
});

after(async () => {
  seller.closeAllConnections();
  await new Promise<void>((resolve) => seller.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config with probe is a usage error', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const refused = (args: () => string[]) => async () => {
    const before = calls;
    const run = await runCli(args());
    assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr, calls: calls - before }, { code: 2, stdout: '', stderr: REFUSED, calls: 0 });
  };

  it('--check-config probe ok (was: the live probe, exit 0)', refused(() => ['--check-config', 'probe', 'ok', '--config', file]));
  it('probe ok --check-config (was: the live probe, exit 0)', refused(() => ['probe', 'ok', '--check-config', '--config', file]));
  it('probe --check-config ok', refused(() => ['probe', '--check-config', 'ok', '--config', file]));
  it('probe ok --json --check-config', refused(() => ['probe', 'ok', '--json', '--check-config', '--config', file]));
  it('--check-config probe with an agent the config lacks: the same usage error, the config not read', refused(() => ['--check-config', 'probe', 'nobody', '--config', join(dir, 'missing.yaml')]));

  it('control: --check-config alone checks the config', async () => {
    const before = calls;
    const run = await runCli(['--check-config', '--config', file]);
    assert.deepEqual([run.code, run.stderr, run.stdout.split('\n')[0], calls - before], [0, '', `${file}: valid`, 0]);
  });

  it('control: probe alone calls the seller', async () => {
    const before = calls;
    const run = await runCli(['probe', 'ok', '--config', file]);
    assert.deepEqual([run.code, run.stderr, run.stdout.split('\n').at(-2)], [0, '', 'result: all within target']);
    assert.ok(calls - before >= 3, `the seller got ${calls - before} requests`);
  });
});
