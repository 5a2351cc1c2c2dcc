/**
 * Regression (review 36, F3, Low): on MCP 2026-07-28 the `Mcp-Method` and `Mcp-Name` request
 * headers were forwarded without being compared with the body. The gateway resolves a call's
 * limits (and its backoff kind and log line) from the body's `params.name`, so a host sending
 * `Mcp-Name: big_tool` with a body naming `small_tool` got small_tool's limits while a seller
 * front end routing on the header ran big_tool. MCP 2026-07-28, Streamable HTTP, "Server
 * Validation": servers that process the body MUST reject a request whose headers do not match
 * it (HTTP 400). Now such a request is refused 400 `invalid_request` for its id (its exact
 * bytes), the seller not contacted (src/request/mirrored-headers.ts).
 *
 * Input: a raw seller; a gateway whose agent sets `small_tool`'s `max_response_bytes: 100`;
 * POSTs through node:http with `MCP-Protocol-Version: 2026-07-28`: `Mcp-Name: big_tool` (and
 * its `=?base64?…?=` form) over a body naming small_tool, id `7.0`; `Mcp-Method: tools/list`
 * over a tools/call; an `Mcp-Name` sentinel that is no Base64; two `Mcp-Name` field lines.
 * Expected: 400 and exactly the JSON-RPC error below; the seller gets nothing; one `refused`
 * line. Controls: matching headers (plain and Base64) are forwarded as sent; the same
 * mismatch from a 2025-11-25 host (no such headers in its revision) is forwarded unchanged.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const MODERN = '2026-07-28';
const META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}';
const CALL = `{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"small_tool","arguments":{},${META}}}`;
const RESULT = '{"jsonrpc":"2.0","id":7.0,"result":{"content":[{"type":"text","text":"ok"}]}}';
const WHY = '(MCP 2026-07-28: Mcp-Method and Mcp-Name mirror the request body, and a server refuses a request where they differ)';
const b64 = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/** The refusal's bytes: the id as the host wrote it (`7.0`). */
const refusal = (message: string): string =>
  `{"jsonrpc":"2.0","id":7.0,"error":${JSON.stringify({ code: -32600, message, data: { reason: 'invalid_request' } })}}`;

/** POSTs CALL with `headers` (an array value: one field line each). */
function post(url: string, headers: http.OutgoingHttpHeaders): Promise<{ status: number; text: string }> {
  const all: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(CALL),
    ...headers,
  };
  return withTimeout(
    new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: all, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end(CALL);
    }),
  );
}

describe('mcp-name-header-differs-from-body-forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(RESULT)),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url }).concat('    tools:\n      small_tool:\n        max_response_bytes: 100\n')),
  );

  const refused: Array<[string, http.OutgoingHttpHeaders, string]> = [
    [
      "Mcp-Name: big_tool over small_tool's body (the review's case)",
      { 'mcp-method': 'tools/call', 'mcp-name': 'big_tool' },
      `Invalid Mcp-Name header: it names tool "big_tool", but the body's params.name is "small_tool" ${WHY}.`,
    ],
    [
      'Mcp-Name: big_tool in its Base64 form',
      { 'mcp-method': 'tools/call', 'mcp-name': b64('big_tool') },
      `Invalid Mcp-Name header: it names tool "big_tool", but the body's params.name is "small_tool" ${WHY}.`,
    ],
    ['Mcp-Name without Mcp-Method', { 'mcp-name': 'big_tool' }, `Invalid Mcp-Name header: it names tool "big_tool", but the body's params.name is "small_tool" ${WHY}.`],
    ['Mcp-Method: tools/list over a tools/call', { 'mcp-method': 'tools/list', 'mcp-name': 'small_tool' }, `Invalid Mcp-Method header: it names method "tools/list", but the body's method is "tools/call" ${WHY}.`],
    ['an Mcp-Name sentinel that is no Base64', { 'mcp-method': 'tools/call', 'mcp-name': '=?base64?not base64?=' }, `Invalid Mcp-Name header: its =?base64?...?= value is not canonical Base64 of UTF-8 text ${WHY}.`],
    [
      'Mcp-Name as two field lines (Node joins them)',
      { 'mcp-method': 'tools/call', 'mcp-name': ['small_tool', 'big_tool'] },
      `Invalid Mcp-Name header: it names tool "small_tool, big_tool", but the body's params.name is "small_tool" ${WHY}.`,
    ],
  ];
  for (const [label, headers, message] of refused) {
    test(`${label}: 400 invalid_request for id 7.0, the seller not contacted (was: forwarded)`, async () => {
      const seen = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const r = await post(stack.gateway.agentUrl('s'), { 'mcp-protocol-version': MODERN, ...headers });
      assert.deepEqual(r, { status: 400, text: refusal(message) });
      assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
      const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
      assert.deepEqual(
        lines.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent })),
        [{ reason: 'invalid_request', status: 400, agent: 's' }],
      );
    });
  }

  const forwarded: Array<[string, http.OutgoingHttpHeaders]> = [
    ['matching headers', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'small_tool' }],
    ['matching headers, Mcp-Name in its Base64 form', { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': b64('small_tool') }],
    ['the mismatch from a 2025-11-25 host (its revision has no such headers)', { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'big_tool' }],
  ];
  for (const [label, headers] of forwarded) {
    test(`control: ${label}: forwarded as sent`, async () => {
      const seen = stack.seller.requests.length;
      const r = await post(stack.gateway.agentUrl('s'), headers);
      assert.deepEqual(r, { status: 200, text: RESULT });
      assert.equal(stack.seller.requests.length, seen + 1);
      const got = stack.seller.requests.at(-1)!.headers;
      assert.deepEqual([got['mcp-method'], got['mcp-name']], [headers['mcp-method'], headers['mcp-name']]);
    });
  }
});
