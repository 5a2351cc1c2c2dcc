/**
 * Regression: a request target whose path does not percent-decode got Fastify's own 400.
 *
 * Reported failure (a new user's trial, 2026-12-03, left from F3): `/agents/%zz/mcp` was
 * answered `400 Bad Request` with Fastify's body (`FST_ERR_BAD_URL`, the path echoed), for
 * any method, with no `refused` line and no count in `adcp_gateway_refusals_total`: the
 * router could not decode the path segment, and Fastify answered before any route. Now the
 * gateway refuses it as any other request (app.ts badUrlRefusal): on an MCP endpoint's path
 * 404 `unknown_agent` (no agent can have a name that does not decode, RFC 3986 §2.1), the
 * name echoed as written; on another path 404 `not_found`; each with its `refused` line and
 * count, the seller never contacted.
 *
 * Input: a gateway with agent `s`; POST tools/list (id 7) to `/agents/%zz/mcp`,
 * `/agents/ok%E0%A4%A/mcp` (a cut UTF-8 sequence) and GET `/other/%zz`.
 * Expectation: the exact answers below.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { refusedOnce as refusedOnceBy } from '../helpers/refusal-count.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const BODY = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(500).end()),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);


/** Sends a request with its target exactly as written (node:http does not re-encode a path). */
function send(method: string, path: string, body?: string): Promise<{ status: number; contentType: string | undefined; body: string }> {
  const url = new URL(stack.gateway.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, contentType: res.headers['content-type'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends the request (refusal-count.ts refusedOnce: its refused lines, counted once, the seller untouched). */
function refusedOnce(method: string, path: string, reason: string, body?: string) {
  return refusedOnceBy(stack, reason, () => send(method, path, body));
}

function unknownAgent(name: string): string {
  const message = `Unknown agent "${name}": the name is not valid percent-encoding (RFC 3986 §2.1).`;
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'unknown_agent', agent: name } } });
}

describe('a request target that does not percent-decode', () => {
  for (const name of ['%zz', 'ok%E0%A4%A']) {
    test(`POST /agents/${name}/mcp: 404 unknown_agent, the name as written, one refused line, counted (was Fastify's 400)`, OPTIONS, async () => {
      const { answer, refused } = await refusedOnce('POST', `/agents/${name}/mcp`, 'unknown_agent', BODY);
      assert.deepEqual(answer, { status: 404, contentType: 'application/json', body: unknownAgent(name) });
      assert.deepEqual(refused, [{ reason: 'unknown_agent', status: 404, agent: name, http_method: 'POST' }]);
    });
  }

  test('GET /other/%zz: 404 not_found (was Fastify\'s 400)', OPTIONS, async () => {
    const { answer, refused } = await refusedOnce('GET', '/other/%zz', 'not_found');
    const message = 'No route for GET /other/%zz: MCP endpoints are /agents/<agent>/mcp.';
    assert.deepEqual(answer, {
      status: 404,
      contentType: 'application/json',
      body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'not_found' } } }),
    });
    assert.deepEqual(refused, [{ reason: 'not_found', status: 404, agent: null, http_method: 'GET' }]);
  });
});
