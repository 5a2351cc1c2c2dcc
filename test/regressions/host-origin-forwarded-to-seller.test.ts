/**
 * Regression (a new user's trial, 2026-12-03, finding 2): the gateway serves a page on a
 * loopback origin (a local tool such as the MCP Inspector at http://localhost:6274), then
 * forwarded its `Origin` and `Referer` to the seller. An MCP SDK seller that validates
 * `Origin` (MCP Streamable HTTP requires servers to) refused `initialize` with 403 "Invalid
 * Origin header: http://localhost:6274", and every seller learned the buyer's local page.
 * The gateway checks `Origin` itself and is the server the page talks to: neither header is
 * forwarded now (src/request/headers.ts), unless the agent's config sets one.
 *
 * Input: a raw seller recording what it receives, behind agent `acme` and behind agent
 * `pinned` whose config sets `origin: https://buyer.example`; a POST carrying
 * `Origin: http://localhost:6274` and `Referer: http://localhost:6274/#/tools`.
 * Expected: 200 through both; `acme`'s seller got no `origin` and no `referer`; `pinned`'s got
 * the configured origin and no referer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

describe("a host page's Origin and Referer are not forwarded to the seller", () => {
  const stack = useSellerAndGateway(
    () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}')),
    (seller) =>
      startGateway(agentsYaml({ acme: seller.url, pinned: { url: seller.url, headers: '{origin: "https://buyer.example"}' } }, ['log_level: silent'])),
  );

  for (const [agent, expectedOrigin] of [
    ['acme', undefined],
    ['pinned', 'https://buyer.example'],
  ] as const) {
    test(`${agent}: origin ${expectedOrigin ?? 'none'}, no referer`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const before = stack.seller.requests.length;
      const res = await withTimeout(
        fetch(stack.gateway.agentUrl(agent), {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            origin: 'http://localhost:6274',
            referer: 'http://localhost:6274/#/tools',
          },
          body: JSON.stringify(toolCall(7, 'get_products')),
        }),
      );
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const seen = stack.seller.requests.slice(before);
      assert.equal(seen.length, 1);
      assert.deepEqual([seen[0]!.headers.origin, seen[0]!.headers.referer], [expectedOrigin, undefined]);
    });
  }
});
