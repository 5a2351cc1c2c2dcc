/**
 * Regression (a hostile operator's trial 53, F6, Low, docs): rotating a `${VAR}` value needs a
 * restart. The running process never sees a changed environment: re-exporting the variable and
 * `docker compose kill -s HUP` only logged `config unchanged`, while the reload docs
 * (docs/configuration.md) listed the `${VAR}` values as something a reload compares, without
 * saying they cannot change. The behaviour stays (a process's environment is fixed at its
 * start); the docs now say that `${VAR}` values are read from the environment at start-up, so
 * a new value needs a restart (or the value placed in the file), and what a reload compares.
 *
 * Input: a raw seller on 127.0.0.1 recording each request's `Authorization`; the gateway as its
 * own process (src/main.ts) whose agent has `authorization: "Bearer ${SELLER_TOKEN}"`, started
 * with `SELLER_TOKEN=old-token-...`; a POST through it, a SIGHUP, a POST, then a restart with
 * `SELLER_TOKEN=new-token-...` and a POST.
 *
 * Expectation: the seller sees the old token before and after the SIGHUP, which logs `config
 * unchanged`; the new one only after the restart; README ("Config reload"), docs/configuration.md
 * (`${VAR}`, the reload's "unchanged") and `--help` say a new value needs a restart.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_TEST_TIMEOUT_MS, REPO, runCli, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

const OLD = 'old-token-0123456789';
const NEW = 'new-token-0123456789';

let seller: RawSeller;
let dir: string;
let file: string;

before(async () => {
  seller = await startRawSeller((req, res) => {
    const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-var-rotation-'));
  file = join(dir, 'gateway.yaml');
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s:\n    url: ${seller.url}\n    headers:\n      authorization: "Bearer \${SELLER_TOKEN}"\n`);
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

/** A ping through `gw`; the `Authorization` the seller got for it. */
async function tokenSeen(gw: GatewayProcess, id: number): Promise<unknown> {
  const res = await withTimeout(
    fetch(`${gw.address}/agents/s/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }),
    }),
    10_000,
    'ping',
  );
  assert.equal(res.status, 200);
  await res.text();
  return seller.requests.at(-1)?.headers.authorization;
}

const flat = (path: string): string => readFileSync(join(REPO, path), 'utf8').replace(/\s+/g, ' ');

describe('var-rotation-reload-logs-config-unchanged', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('a SIGHUP keeps the value the process started with (config unchanged); a restart with the new environment sends the new one', async () => {
    const first = await startGatewayProcess(file, { env: { SELLER_TOKEN: OLD } });
    try {
      assert.equal(await tokenSeen(first, 1), `Bearer ${OLD}`);
      first.child.kill('SIGHUP');
      await first.waitForLog('config unchanged');
      assert.equal(await tokenSeen(first, 2), `Bearer ${OLD}`);
      first.child.kill('SIGTERM');
      assert.equal(await withTimeout(first.exited, 15_000, 'exit'), 0);
    } finally {
      first.kill();
    }
    const second = await startGatewayProcess(file, { env: { SELLER_TOKEN: NEW } });
    try {
      assert.equal(await tokenSeen(second, 3), `Bearer ${NEW}`);
    } finally {
      second.kill();
    }
  });

  test('README: ${VAR} values are read at start-up; a new value needs a restart; what a reload compares', () => {
    const readme = flat('README.md');
    assert.match(readme, /\*\*`\$\{VAR\}` values are read at start-up\.\*\* A `\$\{VAR\}` in the file is replaced by the value the variable has in the gateway process's environment, which is fixed when the process starts/);
    assert.match(readme, /What a reload compares with the running config is the file's text and the values its `\$\{VAR\}` references have in that environment, which stay those of the start: so, in practice, the text\./);
    assert.match(readme, /restart the gateway with the new environment .* or write the value into the file itself, where a reload applies it/);
    assert.match(readme, /- A new value of a `\$\{VAR\}` needs a restart too/);
  });

  test('docs/configuration.md (${VAR}, the reload) and --help say so', async () => {
    const config = flat('docs/configuration.md');
    assert.match(config, /- Values are read from the gateway process's environment, which is fixed when the process starts: a reload \(`SIGHUP`, a file change\) reads the file again but finds each variable with the value it had at start-up\. A new value .* needs a restart/);
    assert.match(config, /for the running gateway they never change, so what a reload compares is, in practice, the file's text; a new `\$\{VAR\}` value needs a restart\./);
    const help = (await runCli(['--help'])).stdout.replace(/\s+/g, ' ');
    assert.match(help, /and a changed \$\{VAR\} value \(read from the environment at start\), need a restart/);
  });
});
