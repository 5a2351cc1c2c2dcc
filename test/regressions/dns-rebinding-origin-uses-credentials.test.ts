/**
 * Regression (a new user's trial, 2026-12-03): the gateway checked neither `Origin` nor
 * `Host`. A request with `Host: rebind.evil.example:8790` and `Origin:
 * http://rebind.evil.example:8790`, what a page sends once DNS rebinding has pointed its name
 * at the gateway, was forwarded to the seller with the agent's configured `Authorization`
 * added, and the page could read the answer: any web page a browser on the buyer's machine
 * opened could call the sellers as the buyer. MCP Streamable HTTP, Security Warning: servers
 * MUST validate the `Origin` header on all incoming connections, and answer an invalid one
 * 403.
 *
 * Input: a gateway (agent `acme` with `headers: { authorization: "Bearer s3cret" }`) before
 * a raw seller that records what it gets; POSTs of a tools/call (id 7) through node:http, so
 * that `Host` can be set.
 * Expected:
 * - rebinding (`Host` and `Origin` of the page's name), or any `Origin` but a loopback one
 *   (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port: accepted since the conformance
 *   suite's scenario, test/regressions/conformance-dns-rebinding-localhost-origin.test.ts)
 *   with the default config: 403, a JSON-RPC error for id null (the spec's "no id"), reason
 *   `origin_not_allowed`; the seller gets nothing; one `refused` log line;
 * - no `Origin` (a buyer agent, an SDK client): forwarded, credentials added, as before;
 * - an `Origin` listed in `allowed_origins`: forwarded; another one still refused.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const REBIND = 'rebind.evil.example:8790';

function seller(): Promise<RawSeller> {
  return startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'));
}

/** POSTs a tools/call for id 7 to `url` with `headers` (Host included when given); the status and parsed body. */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; body: { id?: unknown; error?: { data?: { reason?: string } }; result?: unknown } }> {
  const payload = JSON.stringify(toolCall(7, 'get_products'));
  return withTimeout(
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'content-length': String(Buffer.byteLength(payload)), ...headers },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as never }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    }),
  );
}

describe('DNS rebinding: a browser Origin never reaches a seller with the configured credentials', () => {
  const stack = useSellerAndGateway(seller, (s) => startObservedGateway(agentsYaml({ acme: { url: s.url, headers: '{ authorization: "Bearer s3cret" }' } })));

  test('a rebinding Host and Origin: 403 origin_not_allowed for id null, the seller not contacted', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    const res = await post(stack.gateway.agentUrl('acme'), { host: REBIND, origin: `http://${REBIND}` });
    assert.deepEqual({ status: res.status, id: res.body.id, reason: res.body.error?.data?.reason }, { status: 403, id: null, reason: 'origin_not_allowed' });
    assert.equal(stack.seller.requests.length, before, 'the seller got nothing');
    const line = await stack.gateway.waitForLine((l) => l.msg === 'refused' && l.reason === 'origin_not_allowed', 5000);
    assert.equal(line.status, 403);
  });

  test('any Origin but a loopback one is refused by default, even with the gateway\'s port', OPTIONS, async () => {
    const port = new URL(stack.gateway.baseUrl).port;
    for (const origin of [`http://gateway.example:${port}`, `http://localhost.evil.example:${port}`, 'null', `http://127.0.0.1:${port}/`]) {
      const res = await post(stack.gateway.agentUrl('acme'), { origin });
      assert.deepEqual({ status: res.status, reason: res.body.error?.data?.reason }, { status: 403, reason: 'origin_not_allowed' }, origin);
    }
  });

  // Since the conformance suite's dns-rebinding-protection scenario
  // (test/regressions/conformance-dns-rebinding-localhost-origin.test.ts): a loopback origin
  // cannot come from DNS rebinding, so it is served without being listed.
  test('a loopback Origin (the gateway\'s own address, localhost, [::1], http or https) is served', OPTIONS, async () => {
    for (const origin of [new URL(stack.gateway.baseUrl).origin, 'http://localhost:6274', 'https://[::1]:3000', 'http://127.0.0.1']) {
      const res = await post(stack.gateway.agentUrl('acme'), { origin });
      assert.deepEqual({ status: res.status, id: res.body.id }, { status: 200, id: 7 }, origin);
    }
  });

  test('no Origin (a buyer agent): forwarded with the credentials, as before', OPTIONS, async () => {
    const res = await post(stack.gateway.agentUrl('acme'), {});
    assert.deepEqual({ status: res.status, id: res.body.id }, { status: 200, id: 7 });
    assert.equal(stack.seller.requests.at(-1)!.headers.authorization, 'Bearer s3cret');
  });
});

describe('allowed_origins', () => {
  const stack = useSellerAndGateway(seller, (s) => startObservedGateway(agentsYaml({ acme: s.url }, ['allowed_origins: ["https://console.example.com"]'])));

  test('a listed Origin is served; another is refused', OPTIONS, async () => {
    const ok = await post(stack.gateway.agentUrl('acme'), { origin: 'https://console.example.com' });
    assert.deepEqual({ status: ok.status, id: ok.body.id }, { status: 200, id: 7 });
    const other = await post(stack.gateway.agentUrl('acme'), { origin: 'https://console.example.com.evil.example' });
    assert.deepEqual({ status: other.status, reason: other.body.error?.data?.reason }, { status: 403, reason: 'origin_not_allowed' });
  });
});
