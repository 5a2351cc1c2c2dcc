/**
 * Regression: an agent name over 100 characters got Fastify's own 414, not the gateway's
 * `unknown_agent` refusal.
 *
 * Reported failure (a new user's trial, 2026-12-03, F3): `/agents/<101 characters>/mcp` was
 * answered `414 URI Too Long` with Fastify's body (`"error":"Bad Request"`,
 * `FST_ERR_MAX_PARAM_LENGTH`, the whole path echoed: 5 KB for a 5,000-character name), no
 * `refused` line and no count in `adcp_gateway_refusals_total`, while names of 65 to 100
 * characters got the documented 404 `unknown_agent`. The cut-off was Fastify's
 * `maxParamLength` (default 100). The router now carries a path segment as long as Node lets
 * a request head be (app.ts), so any name the route can carry is refused as an unknown
 * agent: 404, the JSON-RPC error for the request's id, the name echoed to its first 64
 * characters, one `refused` line, one count. A head over Node's bound is still the HTTP
 * server's 431 `request_header_too_large`. A path under `/agents/<long name>/` that is no MCP
 * endpoint (also a 414 before) is `not_found`, its path echoed to 64 characters.
 *
 * Input: a gateway with agent `s`; POST tools/list (id 7) to a 101-character name and to a
 * 16,000-character one; GET `/agents/<5,000 characters>/other`; POST to a 17,000-character name.
 * Expectation: the exact answers below, each with its `refused` line and count.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { refusedOnce as refusedOnceBy } from '../helpers/refusal-count.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const BODY = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}';
const SHOWN = `${'a'.repeat(64)}…`;

/** The gateway's unknown_agent answer for id 7 to any name whose first 64 characters are `a`. */
const UNKNOWN_AGENT = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  error: { code: -32600, message: `Unknown agent "${SHOWN}": no such agent in the gateway config.`, data: { reason: 'unknown_agent', agent: SHOWN } },
});

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(500).end()),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);


/** Sends `init` to `path` (refusal-count.ts refusedOnce: its refused lines, counted once, the seller untouched). */
async function refusedOnce(path: string, init: RequestInit, reason: string) {
  return refusedOnceBy(stack, reason, async () => {
    const res = await fetch(`${stack.gateway.baseUrl}${path}`, init);
    return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
  });
}

const POST: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY };

describe('an agent name over 100 characters', () => {
  for (const length of [101, 16_000]) {
    test(`${length} characters: 404 unknown_agent, the name echoed to 64 characters, one refused line, counted (was Fastify's 414)`, OPTIONS, async () => {
      const { answer, refused } = await refusedOnce(`/agents/${'a'.repeat(length)}/mcp`, POST, 'unknown_agent');
      assert.deepEqual(answer, { status: 404, contentType: 'application/json', body: UNKNOWN_AGENT });
      assert.deepEqual(refused, [{ reason: 'unknown_agent', status: 404, agent: 'a'.repeat(64), http_method: 'POST' }]);
    });
  }

  test('a path under /agents/<5,000 characters>/ that is no MCP endpoint: 404 not_found, the path echoed to 64 characters (was Fastify\'s 414)', OPTIONS, async () => {
    const { answer, refused } = await refusedOnce(`/agents/${'a'.repeat(5_000)}/other`, { method: 'GET' }, 'not_found');
    const message = `No route for GET /agents/${'a'.repeat(56)}…: MCP endpoints are /agents/<agent>/mcp.`;
    assert.deepEqual(answer, {
      status: 404,
      contentType: 'application/json',
      body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason: 'not_found' } } }),
    });
    assert.deepEqual(refused, [{ reason: 'not_found', status: 404, agent: null, http_method: 'GET' }]);
  });

  test("a name past Node's head bound: 431 request_header_too_large, as before", OPTIONS, async () => {
    const { answer, refused } = await refusedOnce(`/agents/${'a'.repeat(17_000)}/mcp`, POST, 'request_header_too_large');
    assert.equal(answer.status, 431);
    assert.equal((JSON.parse(answer.body) as { error: { data: { reason: string } } }).error.data.reason, 'request_header_too_large');
    assert.deepEqual(refused, [{ reason: 'request_header_too_large', status: 431, agent: null, http_method: null }]);
  });
});
