/**
 * Reported failure (code review of hostile trial 35, leftover 3): a connection closed by
 * `request_timeout_ms` having sent no byte (a browser's speculative preconnect) writes only a
 * debug line, `unused connection closed`, and no count (app.ts, since
 * test/regressions/preconnect-timeout-logged-refused.test.ts): at the default `info` level a
 * flood of such connections (each holding a socket for request_timeout_ms) left no trace.
 *
 * Now `adcp_gateway_unused_connections_total` (no labels) counts them, one per connection,
 * from 0 at start; a connection that sent part of a request is a refusal as before
 * (`adcp_gateway_refusals_total{reason="request_timeout"}`), not counted here.
 *
 * Input: a gateway with `request_timeout_ms: 1000`; raw TCP connections on 127.0.0.1: two that
 * connect and send nothing, one that sends `POST /agents/s/mcp HTTP/1.1\r\n`; all left until
 * the gateway closes them. Expected: the counter 0 before, 2 after; the refusal count moved by 1.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { refusalCountIn } from '../helpers/refusal-count.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

let gateway: RunningGateway;

before(async () => {
  gateway = await startGateway('request_timeout_ms: 1000\nagents:\n  s:\n    url: http://127.0.0.1:9/mcp\n');
});

after(async () => {
  await gateway.close();
});

/** Connects to the gateway, writes `text` (if any), and resolves once the gateway closed the connection (5 s at most). */
function untilClosed(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(gateway.baseUrl).port), '127.0.0.1');
    const guard = setTimeout(() => socket.destroy(new Error('not closed within 5 s')), 5_000);
    socket.on('connect', () => {
      if (text) socket.write(text);
    });
    socket.resume();
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(guard);
      resolve();
    });
  });
}

/** The counter's line in a `/metrics` text (undefined when absent). */
const unusedLine = (metricsText: string): string | undefined => metricsText.split('\n').find((l) => l.startsWith('adcp_gateway_unused_connections_total'));

test('connections closed having sent no byte are counted in adcp_gateway_unused_connections_total', { timeout: TEST_TIMEOUT_MS }, async () => {
  const first = await gateway.app.gateway.metrics.render();
  assert.equal(unusedLine(first), 'adcp_gateway_unused_connections_total 0', 'exposed from start, at 0');
  assert.ok(first.includes('# TYPE adcp_gateway_unused_connections_total counter\n'));
  const refusedBefore = refusalCountIn(first, 'request_timeout');
  await Promise.all([untilClosed(''), untilClosed(''), untilClosed('POST /agents/s/mcp HTTP/1.1\r\n')]);
  const text = await gateway.app.gateway.metrics.render();
  assert.equal(unusedLine(text), 'adcp_gateway_unused_connections_total 2');
  assert.equal(refusalCountIn(text, 'request_timeout') - refusedBefore, 1, 'the partial request is a refusal, as before');
});
