/**
 * Regression (a hostile new user's trial 15, M1): the gateway appends `; Path=/agents/<name>/mcp`
 * to every seller `Set-Cookie`, so the head the host got could pass the 16 KiB its HTTP client
 * reads (Node's http parser, undici and fetch, the MCP SDK client's transport) although the
 * seller's did not. 650 cookies `cN=1` (12.9 KB from the seller) through agent `hdr`: the MCP
 * SDK client's callTool failed `fetch failed` (UND_ERR_HEADERS_OVERFLOW), node:http
 * HPE_HEADER_OVERFLOW; through a 64-character agent name 200 cookies (about 3.6 KB) were
 * enough; a seller head of about 16,300 bytes that node:http read directly failed through the
 * gateway (its own lines added). The exchange line said status 200, outcome `ok`.
 *
 * Now the host's head is bounded at 16,384 bytes (src/response/head-size.ts), counted as
 * written: the status line, the seller's lines as forwarded, and the 221-byte reserve for the
 * gateway's and Node's lines (docs/errors.md). Over it, before anything is written: HTTP 200,
 * SERVICE_UNAVAILABLE `upstream_headers_too_large` for the request's id (`limit_bytes` 16384,
 * `observed_bytes` that count), no seller header but a fitting `Mcp-Session-Id`, the exchange
 * line `local_error` with that reason. A session id too long to fit beside the error's own
 * lines is dropped too (else the error's head would be as unreadable).
 *
 * Input: a seller on 127.0.0.1 writing its answer head itself (no Date, no Node lines), a
 * tools/call's JSON or SSE answer with N cookies (by tool name), one 16,300-byte header, or a
 * 16,150-character session id with 10 cookies (each under undici's 16 KiB as the seller sent
 * it); hosts: node:http (16 KiB default) and the real MCP SDK client.
 * Controls: 10 cookies, JSON and SSE, pass unchanged (each with its Path), logged `ok`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { connectClient } from '../helpers/client.js';
import { openRawConnection } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { nodeHostPost } from '../helpers/node-host-post.js';

/** A 64-character agent name, the longest the config takes (as in the trial's cookie4.mjs). */
const LONG = `a${'b'.repeat(63)}`;
const LIMIT = 16_384;
/** The documented reserve for the lines the gateway and Node add after the seller's (docs/errors.md). */
const RESERVE = 221;
const STATUS_LINE = 'HTTP/1.1 200 OK\r\n'.length;
const JSON_TYPE_LINE = 'content-type: application/json\r\n'.length;
const SSE_TYPE_LINE = 'content-type: text/event-stream\r\n'.length;
const SESSION = 'sess-trial15';
const BIG_SESSION = 'S'.repeat(16_150);
const BIG_HEADER = 'v'.repeat(16_300);

const cookies = (n: number): string[] => Array.from({ length: n }, (_, i) => `c${i}=1`);
const scoped = (n: number, agent: string): string[] => cookies(n).map((c) => `${c}; Path=/agents/${agent}/mcp`);
/** Bytes of `set-cookie: <value>\r\n` lines. */
const cookieLines = (values: readonly string[]): number => values.reduce((sum, v) => sum + 'set-cookie: \r\n'.length + v.length, 0);
const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'fine' }] });

/**
 * The answer to a tools/call by tool name: header lines (name, value) beside Content-Type and
 * Content-Length, and whether the body is SSE.
 */
