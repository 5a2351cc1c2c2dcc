/**
 * Regression (a new user's trial, 2026-12-03, the gap left by `origin_not_allowed`): after
 * DNS rebinding, a page at `http://rebind.evil.example:8790` is same-origin with the gateway,
 * and a same-origin GET carries no `Origin` header. Such a GET, `Host: rebind.evil.example:8790`
 * and nothing else a browser would add, was forwarded to the seller with the agent's
 * configured `Authorization`. MCP Security Best Practices (local MCP server compromise, DNS
 * rebinding) and the TypeScript SDK's Host validation: a server on localhost accepts only
 * `localhost`, `127.0.0.1` and `[::1]` in `Host`.
 *
 * Input: a gateway (agent `acme`, `headers: { authorization: "Bearer s3cret" }`, default
 * `listen.host` 127.0.0.1) before a raw seller that records what it gets; requests through
 * node:http so that `Host` can be set.
 * Expected:
 * - the rebinding GET (and a POST with that `Host` and no `Origin`): 403, JSON-RPC error for
 *   id null, code -32600, reason `host_not_allowed`; the seller gets nothing; one `refused` line;
 * - `Host` `127.0.0.1:<port>`, `localhost:<port>`, `LOCALHOST`, `[::1]:<port>`: forwarded, credentials added;
 * - `allowed_hosts: [gw.internal, "gw.example:8787"]`: `gw.internal` with any port and
 *   `gw.example:8787` served; `gw.example:9999` and other names refused; a reload of the list applies at once;
 * - `listen.host: 0.0.0.0` (the test still binds 127.0.0.1): `Host` unchecked while
 *   `allowed_hosts` is empty; once it is not, only listed and loopback names are served.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { sendCallOrStream, type CallOrStreamAnswer } from '../helpers/call-or-stream.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const REBIND = 'rebind.evil.example:8790';
const REFUSED_MESSAGE = `Host "${REBIND}" is not allowed: the gateway serves localhost, 127.0.0.1 and [::1] (allowed_hosts lists other host names).`;

function seller(): Promise<RawSeller> {
  // A GET gets an SSE stream, as MCP has it (a JSON answer to a GET is upstream_not_mcp:
  // test/regressions/get-answered-with-json-response.test.ts).
  return startRawSeller((req, res) =>
    req.method === 'GET'
      ? void res.writeHead(200, { 'content-type': 'text/event-stream' }).end()
      : void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'),
  );
}

/** One request to `url` with `headers` (Host included when given): a POSTed tools/call for id 7, or a GET of the SSE stream. */
const send = (method: 'GET' | 'POST', url: string, headers: Record<string, string>): Promise<CallOrStreamAnswer> =>
  sendCallOrStream(method, url, { 'mcp-protocol-version': '2025-11-25', ...headers });

const refusedBody = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: REFUSED_MESSAGE, data: { reason: 'host_not_allowed' } } });

describe('DNS rebinding: a request whose Host is not loopback never reaches a seller (listen.host 127.0.0.1)', () => {
  const stack = useSellerAndGateway(seller, (s) => startObservedGateway(agentsYaml({ acme: { url: s.url, headers: '{ authorization: "Bearer s3cret" }' } })));

  test('the rebinding GET (no Origin): 403 host_not_allowed for id null, the seller not contacted, one refused line', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    const linesBefore = stack.gateway.lines.length;
    const res = await send('GET', stack.gateway.agentUrl('acme'), { host: REBIND });
    assert.deepEqual(res, { status: 403, text: refusedBody });
    assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
    await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.reason === 'host_not_allowed', 5000);
    const refused = stack.gateway.lines.slice(linesBefore).filter((l) => l.msg === 'refused');
    assert.deepEqual(
      refused.map((l) => ({ reason: l.reason, status: l.status, agent: l.agent, http_method: l.http_method })),
      [{ reason: 'host_not_allowed', status: 403, agent: 'acme', http_method: 'GET' }],
    );
  });

  test('a POST with that Host and no Origin: refused the same way', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    const res = await send('POST', stack.gateway.agentUrl('acme'), { host: REBIND });
    assert.deepEqual(res, { status: 403, text: refusedBody });
    assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
  });

  test('a Host that only starts with a loopback name, or has a bad port: refused', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    for (const host of ['localhost.evil.example', '127.0.0.1.nip.io:8787', 'localhost:http', '[::1]evil']) {
      const res = await send('POST', stack.gateway.agentUrl('acme'), { host });
      assert.equal(res.status, 403, host);
      assert.equal((JSON.parse(res.text) as { error: { data: { reason: string } } }).error.data.reason, 'host_not_allowed', host);
    }
    assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
  });

  test('loopback Host names: forwarded with the credentials', OPTIONS, async () => {
    const port = new URL(stack.gateway.baseUrl).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, '127.0.0.1']) {
      const res = await send('POST', stack.gateway.agentUrl('acme'), { host });
      assert.equal(res.status, 200, host);
      assert.equal(stack.seller.requests.at(-1)!.headers.authorization, 'Bearer s3cret', host);
    }
  });
});

