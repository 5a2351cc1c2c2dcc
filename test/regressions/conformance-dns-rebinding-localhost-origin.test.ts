/**
 * Regression (the MCP conformance suite, @modelcontextprotocol/conformance 0.1.16, server
 * scenario `dns-rebinding-protection`, checks `DNSRebindingRejected` and
 * `LocalhostHostAccepted`): the gateway refused the suite's valid request, an `initialize`
 * POST with `Host: localhost:<port>` and `Origin: http://localhost:<port>`, with 403
 * `origin_not_allowed` unless `allowed_origins` listed that origin. A loopback origin cannot
 * come from DNS rebinding (the rebound page's origin carries the attacker's host name), so it
 * is now accepted by default: `http` or `https`, `localhost`, `127.0.0.1` or `[::1]`, any port
 * (src/request/browser-guard.ts `isLoopbackOrigin`).
 *
 * Input: the gateway (agent `conf`, `headers: { authorization: "Bearer s3cret" }`) before a
 * real MCP SDK 1.x seller; the scenario's two requests exactly as the suite sends them
 * (undici `request`, `Content-Type`, `Host`, `Origin`, `Accept`, the same `initialize` body).
 * Expected:
 * - `Host` and `Origin` `evil.example.com`: 4xx (403, JSON-RPC error for id null, reason
 *   `origin_not_allowed`), the seller not contacted;
 * - `Host: localhost:<port>`, `Origin: http://localhost:<port>` (and the same with
 *   `127.0.0.1:<port>`, the host of the URL the suite is given): 2xx, the seller's
 *   `initialize` result, the request forwarded with the configured credentials.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { request } from 'undici';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { sseMessages } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startSdk1Seller } from '../support/sdk1/seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };

/** The suite's request (dist/index.js, `dt(url, host)`): an initialize POST with `Host: host` and `Origin: http://host`. */
async function scenarioRequest(url: string, host: string): Promise<{ status: number; contentType: string | undefined; text: string }> {
  const res = await withTimeout(
    request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Host: host, Origin: `http://${host}`, Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'conformance-dns-rebinding-test', version: '1.0.0' } },
      }),
    }),
  );
  const text = await res.body.text();
  const type = res.headers['content-type'];
  return { status: res.statusCode, contentType: typeof type === 'string' ? type.split(';')[0] : undefined, text };
}

describe('conformance dns-rebinding-protection, through the gateway to an SDK seller', () => {
  const stack = useSellerAndGateway(startSdk1Seller, (seller) => startGateway(agentsYaml({ conf: { url: seller.url, headers: '{ authorization: "Bearer s3cret" }' } }, ['log_level: silent'])));

  test('DNSRebindingRejected: Host and Origin evil.example.com get 403 origin_not_allowed, the seller not contacted', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    const res = await scenarioRequest(stack.gateway.agentUrl('conf'), 'evil.example.com');
    assert.deepEqual(
      { status: res.status, body: JSON.parse(res.text) as unknown },
      {
        status: 403,
        body: {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: 'Origin "http://evil.example.com" is not allowed: the gateway serves buyer agents, not browsers (allowed_origins lists the browser origins it serves besides localhost).',
            data: { reason: 'origin_not_allowed' },
          },
        },
      },
    );
    assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
  });

  for (const name of ['localhost', '127.0.0.1']) {
    test(`LocalhostHostAccepted: Host ${name}:<port> and Origin http://${name}:<port> get the seller's initialize result`, OPTIONS, async () => {
      const host = `${name}:${new URL(stack.gateway.baseUrl).port}`;
      const before = stack.seller.requests.length;
      const res = await scenarioRequest(stack.gateway.agentUrl('conf'), host);
      assert.equal(res.status, 200, res.text);
      const messages = (res.contentType === 'text/event-stream' ? sseMessages(res.text) : [JSON.parse(res.text)]) as { id?: unknown; result?: { protocolVersion?: string } }[];
      const answer = messages.find((m) => m.id === 1);
      assert.equal(answer?.result?.protocolVersion, '2025-11-25');
      assert.equal(stack.seller.requests.length, before + 1);
      const seen = stack.seller.requests.at(-1)!;
      assert.deepEqual({ rpcMethod: seen.rpcMethod, authorization: seen.headers.authorization }, { rpcMethod: 'initialize', authorization: 'Bearer s3cret' });
    });
  }
});
