/**
 * Regression: a request with two `MCP-Protocol-Version` header fields was served as a
 * 2025-03-26 host's.
 *
 * Reported failure (a new user's trial, 2026-12-03): `MCP-Protocol-Version: 2025-06-18` sent
 * twice reached the gateway as Node's join of the two, `"2025-06-18, 2025-06-18"`, which is no
 * revision date, so the host counted as older than every revision: a batch was forwarded
 * instead of refused (MCP 2025-06-18 has no batches), and a tool result's duplicated text was
 * not deduped. Two `Host` fields (400 `malformed_http`) and two `X-Max-Response-Bytes` fields
 * (400 `invalid_request`, for the request's id) were already refused; two
 * `MCP-Protocol-Version` fields now are too, as `X-Max-Response-Bytes` duplicates are: 400
 * `invalid_request` for the request's id (null where the body has none: a batch, a GET),
 * before any seller is contacted.
 *
 * Input: a raw seller; requests through node:http, whose array header values go out as one
 * field line each: a tools/call (id 7), a batch and a GET, each with two
 * `MCP-Protocol-Version: 2025-06-18` fields; two fields with differing values; one field whose
 * value holds a comma.
 * Expectation: 400, the JSON-RPC error (-32600, `invalid_request`) for id 7 (null for the
 * batch and the GET) byte for byte, one `refused` line, the seller not contacted. Controls:
 * one `2025-06-18` field is forwarded; one `draft` field (no revision date: src/mcp/revision.ts
 * leaves it to the seller) is forwarded as written.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const CALL = JSON.stringify(toolCall(7, 'get_products'));
const BATCH = `[${CALL},{"jsonrpc":"2.0","method":"notifications/initialized"}]`;
const RESULT = '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}';
const MESSAGE = 'Invalid MCP-Protocol-Version header: MCP-Protocol-Version must be sent at most once, with one revision (e.g. 2025-06-18)';

const refusal = (id: number | null): string =>
  JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: MESSAGE, data: { reason: 'invalid_request' } } });

interface Answer {
  status: number;
  text: string;
}

/** A POST of `body` (or a GET when undefined) with `version` as the MCP-Protocol-Version field(s): an array is one field line per element. */
function send(url: string, body: string | undefined, version: string | string[]): Promise<Answer> {
  const headers: http.OutgoingHttpHeaders =
    body === undefined
      ? { accept: 'text/event-stream' }
      : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body) };
  headers['mcp-protocol-version'] = version;
  return withTimeout(
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end(body);
    }),
  );
}

describe('two MCP-Protocol-Version fields are refused 400 invalid_request', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        if (req.method === 'GET') return void res.writeHead(405, { allow: 'POST' }).end();
        const body = req.body.toString('utf8');
        res.writeHead(200, { 'content-type': 'application/json' }).end(body.startsWith('[') ? `[${RESULT}]` : RESULT);
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  const refused: Array<[string, string | undefined, string | string[], number | null]> = [
    ['a tools/call with 2025-06-18 twice: for its id', CALL, ['2025-06-18', '2025-06-18'], 7],
    ['a batch with 2025-06-18 twice (it was forwarded): id null', BATCH, ['2025-06-18', '2025-06-18'], null],
    ['a GET with 2025-06-18 twice: id null', undefined, ['2025-06-18', '2025-06-18'], null],
    ['a tools/call with 2025-06-18 and 2025-11-25', CALL, ['2025-06-18', '2025-11-25'], 7],
    ['a tools/call with one field holding a comma', CALL, '2025-06-18,2025-06-18', 7],
  ];
  for (const [label, body, version, id] of refused) {
    test(`${label}: 400, the seller not contacted, one refused line`, async () => {
      const seen = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const r = await send(stack.gateway.agentUrl('s'), body, version);
      assert.deepEqual(r, { status: 400, text: refusal(id) });
      assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.reason === 'invalid_request' && stack.gateway.lines.indexOf(l) >= linesBefore);
      const lines = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
      assert.deepEqual(
        lines.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
        [{ reason: 'invalid_request', status: 400, agent: 's', http_method: body === undefined ? 'GET' : 'POST' }],
      );
    });
  }

  for (const version of ['2025-06-18', 'draft']) {
    test(`control: one ${version} field is forwarded as written`, async () => {
      const seen = stack.seller.requests.length;
      const r = await send(stack.gateway.agentUrl('s'), CALL, version);
      assert.deepEqual(r, { status: 200, text: RESULT });
      assert.equal(stack.seller.requests.length, seen + 1);
      assert.equal(stack.seller.requests.at(-1)!.headers['mcp-protocol-version'], version);
    });
  }
});
