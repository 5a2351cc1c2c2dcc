/**
 * Reported failures (a hostile trial 23):
 * - H2: a body to an UNKNOWN agent (`POST /agents/zz/mcp`), or with a method the MCP endpoint
 *   does not take (`PUT /agents/small/mcp`), was read whole under the app's body limit, the
 *   largest `max_request_bytes` of any agent (one at 1 GiB made it 1 GiB), before its 404
 *   `unknown_agent` / 405 `method_not_allowed`: Content-Length 200,000,000 with `Expect:
 *   100-continue` got `100 Continue`, all 200 MB were read (3.5 s), then the 404; 300 MiB
 *   without Expect took the process from 96 to 1297 MB.
 * - M1: while draining (after SIGTERM), every `Expect: 100-continue` head got 100 Continue,
 *   even one refused from the head when not draining: Content-Length 50,000,000 to an agent
 *   (100, then 413), 4,000,000 over its agent's 200-byte bound (100, 4 MB read, then 503
 *   `draining` id null), `POST /nope` (100, the body read, then 503).
 *
 * Now (src/request/agent-body-limit.ts bodyBound, one rule for the body hook and for
 * `Expect`): such a body is held to `defaults.max_request_bytes`: a Content-Length over it is
 * refused from the head with the request's own refusal, id null (no body read), `Connection:
 * close`, no 100; a chunked one as soon as its bytes pass it. Within it, the body is read for
 * the id of the `unknown_agent` answer, as before. While draining, a head refused from the
 * head gets `draining` from the head (id null, no 100); any other its 100, then `draining`
 * for its id.
 *
 * Input: a gateway on 127.0.0.1, request_timeout_ms 3000, defaults.max_request_bytes 1000,
 * agent `s` at 10,000,000 (the app's body limit) and `small` at 200; raw TCP requests whose
 * body is not sent. Expectation: the exact answer within 1 s of the head (before the fix it
 * came only once the body was read: 408 after 3 s, the body never sent), no 100 Continue.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { firstAnswer, openRawConnection, toolCallRequest, writeAndRead, type RawConnection } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { beginShutdown, drainingAnswer, startHoldingSeller, withoutDate } from '../helpers/draining.js';

const HEAD = ['request_timeout_ms: 3000', 'defaults:', '  max_request_bytes: 1000'];
const agents = (url: string): string => agentsYaml({ s: { url, max_request_bytes: 10_000_000 }, small: { url, max_request_bytes: 200 } }, HEAD);

/** How long an answer may take to count as "from the head" (reading the body would take request_timeout_ms, 3 s, here). */
const AT_ONCE_MS = 1000;

function head(method: string, target: string, fields: string, expect = true): string {
  return `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${expect ? 'expect: 100-continue\r\n' : ''}${fields}\r\n`;
}

const UNKNOWN = (id: number | null): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: 'Unknown agent "zz": no such agent in the gateway config.', data: { reason: 'unknown_agent', agent: 'zz' } } });
const NOT_ALLOWED = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Method not allowed: MCP endpoints accept POST, GET, DELETE.', data: { reason: 'method_not_allowed' } } });

