/**
 * Regression (a hostile operator's trial 51, finding 4): on a second signal the gateway ends
 * each SSE stream still open (a request's that cannot be resumed with its `gateway_shutdown`
 * event), then cuts each exchange still open; the streams it had just ended, whose ending was
 * written, were logged outcome `shutdown_cut` all the same and counted in `exchanges_cut`.
 *
 * Now the exit cuts the exchanges a turn later (src/cli.ts `forcedExit`): a stream whose
 * ending went out has closed by then and keeps its outcome (`local_error`, reason
 * `gateway_shutdown`); only the exchanges actually cut are `shutdown_cut` and counted.
 *
 * Input: a gateway process (no resume secret) before a raw seller that answers `tools/call`
 * `sse` with an SSE head and one comment, then nothing, and never answers `json`; both calls
 * are in flight; SIGTERM, then (after `shutting down`) SIGTERM again.
 * Expectation: exit 1; the SSE host got the `gateway_shutdown` error (a tool result, `isError`) for id 1; its
 * exchange line says `local_error` / `gateway_shutdown`, the JSON one `shutdown_cut`; the exit
 * line says `exchanges_cut` 1 (before: both `shutdown_cut`, `exchanges_cut` 2).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess } from '../helpers/process.js';
import { toolCall } from '../helpers/raw.js';
import { withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';

let seller: RawSeller;
let dir: string;

before(async () => {
  seller = await startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { params: { name: string } };
    if (msg.params.name === 'sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': working\n\n');
    // `json`: never answered
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-second-signal-'));
});

after(async () => {
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

describe('second-signal-logs-ended-streams-as-cut', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('a stream ended with gateway_shutdown at a second signal keeps its outcome; only the JSON call is cut', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s: { url: ${seller.url} }\n`);
    const gw = await startGatewayProcess(file);
    const post = (id: number, name: string) =>
      fetch(`${gw.address}/agents/s/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify(toolCall(id, name)),
      });
    try {
      const sse = await withTimeout(post(1, 'sse'), 10_000, 'the SSE head');
      assert.equal(sse.status, 200);
      const sseBody = sse.text().catch((err: Error) => `failed: ${err.message}`);
      const json = post(2, 'json').catch(() => 'failed');
      for (let k = 0; k < 500 && seller.requests.length < 2; k++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(seller.requests.length, 2);

      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      gw.child.kill('SIGTERM');
      assert.equal(await withTimeout(gw.exited, 15_000, 'exit'), 1);
      await json;
      const body = await withTimeout(sseBody, 5_000, 'the SSE body');
      assert.match(body, /^: working\nevent: message\ndata: \{"jsonrpc":"2\.0","id":1,"result":\{[^\n]*"isError":true,[^\n]*"details":\{"reason":"gateway_shutdown"\}\}\}\}\}\n\n$/);

      const lines = gw.logs.filter((l) => l.msg === 'exchange').map((l) => [l.tool, l.outcome, l.reason]);
      assert.deepEqual(lines.sort(), [
        ['json', 'shutdown_cut', null],
        ['sse', 'local_error', 'gateway_shutdown'],
      ]);
      const exit = gw.logs.find((l) => l.msg === 'second signal while shutting down: exiting now');
      assert.equal(exit?.exchanges_cut, 1);
    } finally {
      gw.kill();
    }
  });
});
