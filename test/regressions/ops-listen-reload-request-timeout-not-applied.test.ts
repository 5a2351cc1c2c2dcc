/**
 * Regression (review 36, F2, Low): with `ops_listen` set, a reload's `request_timeout_ms` never
 * reached the ops listener. `setConfig` (src/app.ts) set Node's `requestTimeout` and
 * `headersTimeout` on the main server only, while the ops server was built from the same
 * options at start-up; docs/configuration.md says a change applies at once. A connection to
 * the ops port that sent nothing kept the start-up 30 s. Now a reload sets both servers.
 *
 * Input: a gateway with `ops_listen` (port 0) and `request_timeout_ms: 30000`, reloaded with
 * `request_timeout_ms: 1000` through `setConfig` (what a reload applies: src/reload.ts); a raw
 * TCP connection to each port that sends nothing.
 * Expected: each server's `requestTimeout` and `headersTimeout` are 1000; each connection gets
 * the exact 408 `request_timeout` answer 1000-2300 ms after it opened (the check runs every
 * second; was, on the ops port: nothing within 4 s).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const yaml = (ms: number): string => `request_timeout_ms: ${ms}\nlisten: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n`;
const RELOADED_MS = 1000;
const BODY = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request timeout: the whole request did not arrive within request_timeout_ms.', data: { reason: 'request_timeout' } } });
const ANSWER_408 = `HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\nconnection: close\r\n\r\n${BODY}`;

/** A connection to `address` that sends nothing: what came back and when (ms after connecting) it was closed; cut after 4 s. */
function silentConnection(address: string): Promise<{ text: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let openedAt = 0;
    const guard = setTimeout(() => socket.destroy(), 4_000);
    socket.setEncoding('utf8');
    socket.on('connect', () => (openedAt = Date.now()));
    socket.on('data', (s: string) => (text += s));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ text, closedAfterMs: Date.now() - openedAt });
    });
  });
}

describe('ops-listen-reload-request-timeout-not-applied', { timeout: TEST_TIMEOUT_MS }, () => {
  let app: FastifyInstance;
  let main: string;
  let ops: string;
  before(async () => {
    app = await buildApp(parseConfig(yaml(30_000), { env: {} }), { logger: false });
    const addresses = await listenAll(app, app.gateway.config);
    main = addresses.address;
    ops = addresses.opsAddress!;
    app.gateway.setConfig(parseConfig(yaml(RELOADED_MS), { env: {} }));
  });
  after(async () => {
    await app.close();
  });

  test("a reload sets both servers' timeouts (was: the ops server kept 30000)", () => {
    const ops = app.gateway.opsApp!.server;
    assert.deepEqual(
      { main: [app.server.requestTimeout, app.server.headersTimeout], ops: [ops.requestTimeout, ops.headersTimeout] },
      { main: [RELOADED_MS, RELOADED_MS], ops: [RELOADED_MS, RELOADED_MS] },
    );
  });

  test('a silent connection to either port gets its 408 after the reloaded timeout', async () => {
    const [onMain, onOps] = await Promise.all([silentConnection(main), silentConnection(ops)]);
    for (const [port, r] of [['main', onMain], ['ops', onOps]] as const) {
      assert.equal(r.text, ANSWER_408, port);
      assert.ok(r.closedAfterMs >= RELOADED_MS && r.closedAfterMs < RELOADED_MS + 1300, `${port}: closed after ${r.closedAfterMs} ms`);
    }
  });
});
