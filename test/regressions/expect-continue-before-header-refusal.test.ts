/**
 * Reported failure (a hostile trial 23, L1): a head with `Expect: 100-continue` that the MCP
 * handler refuses from its head alone was still told `100 Continue`, and got its refusal only
 * once the whole body was read: a bad `Origin` (or none with `Sec-Fetch-Site: cross-site`), a
 * `Host` the gateway does not serve (in the field or in an absolute-form target), two `Host`
 * fields, or none on HTTP/1.1. With the body not sent, the host waited for request_timeout_ms
 * and got 408; sent, it was read (up to its agent's max_request_bytes) for nothing. RFC 9110
 * §10.1.1: a server that will refuse the request from its head answers so, and the client
 * never sends the body.
 *
 * Now (src/request/head-refusal.ts headRefusal, the handler's own function, also asked by
 * app.ts `continueWanted`): such a head gets no 100; its refusal comes at once, the same status,
 * body, `refused` line and count as the same request sent without `Expect` gets after its
 * body, with `Connection: close` (its body is never read). While draining it gets `draining`
 * from the head, id null. Refusals that need the body still get their 100: an invalid
 * `X-Max-Response-Bytes` is refused for the request's id (docs/errors.md, gateway headers).
 *
 * Input: a gateway on 127.0.0.1 (it checks Host), request_timeout_ms 3000, agent `s` before a
 * raw seller; raw TCP requests, the body sent only when asked for. Expectation: the exact
 * answers below within 1 s of the head (before the fix: `100 Continue`, then nothing until 408
 * after 3 s), no 100, the connection closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { firstAnswer, openRawConnection, toolCallRequest, writeAndRead } from '../helpers/http-wire.js';
import { refusedOnce, type RefusedLine } from '../helpers/refusal-count.js';
import { beginShutdown, drainingAnswer, startHoldingSeller, withoutDate } from '../helpers/draining.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const YAML = (url: string): string => agentsYaml({ s: url }, ['request_timeout_ms: 3000']);

/** How long an answer may take to count as "from the head" (waiting for the body would take request_timeout_ms, 3 s). */
const AT_ONCE_MS = 1000;

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_products', arguments: {} } });

/** A request head: `method` `target`, the `host` lines given (none: no Host), `extra` fields, `Expect: 100-continue` when `expect`. */
function head(o: { method?: string; target?: string; host?: string; extra?: string; expect: boolean }): string {
  const { method = 'POST', target = '/agents/s/mcp', host = 'host: 127.0.0.1\r\n', extra = '', expect } = o;
  return (
    `${method} ${target} HTTP/1.1\r\n${host}content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-protocol-version: 2025-06-18\r\n${extra}${expect ? 'expect: 100-continue\r\n' : ''}content-length: ${BODY.length}\r\n\r\n`
  );
}

/** `text` as the wire reader (latin1) shows its UTF-8 bytes (`§` is two bytes). */
const onWire = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
const refusal = (code: number, reason: string, message: string): string => JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message, data: { reason } } });
const SERVED = 'the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).';
const ORIGIN = refusal(-32600, 'origin_not_allowed', `Origin "http://evil.example" is not allowed: ${SERVED}`);
const HOST = refusal(-32600, 'host_not_allowed', 'Host "evil.example" is not allowed: the gateway serves localhost, 127.0.0.1 and [::1] (allowed_hosts lists other host names).');

/** Each head the handler refuses from the head alone: its parts, its status line, its exact body, its reason. */
const CASES: ReadonlyArray<{ name: string; parts: Omit<Parameters<typeof head>[0], 'expect'>; status: string; body: string; reason: string }> = [
  { name: 'a bad Origin', parts: { extra: 'origin: http://evil.example\r\n' }, status: 'HTTP/1.1 403 Forbidden', body: ORIGIN, reason: 'origin_not_allowed' },
  {
    name: 'Sec-Fetch-Site: cross-site, no Origin',
    parts: { extra: 'sec-fetch-site: cross-site\r\n' },
    status: 'HTTP/1.1 403 Forbidden',
    body: refusal(-32600, 'origin_not_allowed', `A browser's request from another origin's page (Sec-Fetch-Site: cross-site, no Origin) is not allowed: ${SERVED}`),
    reason: 'origin_not_allowed',
  },
  { name: 'a bad Origin to an unknown agent (refused before unknown_agent)', parts: { target: '/agents/zz/mcp', extra: 'origin: http://evil.example\r\n' }, status: 'HTTP/1.1 403 Forbidden', body: ORIGIN, reason: 'origin_not_allowed' },
  { name: 'a DELETE with a bad Origin', parts: { method: 'DELETE', extra: 'origin: http://evil.example\r\n' }, status: 'HTTP/1.1 403 Forbidden', body: ORIGIN, reason: 'origin_not_allowed' },
  { name: 'Host: evil.example', parts: { host: 'host: evil.example\r\n' }, status: 'HTTP/1.1 403 Forbidden', body: HOST, reason: 'host_not_allowed' },
  { name: 'an absolute-form target naming evil.example', parts: { target: 'http://evil.example/agents/s/mcp' }, status: 'HTTP/1.1 403 Forbidden', body: HOST, reason: 'host_not_allowed' },
  {
    name: 'two Host fields',
    parts: { host: 'host: 127.0.0.1\r\nhost: evil.example\r\n' },
    status: 'HTTP/1.1 400 Bad Request',
    body: refusal(-32600, 'malformed_http', 'Bad request: a request must carry one Host header, not several (RFC 9112 §3.2).'),
    reason: 'malformed_http',
  },
  { name: 'no Host', parts: { host: '' }, status: 'HTTP/1.1 400 Bad Request', body: refusal(-32600, 'malformed_http', 'Bad request: an HTTP/1.1 request must carry a Host header.'), reason: 'malformed_http' },
];

