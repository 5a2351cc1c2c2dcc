/**
 * Regression (a hostile operator's trial 53, F8): no metric told an operator that the config
 * file on disk was broken and not applied: `adcp_gateway_config_reloads_total{result="error"}`
 * counts failures, but says nothing of whether the last attempt failed (a fixed file's `ok`
 * comes after them in no series an alert can read). Now two gauges, Prometheus's own names for
 * the same thing: `adcp_gateway_config_last_reload_successful` (1 at start and after a reload
 * applied or found unchanged, 0 after one that failed) and
 * `adcp_gateway_config_last_reload_success_timestamp_seconds` (when the config in force was
 * last loaded or found unchanged: start, or that reload).
 *
 * Input: a real gateway process (the CLI) on a valid file; the file replaced by a broken one,
 * then restored to its start-up text, each followed by SIGHUP (the file watch may reload it
 * first: either is one reload attempt). Expected: 1 and a start-up timestamp (within the
 * process's start); 0 and the same timestamp after the broken file; 1 and a later timestamp
 * after the restored file (`unchanged` counts as success).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';

const SUCCESS = 'adcp_gateway_config_last_reload_successful';
const STAMP = 'adcp_gateway_config_last_reload_success_timestamp_seconds';

/** The two gauges' sample lines and TYPE lines in the gateway's `/metrics`, and the stamp's value. */
async function gauges(gw: GatewayProcess): Promise<{ lines: string[]; stamp: number }> {
  const text = await (await fetch(`${gw.address}/metrics`)).text();
  const lines = text.split('\n').filter((l) => l.startsWith(SUCCESS) || l.startsWith(`# TYPE ${SUCCESS}`) || l.startsWith(`# TYPE ${STAMP}`));
  const stamp = Number(/^adcp_gateway_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
  return { lines, stamp };
}

/** Polls `/metrics` (bounded: 200 × 50 ms) until the success gauge reads `value`. */
async function untilSuccess(gw: GatewayProcess, value: 0 | 1): Promise<{ lines: string[]; stamp: number }> {
  for (let i = 0; i < 200; i++) {
    const g = await gauges(gw);
    if (g.lines.includes(`${SUCCESS} ${value}`)) return g;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${SUCCESS} never read ${value}: ${JSON.stringify((await gauges(gw)).lines)}`);
}

test('broken-config-on-disk-no-metric: the last reload success gauge and timestamp', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-reload-gauge-'));
  const file = join(dir, 'gateway.yaml');
  const valid = 'listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n';
  const replace = async (text: string, n: number): Promise<void> => {
    await writeFile(`${file}.${n}.tmp`, text);
    await rename(`${file}.${n}.tmp`, file);
  };
  await writeFile(file, valid);
  const spawned = Date.now() / 1000;
  let gw: GatewayProcess | undefined;
  try {
    gw = await startGatewayProcess(file);
    const started = Date.now() / 1000;
    const atStart = await gauges(gw);
    assert.deepEqual(atStart.lines, [`# TYPE ${SUCCESS} gauge`, `${SUCCESS} 1`, `# TYPE ${STAMP} gauge`]);
    assert.ok(atStart.stamp >= spawned - 1 && atStart.stamp <= started + 1, `start-up stamp ${atStart.stamp} in [${spawned}, ${started}]`);

    // Broken on disk: the running config stays, and the gauge says the file is not applied.
    await replace('agents:\n  s:\n    url: ftp://nope\n', 1);
    gw.child.kill('SIGHUP');
    const broken = await untilSuccess(gw, 0);
    assert.deepEqual(broken.lines, [`# TYPE ${SUCCESS} gauge`, `${SUCCESS} 0`, `# TYPE ${STAMP} gauge`]);
    assert.equal(broken.stamp, atStart.stamp, 'a failed reload leaves the last success time');
    await gw.waitForLog('config reload failed');

    // Restored to the running config's text: `unchanged`, a success.
    await new Promise((r) => setTimeout(r, 20)); // a later stamp than the start's, at millisecond resolution
    await replace(valid, 2);
    gw.child.kill('SIGHUP');
    const restored = await untilSuccess(gw, 1);
    assert.ok(restored.stamp > atStart.stamp, `stamp ${restored.stamp} after ${atStart.stamp}`);
    assert.ok(restored.stamp <= Date.now() / 1000 + 1);
    await gw.waitForLog('config unchanged');

    gw.child.kill('SIGTERM');
    assert.equal(await withTimeout(gw.exited, 30_000, 'exit'), 0);
  } finally {
    gw?.kill();
    await rm(dir, { recursive: true, force: true });
  }
});
