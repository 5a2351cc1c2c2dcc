/**
 * Regression (a session's follow-up to hostile trial 43): MCP (Streamable HTTP, Session
 * Management) says a session ID "MUST only contain visible ASCII characters (ranging from 0x21
 * to 0x7E)", yet a host's `Mcp-Session-Id` that was empty, or held a space, a tab or a byte
 * over 0x7E (Latin-1 / obs-text, which Node's HTTP parser lets through: `café` as one byte
 * 0xE9, or as UTF-8's two) went to the seller as written. No server can have issued such an
 * ID; it is now refused 400 `invalid_request` for the request's id, as a repeated one is
 * (src/request/session-id-header.ts), before any seller is contacted, with a message naming
 * the rule, its section and the first offending byte (never the value: a session ID is
 * redacted in logs).
 *
 * Input: a raw host (Node's own HTTP client would not send some of these bytes as written)
 * writing each request on its own `Connection: close` connection, exact bytes read back.
 * Expectation: the exact answer (Date aside), the seller not contacted, one `refused` line.
 * Controls: an ID of every visible ASCII character goes as written; spaces around a value
 * are no part of it (RFC 9110 §5.5) and go trimmed, as before. The seller's side: a seller's
 * `Mcp-Session-Id` that breaks the rule reaches the host as the seller sent it (the gateway
 * does not rewrite the seller's words: README, Headers); the host that sends it back is
 * refused with the message that says a server that returned it breaks the rule.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { withoutDate } from '../helpers/draining.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_media_buy', arguments: {} } });
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'h', version: '1' } } });

/** The session ID the seller's next answers carry (undefined: none). */
let issued: string | undefined;

/** A raw request (latin1: one byte per character): `sessionLine` is the Mcp-Session-Id field line as written, or none. */
function request(method: 'POST' | 'GET' | 'DELETE', sessionLine: string | undefined, body = CALL): string {
  const lines = [`${method} /agents/s/mcp HTTP/1.1`, 'Host: 127.0.0.1', 'MCP-Protocol-Version: 2025-06-18', 'Connection: close'];
  if (method === 'POST') lines.push('Content-Type: application/json', 'Accept: application/json, text/event-stream', `Content-Length: ${Buffer.byteLength(body)}`);
  else lines.push('Accept: text/event-stream');
  if (sessionLine !== undefined) lines.push(sessionLine);
  return [...lines, '', method === 'POST' ? body : ''].join('\r\n');
}

/** The refusal, byte for byte (its Date line aside), for JSON-RPC id `id`, whose message ends with `detail`. */
function refusal(id: number | null, detail: string): string {
  const message = `Invalid Mcp-Session-Id header: a session ID must only contain visible ASCII characters, 0x21 to 0x7E (MCP, Streamable HTTP, Session Management), and this one ${detail}; send the session ID the server returned (a server that returned this one breaks that rule)`;
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message, data: { reason: 'invalid_request' } } });
  const head = ['HTTP/1.1 400 Bad Request', 'content-type: application/json', 'cache-control: no-store', 'x-content-type-options: nosniff', `content-length: ${body.length}`, 'Connection: close'];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** Writes `raw` on a new connection; resolves with all the gateway wrote back (latin1), once it closed the connection. */
async function exchange(gateway: ObservedGateway, raw: string): Promise<string> {
  const answer = await writeAndRead(Number(new URL(gateway.baseUrl).port), raw, [], 5_000);
  assert.ok(answer.closed, 'the gateway closed the connection');
  return answer.text;
}