describe('allowed_hosts (listen.host 127.0.0.1)', () => {
  const yaml = (url: string, hosts: string): string => agentsYaml({ acme: { url, headers: '{ authorization: "Bearer s3cret" }' } }, [`allowed_hosts: ${hosts}`]);
  const stack = useSellerAndGateway(seller, (s) => startObservedGateway(yaml(s.url, '[gw.internal, "gw.example:8787"]')));

  test('a listed name with any port, a listed name:port with that port only', OPTIONS, async () => {
    for (const [host, status] of [
      ['gw.internal', 200],
      ['gw.internal:8787', 200],
      ['GW.Internal:1', 200],
      ['gw.example:8787', 200],
      ['gw.example:9999', 403],
      ['gw.example', 403],
      ['x.gw.internal', 403],
      [REBIND, 403],
      ['localhost:1234', 200],
    ] as const) {
      const before = stack.seller.requests.length;
      const res = await send('GET', stack.gateway.agentUrl('acme'), { host });
      assert.equal(res.status, status, host);
      assert.equal(stack.seller.requests.length, before + (status === 200 ? 1 : 0), `${host}: the seller contacted only when served`);
    }
  });

  test('a reload of allowed_hosts applies to the next request', OPTIONS, async () => {
    const control = stack.gateway.app.gateway;
    const running = control.config;
    try {
      control.setConfig(parseConfig(yaml(stack.seller.url, '[rebind.evil.example]'), { env: {} }));
      assert.equal((await send('GET', stack.gateway.agentUrl('acme'), { host: REBIND })).status, 200);
      assert.equal((await send('GET', stack.gateway.agentUrl('acme'), { host: 'gw.internal' })).status, 403);
    } finally {
      control.setConfig(running);
    }
  });
});

describe('listen.host 0.0.0.0 (a container): Host unchecked unless allowed_hosts is set', () => {
  describe('allowed_hosts empty', () => {
    const stack = useSellerAndGateway(seller, (s) => startObservedGateway(agentsYaml({ acme: s.url }, ['listen: { host: 0.0.0.0 }'])));
    test('any Host is served', OPTIONS, async () => {
      for (const host of ['gateway:8787', REBIND, '10.1.2.3:8787']) {
        assert.equal((await send('GET', stack.gateway.agentUrl('acme'), { host })).status, 200, host);
      }
    });
  });

  describe('allowed_hosts: [gateway]', () => {
    const stack = useSellerAndGateway(seller, (s) => startObservedGateway(agentsYaml({ acme: s.url }, ['listen: { host: 0.0.0.0 }', 'allowed_hosts: [gateway]'])));
    test('the listed name and loopback names are served, any other refused', OPTIONS, async () => {
      for (const [host, status] of [
        ['gateway:8787', 200],
        ['127.0.0.1:8787', 200],
        [REBIND, 403],
        ['10.1.2.3:8787', 403],
      ] as const) {
        const before = stack.seller.requests.length;
        assert.equal((await send('GET', stack.gateway.agentUrl('acme'), { host })).status, status, host);
        assert.equal(stack.seller.requests.length, before + (status === 200 ? 1 : 0), host);
      }
    });
  });
});
