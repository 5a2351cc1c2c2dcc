/**
 * Regression (found fixing a flaky test, 2026-12-06): a SIGHUP that reached the gateway after
 * its SIGTERM (the kernel may deliver a SIGHUP sent just before a SIGTERM after it, under
 * load) was ignored without a line, where one whose reload was running got
 * `config reload dropped: the gateway is shutting down`. Now a SIGHUP during the shutdown gets
 * that line too (info, trigger `sighup`, `config`), and nothing is reloaded.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DROPPED_MSG, UNCHANGED_MSG } from '../../src/reload.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess } from '../helpers/process.js';
import { HELD_RESULT, sendHeldCall, startHeldCallSeller, type HeldCallSeller } from '../helpers/held-call.js';
import { withTimeout } from '../helpers/timeout.js';

let held: HeldCallSeller;
let dir: string;

before(async () => {
  held = await startHeldCallSeller();
  dir = await mkdtemp(join(tmpdir(), 'gw-sighup-shutdown-'));
});

after(async () => {
  held.release();
  await held.seller.close();
  await rm(dir, { recursive: true, force: true });
});

describe('sighup-during-shutdown-silent', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('SIGTERM, then SIGHUP while a call holds the shutdown: the dropped line (trigger sighup), nothing reloaded, the call answered', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s: { url: ${held.seller.url} }\n`);
    const gw = await startGatewayProcess(file);
    try {
      const { answer: call } = await sendHeldCall(gw.address, held.seller);
      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      gw.child.kill('SIGHUP');
      await gw.waitForLog(DROPPED_MSG);
      held.release();
      const answer = await withTimeout(call, 10_000, 'the call');
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { jsonrpc: '2.0', id: 1, result: HELD_RESULT });
      assert.equal(await withTimeout(gw.exited, 15_000, 'exit'), 0);
      const dropped = gw.logs.filter((l) => l.msg === DROPPED_MSG);
      assert.deepEqual(
        dropped.map((l) => [l.trigger, l.config, l.level]),
        [['sighup', file, 30]],
      );
      assert.equal(gw.logs.some((l) => l.msg === 'config reloaded' || l.msg === UNCHANGED_MSG || l.msg === 'reloading the config'), false, 'nothing reloaded');
    } finally {
      held.release();
      gw.kill();
    }
  });
});