describe('Expect: 100-continue on a head the MCP handler refuses from its headers', { timeout: TEST_TIMEOUT_MS * 2 }, () => {
  let seller: RawSeller;
  let gw: ObservedGateway;
  let port: number;
  before(async () => {
    seller = await startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(5, { content: [] })));
    gw = await startObservedGateway(YAML(seller.url));
    port = Number(new URL(gw.baseUrl).port);
  });
  after(async () => {
    await gw.close();
    await seller.close();
  });

  for (const c of CASES) {
    test(`${c.name}: ${c.status.slice(9)} at once, no 100 Continue, as without Expect (was 100, then 408 after 3 s)`, async () => {
      // Today's answer: the same request without Expect, its body sent.
      const plain = await refusedOnce({ seller, gateway: gw }, c.reason, () => writeAndRead(port, head({ ...c.parts, expect: false }), [BODY], 500));
      const plainAnswer = firstAnswer(plain.answer.text);
      assert.deepEqual([plainAnswer.status, plainAnswer.body], [c.status, onWire(c.body)], 'the refusal without Expect');
      // With Expect, the body not sent.
      const told = await refusedOnce({ seller, gateway: gw }, c.reason, () => writeAndRead(port, head({ ...c.parts, expect: true }), [], 2 * AT_ONCE_MS));
      const answer = told.answer;
      assert.doesNotMatch(answer.text, /100 Continue/);
      assert.deepEqual(firstAnswer(answer.text), { status: c.status, connection: 'close', body: onWire(c.body) });
      assert.ok(answer.firstByteMs !== null && answer.firstByteMs < AT_ONCE_MS, `answered in ${answer.firstByteMs} ms`);
      assert.equal(answer.closed, true, 'the connection is closed');
      // The same `refused` line (and one count each: refusedOnce).
      assert.deepEqual<RefusedLine[]>(told.refused, plain.refused);
    });
  }

  test('controls: a head refused for its id after its body (invalid X-Max-Response-Bytes), and a good one, get their 100', async () => {
    const invalid = await writeAndRead(port, head({ extra: 'x-max-response-bytes: abc\r\n', expect: true }), [], 300);
    assert.equal(invalid.text, 'HTTP/1.1 100 Continue\r\n\r\n');
    const good = await writeAndRead(port, head({ expect: true }), [BODY], 1000);
    assert.ok(good.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), good.text.slice(0, 80));
  });
});

describe('Expect: 100-continue on a head refused from its headers, while draining', { timeout: TEST_TIMEOUT_MS }, () => {
  let got = '';
  before(async () => {
    const holding = await startHoldingSeller(10, { content: [] });
    const gw = await startObservedGateway(YAML(holding.seller.url));
    const port = Number(new URL(gw.baseUrl).port);
    try {
      const busy = await openRawConnection(port);
      busy.socket.write(toolCallRequest(10, 's'));
      await withTimeout(holding.held, 5_000, 'id 10 at the seller');
      const conn = await openRawConnection(port);
      await new Promise((r) => setTimeout(r, 100));
      const { closed } = await beginShutdown(gw);
      conn.socket.write(head({ extra: 'origin: http://evil.example\r\n', expect: true }));
      got = await withTimeout(conn.closed, 2_000, 'the answer from the head');
      holding.release();
      await withTimeout(busy.closed, 5_000, 'the busy connection');
      await withTimeout(closed, 5_000, 'the close');
    } finally {
      holding.release();
      await gw.close().catch(() => {});
      await holding.seller.close();
    }
  });

  test('a bad Origin: 503 draining from the head, id null, no 100 Continue', () => {
    assert.equal(withoutDate(got), drainingAnswer(null));
  });
});
