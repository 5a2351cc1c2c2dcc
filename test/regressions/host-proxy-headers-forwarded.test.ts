/**
 * Regression (found fixing hostile trial 28, L3 a): the README says the host's `Proxy-*`
 * request headers are never forwarded (hop-by-hop: they are for the proxies between the host
 * and the gateway, which is the host's origin), but only `Proxy-Connection`,
 * `Proxy-Authorization` and `Proxy-Authenticate` were stripped, by name: a host's
 * `Proxy-Status`, `Proxy-Authentication-Info` or any other `Proxy-*` field reached every
 * seller. Now every `Proxy-*` name is stripped, by prefix (src/request/headers.ts
 * isStrippedRequestHeader), as every `Proxy-*` response header is.
 *
 * Input: a tools/call through agent `acme` carrying five `Proxy-*` fields in several cases
 * and one header of the host's own. Expected: the seller sees no `proxy-*` name; the host's
 * own header passes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';

describe("a host's Proxy-* request headers", () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [] }));
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('none reaches the seller; the host’s own header does', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(
      rawPost(stack.gateway.agentUrl('acme'), toolCall(7, 'echo'), {
        'mcp-protocol-version': '2025-06-18',
        'Proxy-Authorization': 'Basic Zm9vOmJhcg==',
        'Proxy-Status': 'host-proxy; error=connection_timeout',
        'Proxy-Authentication-Info': 'nextnonce="abc"',
        'PROXY-Foo': 'y',
        'proxy-connection': 'keep-alive',
        'X-Host-Trace': 't-1',
      }),
    );
    assert.equal(res.status, 200);
    const seen = stack.seller.requests.at(-1)!;
    assert.deepEqual(Object.keys(seen.headers).filter((name) => name.startsWith('proxy-')), []);
    assert.equal(seen.headers['x-host-trace'], 't-1');
  });
});
