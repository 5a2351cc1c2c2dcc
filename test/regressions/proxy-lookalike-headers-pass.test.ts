/**
 * Regression (hostile trial 30, L3): header names that only look like `Proxy-*` passed both
 * ways. The gateway strips every `Proxy-*` name (the proxy hop's), by prefix, but not `Proxy`
 * or `Proxy_*`, which CGI and WSGI read as the same variables: `Proxy: p` becomes
 * `HTTP_PROXY`, which many HTTP clients take as their proxy (httpoxy, CVE-2016-5385), and
 * `Proxy_Authorization` becomes `HTTP_PROXY_AUTHORIZATION`, as the stripped
 * `Proxy-Authorization` does. A host's `Proxy: p` and `Proxy_Foo: u` reached the seller; a
 * seller's `Proxy: c` and `Proxy_Foo: d` reached the host. Now the name `proxy` and every name
 * starting `proxy_` are stripped too, both ways (src/request/proxy-name.ts isProxyFamilyName).
 *
 * Input: a tools/call through agent `acme` with those headers (several cases) and one of the
 * host's own; a raw seller answering (JSON, SSE) with the lookalikes and one of its own.
 * Expected: no such name on either side; names merely starting `proxy` (`Proxyish`,
 * `Proxy2`) and the own headers pass.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startHeaderLinesSeller } from '../support/raw-seller.js';

/** `proxy`, or a name starting `proxy-` or `proxy_` (lowercase). */
const isProxyFamily = (name: string): boolean => /^proxy(?:$|[-_])/.test(name);

describe('headers that only look like Proxy-*', () => {
  const stack = useSellerAndGateway(
    () => startHeaderLinesSeller(['X-Seller-Trace: t-1', 'Proxy: c', 'Proxy_Foo: d', 'PROXY_Authenticate: Basic', 'Proxyish: e', 'Proxy2: f']),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('host -> seller: none reaches the seller; the host’s own headers do', { timeout: TEST_TIMEOUT_MS }, async () => {
    const res = await withTimeout(
      rawPost(stack.gateway.agentUrl('acme'), toolCall(7, 'echo'), {
        'mcp-protocol-version': '2025-06-18',
        Proxy: 'p',
        Proxy_Foo: 'u',
        PROXY_Authorization: 'Basic Zm9vOmJhcg==',
        proxy_: 'v',
        Proxyish: 'w',
        'X-Host-Trace': 't-1',
      }),
    );
    assert.equal(res.status, 200);
    const seen = stack.seller.requests.at(-1)!.headers;
    assert.deepEqual(Object.keys(seen).filter(isProxyFamily), []);
    assert.deepEqual([seen.proxyish, seen['x-host-trace']], ['w', 't-1']);
  });

  for (const tool of ['json', 'sse']) {
    test(`seller -> host, ${tool}: none reaches the host; the seller’s own headers do`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('acme'), toolCall(7, tool), { 'mcp-protocol-version': '2025-06-18' }));
      assert.equal(res.status, 200);
      assert.deepEqual([...res.headers.keys()].filter(isProxyFamily), []);
      assert.deepEqual([res.headers.get('proxyish'), res.headers.get('proxy2'), res.headers.get('x-seller-trace')], ['e', 'f', 't-1']);
    });
  }
});