function answerFor(tool: string): { lines: [string, string][]; sse: boolean } | undefined {
  const m = /^(json|sse)_cookies_(\d+)$/.exec(tool);
  if (m) return { lines: [['mcp-session-id', SESSION], ...cookies(Number(m[2])).map((c): [string, string] => ['set-cookie', c])], sse: m[1] === 'sse' };
  if (tool === 'big_header') return { lines: [['x-big', BIG_HEADER]], sse: false };
  if (tool === 'big_session') return { lines: [['mcp-session-id', BIG_SESSION], ...cookies(10).map((c): [string, string] => ['set-cookie', c])], sse: false };
  return undefined;
}

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'cookies', version: '1.0.0' } };

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string } };
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'initialize') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: INIT_RESULT }));
      }
      const answer = answerFor(msg.params?.name ?? '');
      if (answer === undefined) return void res.writeHead(500).end();
      // The head written as is (no Date, Connection or Keep-Alive of Node's), then the connection closed.
      const body = answer.sse ? `event: message\ndata: ${result(msg.id)}\n\n` : result(msg.id);
      let head = `HTTP/1.1 200 OK\r\ncontent-type: ${answer.sse ? 'text/event-stream' : 'application/json'}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
      for (const [name, value] of answer.lines) head += `${name}: ${value}\r\n`;
      const socket = res.socket as Socket;
      socket.end(`${head}\r\n${body}`);
    }),
  (seller) => startObservedGateway(agentsYaml({ hdr: seller.url, [LONG]: seller.url })),
);

/** The `reason` a minted answer carries (asserted before the exact bytes, which the catalog builds). */
const reasonOf = (body: string): string | undefined => /"reason":"(\w+)"/.exec(body)?.[1];


describe('Set-Cookie Path rewrite taking the host head over 16 KiB', { timeout: TEST_TIMEOUT_MS }, () => {
  test('650 cookies on a JSON answer (12.9 KB from the seller): node:http host gets the error for its id, the session id kept', async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('hdr'), toolCall(1, 'json_cookies_650'));
    const observed = STATUS_LINE + JSON_TYPE_LINE + 'mcp-session-id: \r\n'.length + SESSION.length + cookieLines(scoped(650, 'hdr')) + RESERVE;
    assert.equal(observed, 27_490); // 650 × 22 bytes of `; Path=/agents/hdr/mcp` over the seller's 12.9 KB
    assert.equal(r.status, 200);
    assert.equal(reasonOf(r.body), 'upstream_headers_too_large');
    assert.equal(r.body, expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'json_cookies_650', reason: 'upstream_headers_too_large', limitBytes: LIMIT, observedBytes: observed }));
    assert.equal(r.headers['set-cookie'], undefined);
    assert.equal(r.headers['mcp-session-id'], SESSION);
    const line = await stack.gateway.exchangeLine('hdr', 1);
    assert.deepEqual([line.status, line.outcome, line.reason], [200, 'local_error', 'upstream_headers_too_large']);
  });

  test('650 cookies on an SSE answer: the error goes out before any SSE head, as JSON', async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('hdr'), toolCall(2, 'sse_cookies_650'));
    const observed = STATUS_LINE + SSE_TYPE_LINE + 'mcp-session-id: \r\n'.length + SESSION.length + cookieLines(scoped(650, 'hdr')) + RESERVE;
    assert.equal(r.status, 200);
    assert.equal(reasonOf(r.body), 'upstream_headers_too_large');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.body, expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'sse_cookies_650', reason: 'upstream_headers_too_large', limitBytes: LIMIT, observedBytes: observed }));
    const line = await stack.gateway.exchangeLine('hdr', 2);
    assert.deepEqual([line.status, line.outcome, line.reason], [200, 'local_error', 'upstream_headers_too_large']);
  });

  for (const [agent, n] of [
    ['hdr', 650],
    [LONG, 200],
  ] as const) {
    test(`MCP SDK client, agent of ${agent.length} characters, ${n} cookies: callTool gets the isError result, not "fetch failed"`, async () => {
      const client = await connectClient(stack.gateway.agentUrl(agent), { protocolVersion: '2025-06-18' });
      stack.closeAfter(client);
      const res = (await withTimeout(client.callTool({ name: `json_cookies_${n}`, arguments: {} }), undefined, 'callTool')) as CallToolResult;
      assert.equal(res.isError, true);
      const err = (res.structuredContent as { adcp_error: { code: string; recovery: string; details: Record<string, unknown> } }).adcp_error;
      const observed = STATUS_LINE + JSON_TYPE_LINE + 'mcp-session-id: \r\n'.length + SESSION.length + cookieLines(scoped(n, agent)) + RESERVE;
      assert.ok(observed > LIMIT, `${observed}`);
      assert.deepEqual([err.code, err.recovery, err.details], ['SERVICE_UNAVAILABLE', 'transient', { reason: 'upstream_headers_too_large', limit_bytes: LIMIT, observed_bytes: observed }]);
      await client.close();
    });
  }

  test('a seller head of 16,300 bytes node:http reads directly: through the gateway, the error (not HPE_HEADER_OVERFLOW)', async () => {
    const direct = await nodeHostPost(stack.seller.url, toolCall(3, 'big_header'));
    assert.equal(direct.status, 200);
    assert.equal(direct.headers['x-big'], BIG_HEADER);
    const r = await nodeHostPost(stack.gateway.agentUrl('hdr'), toolCall(4, 'big_header'));
    const observed = STATUS_LINE + JSON_TYPE_LINE + 'x-big: \r\n'.length + BIG_HEADER.length + RESERVE;
    assert.equal(r.status, 200);
    assert.equal(reasonOf(r.body), 'upstream_headers_too_large');
    assert.equal(r.body, expectedErrorJson({ id: 4, method: 'tools/call', toolName: 'big_header', reason: 'upstream_headers_too_large', limitBytes: LIMIT, observedBytes: observed }));
    assert.equal(r.headers['x-big'], undefined);
  });

  test("a 16,150-character session id and 10 cookies: the error's head drops the session id too (it would not fit beside the error's lines)", async () => {
    const r = await nodeHostPost(stack.gateway.agentUrl('hdr'), toolCall(5, 'big_session'));
    const observed = STATUS_LINE + JSON_TYPE_LINE + 'mcp-session-id: \r\n'.length + BIG_SESSION.length + cookieLines(scoped(10, 'hdr')) + RESERVE;
    assert.equal(r.status, 200);
    assert.equal(reasonOf(r.body), 'upstream_headers_too_large');
    assert.equal(r.body, expectedErrorJson({ id: 5, method: 'tools/call', toolName: 'big_session', reason: 'upstream_headers_too_large', limitBytes: LIMIT, observedBytes: observed }));
    assert.equal(r.headers['mcp-session-id'], undefined);
    assert.equal(r.headers['set-cookie'], undefined);
  });

  for (const kind of ['json', 'sse'] as const) {
    test(`control: 10 cookies on a ${kind} answer pass unchanged, each scoped to the route, logged ok`, async () => {
      const id = kind === 'json' ? 6 : 7;
      const r = await nodeHostPost(stack.gateway.agentUrl(LONG), toolCall(id, `${kind}_cookies_10`));
      assert.equal(r.status, 200);
      assert.deepEqual(r.headers['set-cookie'], scoped(10, LONG));
      assert.equal(r.headers['mcp-session-id'], SESSION);
      assert.equal(r.body, kind === 'json' ? result(id) : `event: message\ndata: ${result(id)}\n\n`);
      const line = await stack.gateway.exchangeLine(LONG, id);
      assert.deepEqual([line.status, line.outcome, line.reason], [200, 'ok', null]);
    });

    test(`the count never falls short of the head Node writes (${kind}, 10 cookies, keep-alive): at most 200 bytes over it`, async () => {
      const id = kind === 'json' ? 8 : 9;
      const counted = STATUS_LINE + (kind === 'json' ? JSON_TYPE_LINE : SSE_TYPE_LINE) + 'mcp-session-id: \r\n'.length + SESSION.length + cookieLines(scoped(10, LONG)) + RESERVE;
      const body = JSON.stringify(toolCall(id, `${kind}_cookies_10`));
      const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
      try {
        conn.socket.write(
          `POST /agents/${LONG}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
            `mcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        await withTimeout(conn.heads(1), undefined, 'the head');
        const written = conn.text().indexOf('\r\n\r\n') + 4;
        assert.ok(written <= counted && counted - written <= 200, `written ${written}, counted ${counted}`);
      } finally {
        conn.socket.destroy();
      }
    });
  }
});
