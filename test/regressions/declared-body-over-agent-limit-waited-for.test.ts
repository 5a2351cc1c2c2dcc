/**
 * Reported failure (a hostile new user's trial 19, L2): a POST whose Content-Length is over its
 * agent's `max_request_bytes` (200) but under the gateway-wide maximum (the largest bound of
 * any agent, 4 MiB by default) was read and waited for, not refused: 300 bytes announced, 250
 * sent, the host got 408 `request_timeout` after request_timeout_ms; a chunked body with no
 * end, 300 bytes sent, 408 too. The whole 300-byte body got 413 only once read, and a 10 MB
 * Content-Length 413 at once. docs/errors.md: "a body over the bound is not read at all".
 *
 * Cause: Fastify refuses a body against one limit, the app's (the largest agent bound); the
 * agent's own bound was compared with the body only once the whole of it had been read.
 *
 * Now (src/request/agent-body-limit.ts, a preParsing hook on the MCP route): a POST's declared
 * Content-Length over its agent's bound is refused at once, 413 `request_too_large`, id null,
 * `limit_bytes` the agent's, `Connection: close`, as the 10 MB one is (nothing of the body is
 * waited for); a chunked body is refused as soon as its bytes pass the bound; `Expect:
 * 100-continue` with such a Content-Length gets the 413 instead of 100 Continue.
 *
 * Input: a gateway on 127.0.0.1 (request_timeout_ms 3000) with agent `tight`
 * (max_request_bytes 200) and agent `roomy` (the default bound), its seller unreachable (no
 * request reaches it); raw TCP requests. Expectation: the exact status line, `Connection`,
 * body, and the answer within 1 s (the 408 came after 3 s).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { captureLog } from '../helpers/capture-log.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { firstAnswer, writeAndRead as exchange, type WireAnswer as Wire } from '../helpers/http-wire.js';

const CONFIG = `log_level: info
listen: { host: 127.0.0.1, port: 0 }
request_timeout_ms: 3000
agents:
  tight:
    url: http://127.0.0.1:9/mcp
    max_request_bytes: 200
  roomy:
    url: http://127.0.0.1:9/mcp
`;

/** How long an answer may take to count as "at once" (the 408 came after request_timeout_ms, 3 s). */
const AT_ONCE_MS = 1000;

function post(agent: string, fields: string): string {
  return `POST /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${fields}\r\n`;
}

const TOO_LARGE_200 = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: "Request body is over this agent's max_request_bytes (200).", data: { reason: 'request_too_large', limit_bytes: 200 } },
});

describe('a declared body over its agent max_request_bytes is refused before it is read', { timeout: TEST_TIMEOUT_MS }, () => {
  let gateway: RunningGateway;
  let port: number;
  const log = captureLog('info');
  before(async () => {
    gateway = await startGateway(CONFIG, { logger: log.logger });
    port = Number(new URL(gateway.baseUrl).port);
  });
  after(async () => {
    await gateway.close();
  });

  const refusedAtOnce = (wire: Wire, label: string): void => {
    assert.deepEqual(firstAnswer(wire.text), { status: 'HTTP/1.1 413 Payload Too Large', connection: 'close', body: TOO_LARGE_200 }, label);
    assert.ok(wire.firstByteMs !== null && wire.firstByteMs < AT_ONCE_MS, `${label}: answered in ${wire.firstByteMs} ms`);
    assert.equal(wire.closed, true, `${label}: connection closed`);
  };

  test('Content-Length 300, 250 bytes sent: 413 at once (was 408 request_timeout after request_timeout_ms)', async () => {
    refusedAtOnce(await exchange(port, post('tight', 'Content-Length: 300\r\n'), ['x'.repeat(250)]), 'CL 300, 250 sent');
  });

  test('Content-Length 300, nothing sent: 413 at once', async () => {
    refusedAtOnce(await exchange(port, post('tight', 'Content-Length: 300\r\n'), []), 'CL 300, none sent');
  });

  test('chunked, 300 bytes in one chunk, no end: 413 at once (was 408)', async () => {
    refusedAtOnce(await exchange(port, post('tight', 'Transfer-Encoding: chunked\r\n'), [`12c\r\n${'x'.repeat(300)}\r\n`]), 'chunked 300, no end');
  });

  test('chunked, 100 bytes then 150 bytes, no end: 413 once the bytes pass 200', async () => {
    const chunk = (n: number): string => `${n.toString(16)}\r\n${'x'.repeat(n)}\r\n`;
    refusedAtOnce(await exchange(port, post('tight', 'Transfer-Encoding: chunked\r\n'), [chunk(100), chunk(150)]), 'chunked 100 + 150');
  });

  test('Expect: 100-continue with Content-Length 300: the 413, no 100 Continue', async () => {
    const wire = await exchange(port, post('tight', 'Content-Length: 300\r\nExpect: 100-continue\r\n'), []);
    assert.doesNotMatch(wire.text, /100 Continue/);
    refusedAtOnce(wire, 'Expect 100-continue, CL 300');
  });

  test('one refused line per refusal, naming the agent, as for the 10 MB Content-Length (was a 408 line, agent null)', async () => {
    const before = log.entries.length;
    await exchange(port, post('tight', 'Content-Length: 300\r\n'), []);
    await exchange(port, post('tight', 'Content-Length: 10000000\r\n'), []);
    const lines = log.entries.slice(before).filter((e) => e.msg === 'refused');
    assert.deepEqual(
      lines.map((l) => [l.agent, l.status, l.reason]),
      [
        ['tight', 413, 'request_too_large'],
        ['tight', 413, 'request_too_large'],
      ],
    );
  });

  test('controls: a 200-byte body within the bound is read (and forwarded: unreachable seller); the roomy agent waits for its 300 bytes', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: '' } });
    const padded = body.replace('"pad":""', `"pad":"${'y'.repeat(200 - body.length)}"`);
    assert.equal(padded.length, 200);
    const within = firstAnswer((await exchange(port, post('tight', `Content-Length: 200\r\n`), [padded], 5000)).text);
    assert.equal(within.status, 'HTTP/1.1 200 OK');
    assert.match(within.body, /"upstream_unreachable"/);
    const roomy = await exchange(port, post('roomy', 'Content-Length: 300\r\n'), ['x'.repeat(250)], 500);
    assert.deepEqual([roomy.text, roomy.closed], ['', false]);
  });
});
