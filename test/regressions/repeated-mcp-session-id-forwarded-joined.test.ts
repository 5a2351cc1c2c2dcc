/**
 * Regression (hostile trial 43, low): `Mcp-Session-Id` sent twice (two field lines, or
 * `sid, sid` in one) was forwarded as Node's join of the lines, `sid, sid`, which names no
 * session: the seller (the MCP TypeScript SDK's, stateful) answered 404 "Session not found",
 * which tells an MCP client its session is over. Two `MCP-Protocol-Version` fields were
 * already refused 400 `invalid_request` for the request's id; a repeated or listed
 * `Mcp-Session-Id` now is too, with its own message, before any seller is contacted
 * (src/request/session-id-header.ts).
 *
 * Input: a session opened through the gateway; then requests through node:http, whose array
 * header values go out as one field line each: a tools/call (id 7) with the session ID twice,
 * with it and another ID, with `sid, sid` in one line, a GET with it twice. Expectation: 400,
 * the JSON-RPC error (-32600, `invalid_request`) for id 7 (null for the GET) byte for byte, one
 * `refused` line, the seller not contacted. Controls: the ID once is served (200); one line
 * `sid,sid` (a comma alone is visible ASCII, so it may be part of an ID: MCP allows 0x21-0x7E)
 * goes to the seller as written, which answers 404 for an ID it never issued.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startSdk1Seller } from '../support/sdk1/seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const VERSION = '2025-06-18';
const CALL = JSON.stringify(toolCall(7, 'get_media_buy', { media_buy_id: 'mb_1' }));
const MESSAGE =
  'Invalid Mcp-Session-Id header: Mcp-Session-Id must be sent at most once, with one session ID (a session ID has no spaces, so "a, b" is a list of two); send the one the server returned';

const refusal = (id: number | null): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: MESSAGE, data: { reason: 'invalid_request' } } });

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A POST of `body` (a GET when undefined) with `session` as the Mcp-Session-Id field(s): an array is one field line per element. */
function send(url: string, body: string | undefined, session?: string | string[]): Promise<Answer> {
  const headers: http.OutgoingHttpHeaders =
    body === undefined
      ? { accept: 'text/event-stream' }
      : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body) };
  headers['mcp-protocol-version'] = VERSION;
  if (session !== undefined) headers['mcp-session-id'] = session;
  return withTimeout(
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body);
    }),
  );
}

describe('a repeated Mcp-Session-Id is refused 400 invalid_request', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startSdk1Seller, (seller) => startObservedGateway(agentsYaml({ s: seller.url })));
  let sid = '';

  test('a session opened through the gateway', async () => {
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'h', version: '1' } } };
    const opened = await send(stack.gateway.agentUrl('s'), JSON.stringify(init));
    assert.equal(opened.status, 200);
    sid = String(opened.headers['mcp-session-id']);
    assert.match(sid, /^[0-9a-f-]{36}$/);
    const initialized = await send(stack.gateway.agentUrl('s'), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sid);
    assert.equal(initialized.status, 202);
  });

  const refused: Array<[string, string | undefined, (sid: string) => string | string[], number | null]> = [
    ['a tools/call with the session ID on two lines (the seller answered 404)', CALL, (s) => [s, s], 7],
    ['a tools/call with the session ID and another on two lines', CALL, (s) => [s, 'other'], 7],
    ['a tools/call with "sid, sid" on one line', CALL, (s) => `${s}, ${s}`, 7],
    ['a GET with the session ID on two lines: id null', undefined, (s) => [s, s], null],
  ];
  for (const [label, body, session, id] of refused) {
    test(`${label}: 400, the seller not contacted, one refused line`, async () => {
      const seen = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const r = await send(stack.gateway.agentUrl('s'), body, session(sid));
      assert.deepEqual({ status: r.status, text: r.text }, { status: 400, text: refusal(id) });
      assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
      const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
      assert.deepEqual(
        lines.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
        [{ reason: 'invalid_request', status: 400, agent: 's', http_method: body === undefined ? 'GET' : 'POST' }],
      );
    });
  }

  test('control: the session ID once is served', async () => {
    const r = await send(stack.gateway.agentUrl('s'), CALL, sid);
    assert.equal(r.status, 200);
    const [message] = sseMessages(r.text) as Array<{ id: number; result: { structuredContent: unknown } }>;
    assert.deepEqual([message!.id, message!.result.structuredContent], [7, { media_buy_id: 'mb_1', status: 'active' }]);
  });

  test('control: "sid,sid" on one line (a comma alone may be part of an ID) goes to the seller as written', async () => {
    const seen = stack.seller.requests.length;
    const r = await send(stack.gateway.agentUrl('s'), CALL, `${sid},${sid}`);
    assert.equal(stack.seller.requests.length, seen + 1);
    assert.equal(stack.seller.requests.at(-1)!.headers['mcp-session-id'], `${sid},${sid}`);
    assert.equal(r.status, 404);
  });
});
