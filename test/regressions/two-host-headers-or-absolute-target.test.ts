/**
 * Regression (a new user's trial, 2026-12-03, findings 4 and 5): the `Host` check
 * (request/browser-guard.ts) read only what Node keeps of a request's host.
 * - Two `Host` fields, `localhost` then `evil.example`: Node keeps the first, the check
 *   passed, and the request went to the seller with the agent's credentials (the reverse order
 *   got 403). RFC 9112 §3.2: a request with more than one Host field is a 400.
 * - An absolute-form target, `POST http://evil.example/agents/acme/mcp` with `Host: localhost`:
 *   served. RFC 9112 §3.2.2: the target's authority is the request's host then.
 * - `listen.host: 127.0.0.2` (loopback, so `Host` is checked): `Host: 127.0.0.2:<port>`, what
 *   its own clients send, was refused (the test binds 127.0.0.1 only; the listen address's
 *   own name is checked in the unit test, test/unit/browser-guard.test.ts).
 *
 * Input: a gateway on 127.0.0.1 before a raw seller that records what it gets; HTTP/1.1
 * requests written on a raw socket (`Connection: close`), so that fields can repeat.
 * Expected: two Host fields (either order, even the same value twice) -> 400 `malformed_http`
 * for id null; the absolute form naming evil.example -> 403 `host_not_allowed` naming it; the
 * absolute form naming the gateway's own loopback address -> 200; the seller contacted only
 * for the last.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';

const OPTIONS = { timeout: TEST_TIMEOUT_MS };
const BODY = JSON.stringify(toolCall(7, 'get_products'));

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}')),
  (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
);

/** Writes one request (request line `target`, then `hostLines`, then the usual fields) and reads the answer to its end. */
function raw(target: string, hostLines: readonly string[]): Promise<{ status: number; body: string }> {
  const { port } = new URL(stack.gateway.agentUrl('acme'));
  const head = [
    `POST ${target} HTTP/1.1`,
    ...hostLines.map((h) => `Host: ${h}`),
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(BODY)}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return withTimeout(
    new Promise((resolve, reject) => {
      // write, not end: a half-closed request is one whose host left (the gateway answers none).
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head + BODY));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
    }),
  );
}

function error(body: string): { id: unknown; code: unknown; reason: unknown; message: unknown } {
  const m = JSON.parse(body) as { id: unknown; error: { code: unknown; message: unknown; data: { reason: unknown } } };
  return { id: m.id, code: m.error.code, reason: m.error.data.reason, message: m.error.message };
}

describe('Host: one field, and the absolute form names the host', () => {
  for (const hosts of [
    ['localhost', 'evil.example'],
    ['evil.example', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
  ]) {
    test(`two Host fields ${hosts.join(', ')}: 400 malformed_http, the seller not contacted`, OPTIONS, async () => {
      const before = stack.seller.requests.length;
      const res = await raw('/agents/acme/mcp', hosts);
      assert.equal(res.status, 400);
      assert.deepEqual(error(res.body), {
        id: null,
        code: -32600,
        reason: 'malformed_http',
        message: 'Bad request: a request must carry one Host header, not several (RFC 9112 §3.2).',
      });
      assert.equal(stack.seller.requests.length, before);
    });
  }

  test('absolute form naming evil.example with Host localhost: 403 host_not_allowed naming evil.example', OPTIONS, async () => {
    const before = stack.seller.requests.length;
    const res = await raw('http://evil.example/agents/acme/mcp', ['localhost']);
    assert.equal(res.status, 403);
    assert.deepEqual(error(res.body), {
      id: null,
      code: -32600,
      reason: 'host_not_allowed',
      message: 'Host "evil.example" is not allowed: the gateway serves localhost, 127.0.0.1 and [::1] (allowed_hosts lists other host names).',
    });
    assert.equal(stack.seller.requests.length, before);
  });

  test("absolute form naming the gateway's loopback address: served", OPTIONS, async () => {
    const { host } = new URL(stack.gateway.agentUrl('acme'));
    const before = stack.seller.requests.length;
    const res = await raw(`http://${host}/agents/acme/mcp`, ['localhost']);
    assert.equal(res.status, 200, res.body);
    assert.equal(stack.seller.requests.length, before + 1);
  });
});
