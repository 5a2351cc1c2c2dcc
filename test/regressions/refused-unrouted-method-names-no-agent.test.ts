/**
 * Regression (a new user's trial, 2026-12-03, F10): the `refused` log line of a `TRACE` or a
 * `PROPFIND` on `/agents/<name>/mcp` had `"agent":null`, while `PUT`, `PATCH` and `OPTIONS` on
 * the same path named the agent. Fastify routes only the methods it knows a route for
 * (`PUT`, `PATCH`, `OPTIONS`, `HEAD` have one that refuses them: src/app.ts); any other
 * method falls to the not-found handler, which answers 405 for an MCP endpoint but has no
 * route parameters, and the refusal line took the agent from those alone.
 *
 * Input: an observed gateway with agent `s` (its seller never called); raw HTTP/1.1
 * requests on one connection each: `PUT`, `PATCH`, `OPTIONS`, `TRACE`, `PROPFIND`,
 * `MKCOL` on `/agents/s/mcp` and `/agents/s/mcp?x=1`, and `TRACE` and `PUT` on
 * `/agents/nope/mcp` (no such agent) and on `/agents/a%20b/mcp`.
 * Expected: each gets exactly the 405 below (`Allow: POST, GET, DELETE`, a JSON-RPC error for
 * id null, reason `method_not_allowed`), and one `refused` line whose `agent` is the name the
 * path gives, as Fastify's route parameter gives it to a `PUT` (decoded, first 64
 * characters, configured or not): the same for every method.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { exchangeUntilClose } from '../helpers/http-wire.js';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(500).end()),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const REFUSAL = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Method not allowed: MCP endpoints accept POST, GET, DELETE.', data: { reason: 'method_not_allowed' } },
});
const EXPECTED =
  'HTTP/1.1 405 Method Not Allowed\r\nallow: POST, GET, DELETE\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\n' +
  `content-length: ${Buffer.byteLength(REFUSAL)}\r\nConnection: close\r\n\r\n${REFUSAL}`;

/** Sends `method target` with `Connection: close`; resolves with every byte the gateway wrote before closing. */
function send(method: string, target: string): Promise<string> {
  return exchangeUntilClose(stack.gateway.baseUrl, `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
}

describe('a refused method on /agents/<name>/mcp names the agent, whatever the method', { timeout: TEST_TIMEOUT_MS }, () => {
  const cases: [method: string, target: string, agent: string][] = [];
  for (const method of ['PUT', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL']) {
    cases.push([method, '/agents/s/mcp', 's'], [method, '/agents/s/mcp?x=1', 's']);
  }
  for (const method of ['PUT', 'TRACE']) cases.push([method, '/agents/nope/mcp', 'nope'], [method, '/agents/a%20b/mcp', 'a b']);

  for (const [method, target, agent] of cases) {
    test(`${method} ${target}: 405 method_not_allowed, refused line agent ${JSON.stringify(agent)}`, async () => {
      const seen = stack.seller.requests.length;
      const linesBefore = stack.gateway.lines.length;
      const answer = await withTimeout(send(method, target), undefined, `${method} answer`);
      assert.equal(answer.replace(/\r\ndate: [^\r]*/i, ''), EXPECTED);
      await stack.gateway.waitForLine((l) => l.msg === 'refused' && stack.gateway.lines.indexOf(l) >= linesBefore);
      assert.deepEqual(
        stack.gateway.lines
          .slice(linesBefore)
          .filter((l) => l.msg === 'refused')
          .map((l) => ({ agent: l.agent, http_method: l.http_method, status: l.status, reason: l.reason })),
        [{ agent, http_method: method, status: 405, reason: 'method_not_allowed' }],
      );
      assert.equal(stack.seller.requests.length, seen, 'the seller got nothing');
    });
  }
});