describe('a body to an unknown agent, or with a method the MCP endpoint refuses, is held to defaults.max_request_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: RawSeller;
  let gw: ObservedGateway;
  let port: number;
  before(async () => {
    seller = await startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [] })));
    gw = await startObservedGateway(agents(seller.url));
    port = Number(new URL(gw.baseUrl).port);
  });
  after(async () => {
    await gw.close();
    await seller.close();
  });

  /** Sends `text` (a head, and `parts`) and expects `status` and `body`, `Connection: close`, within AT_ONCE_MS, no 100, the close. */
  async function refusedFromHead(text: string, parts: string[], status: string, body: string): Promise<void> {
    const answer = await writeAndRead(port, text, parts);
    assert.doesNotMatch(answer.text, /100 Continue/, text);
    assert.deepEqual(firstAnswer(answer.text), { status, connection: 'close', body }, text);
    assert.ok(answer.firstByteMs !== null && answer.firstByteMs < AT_ONCE_MS, `answered in ${answer.firstByteMs} ms`);
    assert.equal(answer.closed, true, 'the connection is closed');
  }

  test('H2: POST to an unknown agent, Content-Length 200,000,000, Expect: 404 unknown_agent from the head (was 100, the body read, then 404)', async () => {
    await refusedFromHead(head('POST', '/agents/zz/mcp', 'content-length: 200000000\r\n'), [], 'HTTP/1.1 404 Not Found', UNKNOWN(null));
  });

  test('H2: the same without Expect, Content-Length 1001, 10 bytes sent: 404 at once (was 408 after 3 s, waiting for the body)', async () => {
    await refusedFromHead(head('POST', '/agents/zz/mcp', 'content-length: 1001\r\n', false), ['x'.repeat(10)], 'HTTP/1.1 404 Not Found', UNKNOWN(null));
  });

  test('H2: DELETE to an unknown agent, Content-Length 5,000,000: 404 from the head', async () => {
    await refusedFromHead(head('DELETE', '/agents/zz/mcp', 'content-length: 5000000\r\n', false), [], 'HTTP/1.1 404 Not Found', UNKNOWN(null));
  });

  test('H2: chunked to an unknown agent, 600 + 600 bytes, no end: 404 once its bytes pass 1000 (was 408)', async () => {
    const chunk = `258\r\n${'x'.repeat(600)}\r\n`;
    await refusedFromHead(head('POST', '/agents/zz/mcp', 'transfer-encoding: chunked\r\n', false), [chunk, chunk], 'HTTP/1.1 404 Not Found', UNKNOWN(null));
  });

  test('H2: PUT to a configured agent, Content-Length 200,000,000, Expect: 405 from the head (was 100, the body read, then 405)', async () => {
    await refusedFromHead(head('PUT', '/agents/small/mcp', 'content-length: 200000000\r\n'), [], 'HTTP/1.1 405 Method Not Allowed', NOT_ALLOWED);
  });

  test('controls: within defaults.max_request_bytes the body is read, after 100 Continue, for the id of the 404; the connection kept', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
    const answer = await writeAndRead(port, head('POST', '/agents/zz/mcp', `content-length: ${body.length}\r\n`), [body], 500);
    assert.ok(answer.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\n'), answer.text.slice(0, 80));
    assert.deepEqual(firstAnswer(answer.text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length)), { status: 'HTTP/1.1 404 Not Found', connection: 'keep-alive', body: UNKNOWN(7) });
    assert.equal(answer.closed, false);
    // A configured agent's POST keeps its own bound (s: 10,000,000), not the defaults'.
    const big = await writeAndRead(port, head('POST', '/agents/s/mcp', 'content-length: 5000\r\n'), [], 300);
    assert.equal(big.text, 'HTTP/1.1 100 Continue\r\n\r\n');
  });

  test('the refusals are logged and counted as any', () => {
    const refused = gw.lines.filter((l) => l.msg === 'refused' && l.agent === 'zz').map((l) => [l.reason, l.status, l.http_method]);
    assert.deepEqual(refused.slice(0, 4), [
      ['unknown_agent', 404, 'POST'],
      ['unknown_agent', 404, 'POST'],
      ['unknown_agent', 404, 'DELETE'],
      ['unknown_agent', 404, 'POST'],
    ]);
  });
});

describe('M1: Expect: 100-continue while draining', { timeout: TEST_TIMEOUT_MS }, () => {
  const got = new Map<string, string>();
  const BODY = JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'ping' });
  /** The cases: a connection each, opened before the shutdown; the head sent after it. */
  const CASES: Record<string, string> = {
    'over the app limit': head('POST', '/agents/s/mcp', 'content-length: 50000000\r\n'),
    'over its agent bound': head('POST', '/agents/small/mcp', 'content-length: 4000000\r\n'),
    'unknown path': head('POST', '/nope', `content-length: ${BODY.length}\r\n`),
    'unknown agent over defaults': head('POST', '/agents/zz/mcp', 'content-length: 4000\r\n'),
    'within its bound': head('POST', '/agents/small/mcp', `content-length: ${BODY.length}\r\n`),
  };

  before(async () => {
    const holding = await startHoldingSeller(10, { content: [] });
    const gw = await startObservedGateway(agents(holding.seller.url));
    const port = Number(new URL(gw.baseUrl).port);
    try {
      const busy = await openRawConnection(port);
      busy.socket.write(toolCallRequest(10, 'small'));
      await withTimeout(holding.held, 5_000, 'id 10 at the seller');
      const conns = new Map<string, RawConnection>();
      for (const name of Object.keys(CASES)) conns.set(name, await openRawConnection(port));
      await new Promise((r) => setTimeout(r, 100));
      const { closed } = await beginShutdown(gw);
      for (const [name, text] of Object.entries(CASES)) conns.get(name)!.socket.write(text);
      // Only the head that may be told 100 gets its body, once told.
      const within = conns.get('within its bound')!;
      await withTimeout(within.received('100 Continue'), 5_000, 'the 100 within the bound');
      within.socket.write(BODY);
      for (const [name, conn] of conns) got.set(name, await withTimeout(conn.closed, 5_000, `the answer to ${name}`));
      holding.release();
      await withTimeout(busy.closed, 5_000, 'the busy connection');
      await withTimeout(closed, 5_000, 'the close');
    } finally {
      holding.release();
      await gw.close().catch(() => {});
      await holding.seller.close();
    }
  });

  for (const name of ['over the app limit', 'over its agent bound', 'unknown path', 'unknown agent over defaults']) {
    test(`${name}: 503 draining from the head, id null, no 100 Continue (was 100 first)`, () => {
      assert.equal(withoutDate(got.get(name)!), drainingAnswer(null));
    });
  }

  test('control, within its bound: 100 Continue, the body read, 503 draining for its id', () => {
    assert.equal(withoutDate(got.get('within its bound')!), `HTTP/1.1 100 Continue\r\n\r\n${drainingAnswer(21)}`);
  });
});
