/**
 * Regression (a new user's trial, 2026-12-03, finding 11): a seller's `Set-Cookie` reached
 * the host unchanged. The gateway is one origin for every seller, so a host that keeps
 * cookies (Python's httpx and aiohttp clients by default, a browser) stored
 * `sess=…; Path=/` for the whole gateway and sent it with its requests to every other agent,
 * which the gateway forwarded to those sellers: one seller's session cookie reached the
 * others. Now each cookie is scoped to its agent's route, `Path=/agents/<name>/mcp`, and a
 * `Domain` is dropped (src/response/headers.ts scopeSetCookies).
 *
 * A later trial (finding 3): a seller's `sid=A1; Secure` was kept `Secure`; the host reaches
 * the gateway over plain HTTP, and Python's cookie jar (requests, httpx) never sent it back:
 * the sticky session the README promised broke. `Secure` is dropped now (kept only where a
 * browser requires it: `__Secure-`, `__Host-`, `SameSite=None`; test/unit/scope-set-cookie.test.ts).
 *
 * Input: a raw seller answering a tools/call (JSON, and an SSE stream) with three cookies,
 * one with `Path=/` and `Domain`, one with no attributes, one `Secure`, through agent `acme`.
 * Expected: the host gets exactly those cookies with `Path=/agents/acme/mcp` right after the
 * pair (hostile trial 30, H1: each cookie is rebuilt, src/response/set-cookie.ts), the `Domain`
 * and `Secure` gone, `HttpOnly` and `SameSite` kept; other headers pass unchanged.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const COOKIES = ['sess=a-secret; Path=/; Domain=seller-a.example; HttpOnly; SameSite=Lax', 'lb=node-3', 'sid=A1; Secure'];
const SCOPED = ['sess=a-secret; Path=/agents/acme/mcp; HttpOnly; SameSite=Lax', 'lb=node-3; Path=/agents/acme/mcp', 'sid=A1; Path=/agents/acme/mcp'];

describe("a seller's cookies are scoped to its agent's route", () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const sse = (JSON.parse(req.body.toString('utf8')) as { params: { name: string } }).params.name === 'sse';
        res.writeHead(200, [
          ['content-type', sse ? 'text/event-stream' : 'application/json'],
          ['x-seller-trace', 't-1'],
          ...COOKIES.map((c) => ['set-cookie', c]),
        ].flat());
        const message = '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}';
        res.end(sse ? `id: e1\ndata: ${message}\n\n` : message);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  for (const tool of ['json', 'sse']) {
    test(`${tool}: Set-Cookie gets Path=/agents/acme/mcp, no Domain`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 200);
      assert.deepEqual(res.headers.getSetCookie(), SCOPED);
      assert.equal(res.headers.get('x-seller-trace'), 't-1');
    });
  }
});
