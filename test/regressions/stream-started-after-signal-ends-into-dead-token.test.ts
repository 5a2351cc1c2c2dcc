/**
 * Regression (review 34, item 1): without a resume secret, a request's SSE stream whose head
 * came from the seller only after SIGTERM could still end plainly (outcome `resumable_end`)
 * into a token no process verifies, against the rule of
 * test/regressions/restart-without-secret-hangs-sdk-call.test.ts (a hostile new user's trial
 * 13, M1). The stream learnt the shutdown only when the shutdown's hook first ran over it (at
 * the signal, at a 50 ms sweep, after an exchange's end); a seller that sends the head, an
 * event with an id and its close in one packet (the SEP-1699 pattern) ended the stream before
 * any sweep: the host got the event with an `agw1.` token, then a plain end; exit 0, no
 * `gateway_shutdown`.
 *
 * Input: a raw net seller on 127.0.0.1 that holds a `tools/call` (id 7) until the test
 * releases it, then writes, in one write, an HTTP/1.1 200 `text/event-stream` head
 * (`Connection: close`), one progress event with `id: ev1`, and closes. The gateway runs as
 * its own process (src/main.ts, no resume secret); a raw fetch POSTs the call through it; the
 * gateway gets SIGTERM, and once it logged `shutting down` the seller is released.
 *
 * Expectation: the host's body is the progress event (its id a token, as it passed), then, as
 * the last event, the gateway's `gateway_shutdown` tool error for id 7 (docs/errors.md), byte
 * for byte; never a plain end after the token; the exchange line says outcome
 * `local_error`, reason `gateway_shutdown`, `resume_secret` `per_process`; the gateway exits 0.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAdcpError, toolErrorResult } from '../../src/mcp/local-error.js';
import { PROCESS_TEST_TIMEOUT_MS, startGatewayProcess } from '../helpers/process.js';
import { withTimeout } from '../helpers/timeout.js';

const TOOL = 'create_media_buy';
const PROGRESS = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };

let seller: Server;
let sellerUrl: string;
let dir: string;
/** The held tools/call's connection, once its request arrived. */
let held: Promise<Socket>;

before(async () => {
  let heldResolve: (s: Socket) => void = () => {};
  held = new Promise((resolve) => (heldResolve = resolve));
  seller = createServer((socket) => {
    let seen = '';
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (seen.includes('"tools/call"') && seen.trimEnd().endsWith('}')) heldResolve(socket);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/mcp`;
  dir = await mkdtemp(join(tmpdir(), 'gw-late-stream-'));
});

after(async () => {
  await new Promise<void>((resolve) => seller.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('stream-started-after-signal-ends-into-dead-token', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  test('no resume secret: a stream whose head, id event and end come in one write after SIGTERM gets gateway_shutdown, not a plain end with a token', async () => {
    const file = join(dir, 'gw.yaml');
    await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nagents:\n  s:\n    url: ${sellerUrl}\n`);
    const gw = await startGatewayProcess(file);
    try {
      const answer = fetch(`${gw.address}/agents/s/mcp`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: TOOL, arguments: {} } }),
      }).then(async (res) => ({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }));
      const socket = await withTimeout(held, 10_000, 'the seller got the call');
      gw.child.kill('SIGTERM');
      await gw.waitForLog('shutting down');
      socket.end(
        'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n' + `id: ev1\ndata: ${JSON.stringify(PROGRESS)}\n\n`,
      );
      const got = await withTimeout(answer, 10_000, 'the host answer');
      const exitCode = await withTimeout(gw.exited, 30_000, 'exit');

      assert.deepEqual([got.status, got.type], [200, 'text/event-stream']);
      // The progress event went out as it came, its id a token (as on a stream the signal
      // found open); what matters is the end: the call's answer, not a plain end to resume.
      const events = got.body.split('\n\n');
      assert.equal(events.length, 3, got.body);
      assert.match(events[0]!, new RegExp(`^id: agw1\\.[A-Za-z0-9_.-]+\ndata: ${JSON.stringify(PROGRESS).replace(/[{}[\]]/g, '\\$&')}$`));
      const err = buildAdcpError({ reason: 'gateway_shutdown', method: 'tools/call', toolName: TOOL });
      assert.equal(events[1], `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: toolErrorResult(err) })}`);
      assert.equal(events[2], '');
      const line = gw.logs.find((l) => l.msg === 'exchange' && l.method === 'tools/call');
      assert.deepEqual([line?.outcome, line?.reason, line?.resume_secret], ['local_error', 'gateway_shutdown', 'per_process']);
      assert.equal(exitCode, 0);
    } finally {
      gw.kill();
    }
  });
});
