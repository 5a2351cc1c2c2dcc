/**
 * Regression (hostile trial 35, leftover 3, real Chromium against the gateway): Chromium's
 * speculative preconnects (a TCP connection opened ahead of a request that never comes, not
 * one byte sent) each left an info `refused` line, reason `request_timeout`, `http_method`
 * null, `http_error` ERR_HTTP_REQUEST_TIMEOUT, and a count in
 * `adcp_gateway_refusals_total{reason="request_timeout"}`, request_timeout_ms after the
 * connection opened: Node's HTTP server times a connection out from when it is accepted
 * (docs/configuration.md request_timeout_ms), and its `clientError` went to the refusal's log
 * line and count (errors/client-error.ts, app.ts). No request was refused: the operator saw
 * refusals of browsers that asked nothing. Now a connection closed by the timeout having sent
 * no byte writes a debug line, `unused connection closed`, and no `refused` line or count; a
 * connection that sent part of a request keeps its `refused` line and count. The 408 answer
 * itself is unchanged (test/regressions/request-timeout-idle-connection-undocumented.test.ts).
 *
 * Input: a gateway with `request_timeout_ms: 1000` and a debug-level log; raw TCP connections
 * on 127.0.0.1: one that connects and sends nothing, one that sends `POST /agents/s/mcp
 * HTTP/1.1\r\n` and no more; both left until the gateway closes them.
 * Expected: both get the exact 408 answer; the silent one one debug line
 * `{status:408, http_error:'ERR_HTTP_REQUEST_TIMEOUT'}` and no refused line; the partial one one
 * refused line `{agent:null, http_method:null, status:408, reason:'request_timeout'}`; the
 * count moved by one (the partial request's) only.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { captureLog } from '../helpers/capture-log.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const TIMEOUT_MS = 1000;
const BODY = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request timeout: the whole request did not arrive within request_timeout_ms.', data: { reason: 'request_timeout' } } });
const ANSWER_408 = `HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\nconnection: close\r\n\r\n${BODY}`;

const log = captureLog('debug');
let gateway: RunningGateway;

before(async () => {
  gateway = await startGateway(`request_timeout_ms: ${TIMEOUT_MS}\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n`, { logger: log.logger });
});

after(async () => {
  await gateway.close();
});

/** Connects to the gateway, writes `text` (if any), and resolves with all it got back once the gateway closed the connection (5 s at most). */
function untilClosed(text: string): Promise<{ text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(gateway.baseUrl).port), '127.0.0.1');
    let got = '';
    const guard = setTimeout(() => socket.destroy(new Error('not closed within 5 s')), 5_000);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      if (text) socket.write(text);
    });
    socket.on('data', (s: string) => (got += s));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ text: got });
    });
  });
}

const refusedLines = (): Array<Record<string, unknown>> =>
  log.entries.filter((e) => e.msg === 'refused').map((e) => ({ agent: e.agent, http_method: e.http_method, status: e.status, reason: e.reason, http_error: e.http_error, level: e.level }));

describe('a connection that sent nothing before request_timeout_ms is no refused request (a browser preconnect)', { timeout: TEST_TIMEOUT_MS }, () => {
  let silent: { text: string };
  let partial: { text: string };
  let counted = 0;
  before(async () => {
    const countBefore = refusalCountIn(await gateway.app.gateway.metrics.render(), 'request_timeout');
    [silent, partial] = await Promise.all([untilClosed(''), untilClosed('POST /agents/s/mcp HTTP/1.1\r\n')]);
    counted = refusalCountIn(await gateway.app.gateway.metrics.render(), 'request_timeout') - countBefore;
  });

  test('both connections get the 408 answer, as before', () => {
    assert.equal(silent.text, ANSWER_408);
    assert.equal(partial.text, ANSWER_408);
  });

  test('one refused line: the partial request\'s, none for the silent connection', () => {
    assert.deepEqual(refusedLines(), [{ agent: null, http_method: null, status: 408, reason: 'request_timeout', http_error: 'ERR_HTTP_REQUEST_TIMEOUT', level: 30 }]);
  });

  test('the silent connection: one debug line, unused connection closed', () => {
    const unused = log.entries.filter((e) => e.msg === 'unused connection closed').map((e) => ({ level: e.level, status: e.status, http_error: e.http_error }));
    assert.deepEqual(unused, [{ level: 20, status: 408, http_error: 'ERR_HTTP_REQUEST_TIMEOUT' }]);
  });

  test('adcp_gateway_refusals_total{reason="request_timeout"} moved by one (the partial request)', () => {
    assert.equal(counted, 1);
  });
});
