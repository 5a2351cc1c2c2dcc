/**
 * Regression (a hostile operator's trial 49, finding 3): `SIGHUP`, then `SIGTERM` 20 ms later,
 * while a call was in flight: `config reloaded` was logged ~395 ms after `shutting down` and
 * the new config applied, though the docs say a shutdown "stops reloading" (the reload had
 * started before the signal and finished after it; its worker thread was still loading).
 *
 * Now a reload that finishes (or would start) after the shutdown began is not applied: one
 * line, `config reload dropped: the gateway is shutting down` (info, `trigger`, `config`),
 * says so, and the running config stays (src/reload.ts).
 *
 * Input: the gateway as its own process (src/main.ts) on a raw seller (127.0.0.1) that holds a
 * `tools/call` until the test releases it, so the shutdown waits. The config file is rewritten
 * with 2,000 more agents (its parse in the reload's worker takes ~100-300 ms on the reference
 * machine, so the reload is still running at the second signal, 20 ms later, on a machine
 * several times faster too; 400 agents took 56-100 ms, too close) and `shutdown_grace_ms: 3000`; then `SIGHUP`, and
 * 20 ms later `SIGTERM`; the call is released 3000 ms after `shutting down`.
 *
 * Expectation: `shutting down` with the running `grace_ms` (10000); after it, the dropped line
 * (trigger `sighup`) and no `config reloaded`; the call gets its answer; exit 0.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess } from '../helpers/process.js';
import { toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';

const DROPPED = 'config reload dropped: the gateway is shutting down';
const RESULT = { content: [{ type: 'text', text: 'held' }] };

let seller: RawSeller;
let dir: string;
let release: () => void = () => {};

before(async () => {
  seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id: number };
    const body = toolResponse(msg.id, RESULT);
    release = () => {
      if (!res.headersSent && !res.destroyed) res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-reload-sigterm-'));
});

after(async () => {
  release();
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

describe('reload-finishing-after-sigterm-logged-applied', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('SIGHUP then SIGTERM 20 ms later: the reload is dropped, not applied', async () => {
    const file = join(dir, 'gateway.yaml');
    const head = `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\n`;
    await writeFile(file, `${head}agents:\n  s: { url: ${seller.url} }\n`);
    const gw = await startGatewayProcess(file);
    try {
      const call = fetch(`${gw.address}/agents/s/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(toolCall(1, 'held')),
      });
      await withTimeout(
        (async () => {
          while (seller.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
        })(),
        10_000,
        'the call at the seller',
      );
      const more = Array.from({ length: 2_000 }, (_, i) => `  extra${i}: { url: 'http://127.0.0.1:9/mcp/${i}' }\n`).join('');
      await writeFile(file, `${head}shutdown_grace_ms: 3000\nagents:\n  s: { url: ${seller.url} }\n${more}`);
      gw.child.kill('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 20));
      gw.child.kill('SIGTERM');
      const down = await gw.waitForLog('shutting down');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      release();
      const answer = await withTimeout(call, 10_000, 'the call');
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { jsonrpc: '2.0', id: 1, result: RESULT });
      assert.equal(await withTimeout(gw.exited, 15_000, 'exit'), 0);

      assert.equal(down.grace_ms, 10_000, 'the running grace');
      const msgs = gw.logs.map((l) => l.msg);
      assert.deepEqual(
        msgs.filter((m) => m === 'config reloaded' || m === DROPPED || m === 'shutting down' || m === 'reloading the config'),
        ['reloading the config', 'shutting down', DROPPED],
      );
      const dropped = gw.logs.find((l) => l.msg === DROPPED);
      assert.deepEqual([dropped?.trigger, dropped?.config, dropped?.level], ['sighup', file, 30]);
    } finally {
      release();
      gw.kill();
    }
  });
});
