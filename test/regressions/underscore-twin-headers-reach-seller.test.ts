/**
 * Regression (a review of the request side, L2): the underscore twins of the headers the
 * gateway owns or judges reached the seller. The gateway strips `Proxy_*` because CGI, WSGI,
 * PHP and Rack read `_` and `-` in a header name alike (`HTTP_PROXY_AUTHORIZATION`), and the
 * same holds for its other names: a GET with `Last_Event_ID: seller-evt-42` reached the seller
 * as a resume id, though an unverified resume id never reaches a seller (ARCHITECTURE §4),
 * and `Mcp_Session_Id: other` beside `Mcp-Session-Id: sid1` passed the repeated-session-id
 * refusal and reached the seller. Now a request header whose name holds `_` is judged as its
 * `-` spelling (request/headers.ts isStrippedRequestHeader): stripped when that one is, and
 * the twins of `Mcp-Session-Id` and `MCP-Protocol-Version`, which the gateway judges, are
 * stripped (the host's real header is the dash one, forwarded as before).
 *
 * Input: a raw seller recording each request's header lines as received (answering a POST
 * with a tool result, a GET 405); agent `a`; a raw host sending, with its own headers, the
 * twins `Mcp_Session_Id`, `Mcp_Protocol_Version`, `Last_Event_ID`, `X_Max_Response_Bytes`,
 * `Accept_Encoding`, `Keep_Alive`, `X_Adcp_Gateway_Exchange`, and `X_Trace_Id` (no header of
 * the gateway's): a POST `tools/call`, then a GET with `Content_Type` and `Content_Length`
 * too (a GET is forwarded without the headers of a body).
 * Expected: the exact header lines the seller got (its own `Host`, the gateway's `Via` entry
 * pseudonymised): none of the twins, `X_Trace_Id` kept.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { useHeaderLinesSeller } from '../helpers/seller-header-lines.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

/** The twins and the host's own underscore header, as the host writes them. */
const TWINS =
  'Mcp_Session_Id: other\r\nMcp_Protocol_Version: 2025-03-26\r\nLast_Event_ID: seller-evt-42\r\nX_Max_Response_Bytes: 5\r\n' +
  'Accept_Encoding: identity\r\nKeep_Alive: timeout=5\r\nX_Adcp_Gateway_Exchange: k\r\nX_Trace_Id: t-1\r\n';

describe('underscore twins of the gateway’s headers', { timeout: TEST_TIMEOUT_MS }, () => {
  const wire = useHeaderLinesSeller((url) => agentsYaml({ a: url }, ['log_level: silent']));

  test('a POST: none reaches the seller beside the real headers', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}';
    const head =
      `POST /agents/a/mcp HTTP/1.1\r\nHost: 127.0.0.1:${wire.port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: sid1\r\n${TWINS}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const answer = await writeAndRead(wire.port, head, [], 5_000);
    assert.match(answer.text, /^HTTP\/1\.1 200 /);
    assert.deepEqual(wire.lastSeen(), [
      `host: 127.0.0.1:${wire.sellerPort}`,
      'connection: keep-alive',
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      'mcp-protocol-version: 2025-06-18',
      'mcp-session-id: sid1',
      'x_trace_id: t-1',
      'accept-encoding: gzip, deflate, br',
      'via: 1.1 adcp-gw-<pseudonym>',
      'content-length: 83',
    ]);
  });

  test('a GET: no resume id, no body header, reaches the seller', async () => {
    const head =
      `GET /agents/a/mcp HTTP/1.1\r\nHost: 127.0.0.1:${wire.port}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: sid1\r\n` +
      `${TWINS}Content_Type: application/json\r\nContent_Length: 7\r\nConnection: close\r\n\r\n`;
    const answer = await writeAndRead(wire.port, head, [], 5_000);
    assert.match(answer.text, /^HTTP\/1\.1 405 /);
    assert.deepEqual(wire.lastSeen(), [
      `host: 127.0.0.1:${wire.sellerPort}`,
      'connection: keep-alive',
      'accept: text/event-stream',
      'mcp-protocol-version: 2025-06-18',
      'mcp-session-id: sid1',
      'x_trace_id: t-1',
      'accept-encoding: gzip, deflate',
      'via: 1.1 adcp-gw-<pseudonym>',
    ]);
  });
});
