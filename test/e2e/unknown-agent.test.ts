/**
 * A request for an agent the config does not name is refused before any seller is contacted:
 * 404 with a JSON-RPC error body that echoes the request's id and names the agent.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

type RpcError = { jsonrpc: string; id: unknown; error: { code: number; message: string; data: { reason: string; agent: string } } };

describe('unknown agent', { timeout: TEST_TIMEOUT_MS }, () => {
  /** A stand-in seller that only counts requests: it must see none. */
  let upstream: Server;
  let upstreamHits = 0;
  let gateway: RunningGateway;

  before(async () => {
    upstream = createServer((_req, res) => {
      upstreamHits += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    gateway = await startGateway(['log_level: silent', 'agents:', '  real:', `    url: http://127.0.0.1:${port}/mcp`, ''].join('\n'));
  });
  after(async () => {
    await gateway?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  });

  for (const id of ['req-42', 17] as const) {
    test(`POST /agents/nope/mcp -> 404, JSON-RPC error, id ${JSON.stringify(id)} echoed`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const res = await withTimeout(rawPost(gateway.agentUrl('nope'), toolCall(id, 'list_products'), { 'mcp-protocol-version': '2025-06-18' }));
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('content-type')?.split(';')[0]?.trim(), 'application/json');
      const body = res.json() as RpcError;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, id);
      assert.equal(body.error.data.reason, 'unknown_agent');
      assert.equal(body.error.data.agent, 'nope');
      // JSON-RPC "Invalid Request": the request names a resource the gateway does not have.
      assert.equal(body.error.code, -32600);
      assert.ok(body.error.message.includes('"nope"'), `message names the agent: ${body.error.message}`);
      assert.equal(upstreamHits, 0);
    });
  }
});