describe('session-id-not-visible-ascii-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
    () =>
      startRawSeller((req, res) => {
        const id = req.method === 'POST' ? (JSON.parse(req.body.toString('utf8')) as { id: number }).id : null;
        res.writeHead(200, { 'content-type': 'application/json', ...(issued === undefined ? {} : { 'mcp-session-id': issued }) });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  /** Sends `raw`; asserts the exact refusal, no request at the seller, one `refused` line for `method`. */
  async function assertRefused(raw: string, method: string, id: number | null, detail: string): Promise<void> {
    const seen = stack.seller.requests.length;
    const linesBefore = stack.gateway.lines.length;
    const text = await exchange(stack.gateway, raw);
    assert.equal(withoutDate(text), refusal(id, detail));
    assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
    await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
    const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused' || l.msg === 'exchange');
    assert.deepEqual(
      lines.map((l) => ({ msg: l.msg, reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
      [{ msg: 'refused', reason: 'invalid_request', status: 400, agent: 's', http_method: method }],
    );
  }

  const refused: Array<[string, 'POST' | 'GET' | 'DELETE', string, number | null, string]> = [
    ['a tools/call with an empty Mcp-Session-Id', 'POST', 'Mcp-Session-Id:', 7, 'is empty'],
    ['a tools/call with only spaces (an empty value: RFC 9110 §5.5)', 'POST', 'Mcp-Session-Id:    ', 7, 'is empty'],
    ['a tools/call with a space inside', 'POST', 'Mcp-Session-Id: a b', 7, 'has byte 0x20 at position 2'],
    ['a tools/call with a tab inside', 'POST', 'Mcp-Session-Id: a\tb', 7, 'has byte 0x09 at position 2'],
    ['a tools/call with Latin-1 é (obs-text 0xE9)', 'POST', 'Mcp-Session-Id: caf\xe9', 7, 'has byte 0xE9 at position 4'],
    ['a tools/call with UTF-8 é (0xC3 0xA9)', 'POST', 'Mcp-Session-Id: caf\xc3\xa9', 7, 'has byte 0xC3 at position 4'],
    ['a GET with 0x80: id null', 'GET', 'Mcp-Session-Id: \x80abc', null, 'has byte 0x80 at position 1'],
    ['a DELETE with 0xFF: id null', 'DELETE', 'Mcp-Session-Id: abc\xff', null, 'has byte 0xFF at position 4'],
  ];
  for (const [label, method, line, id, detail] of refused) {
    test(`${label}: 400 invalid_request, not forwarded`, () => assertRefused(request(method, line), method, id, detail));
  }

  test('control: an ID of every visible ASCII character (0x21-0x7E) goes to the seller as written', async () => {
    let sid = '';
    for (let c = 0x21; c <= 0x7e; c++) sid += String.fromCharCode(c);
    const seen = stack.seller.requests.length;
    const text = await exchange(stack.gateway, request('POST', `Mcp-Session-Id: ${sid}`));
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(stack.seller.requests.length, seen + 1);
    assert.equal(stack.seller.requests.at(-1)!.headers['mcp-session-id'], sid);
  });

  test('control: spaces around the ID are no part of it (RFC 9110 §5.5): it goes trimmed', async () => {
    const text = await exchange(stack.gateway, request('POST', 'Mcp-Session-Id:   abc-123 \t '));
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(stack.seller.requests.at(-1)!.headers['mcp-session-id'], 'abc-123');
  });

  const sellerIds: Array<[string, string, string]> = [
    ['with a space', 'a b', 'has byte 0x20 at position 2'],
    ['Latin-1', 'caf\xe9', 'has byte 0xE9 at position 4'],
  ];
  for (const [label, sid, detail] of sellerIds) {
    test(`the seller's side: an ID ${label} reaches the host as sent; sent back, it is refused`, async () => {
      issued = sid;
      try {
        const text = await exchange(stack.gateway, request('POST', undefined, INIT));
        assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
        assert.ok(text.includes(`\r\nmcp-session-id: ${sid}\r\n`), `the seller's field line as sent: ${JSON.stringify(text.split('\r\n\r\n')[0])}`);
      } finally {
        issued = undefined;
      }
      await assertRefused(request('POST', `Mcp-Session-Id: ${sid}`), 'POST', 7, detail);
    });
  }

  test("the seller's side: an empty ID reaches the host as sent (the MCP SDK client keeps none: it sends no header)", async () => {
    issued = '';
    try {
      const text = await exchange(stack.gateway, request('POST', undefined, INIT));
      assert.ok(text.includes('\r\nmcp-session-id: \r\n'), JSON.stringify(text.split('\r\n\r\n')[0]));
    } finally {
      issued = undefined;
    }
  });
});
