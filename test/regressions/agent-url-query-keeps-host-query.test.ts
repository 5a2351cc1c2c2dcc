/**
 * Reported failure (a new user's trial, 2026-12-02): "the host's query string is dropped when
 * the agent URL has one". @fastify/reply-from forwards the host's query only to a target URL
 * without one, so an agent configured as `http://seller/mcp?key=...` never saw the host's
 * parameters. src/routing/query.ts merges them: the agent's first, then the host's whose
 * names the agent's URL does not set.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { mergeQuery } from '../../src/routing/query.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('mergeQuery', () => {
  for (const [agent, host, expected] of [
    ['?key=s3cret', '/agents/a/mcp', 'key=s3cret'],
    ['?key=s3cret', '/agents/a/mcp?', 'key=s3cret'],
    ['?key=s3cret', '/agents/a/mcp?trace=1', 'key=s3cret&trace=1'],
    ['?key=s3cret&x=1', '/agents/a/mcp?x=2&y=3&y=4', 'key=s3cret&x=1&y=3&y=4'],
    ['?key=s3cret', '/agents/a/mcp?key=mine', 'key=s3cret'],
    ['?key=a%20b', '/agents/a/mcp?q=c%26d', 'key=a%20b&q=c%26d'],
  ] as const) {
    test(`agent ${agent}, host ${host} -> ${expected}`, () => assert.equal(mergeQuery(agent, host), expected));
  }
});

describe('an agent URL with a query, through the gateway', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: Server;
  const seen: string[] = [];
  let gateway: RunningGateway;
  before(async () => {
    seller = createServer((req, res) => {
      seen.push(req.url ?? '');
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
      });
    });
    await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
    const { port } = seller.address() as AddressInfo;
    gateway = await startGateway(
      agentsYaml({ keyed: `"http://127.0.0.1:${port}/mcp?key=s3cret"`, plain: `http://127.0.0.1:${port}/mcp` }, ['log_level: silent']),
    );
  });
  after(async () => {
    await gateway?.close();
    seller?.closeAllConnections();
    await new Promise<void>((resolve) => seller.close(() => resolve()));
  });

  for (const [agent, hostQuery, expected] of [
    ['keyed', '?trace=on&key=forged', '/mcp?key=s3cret&trace=on'],
    ['keyed', '', '/mcp?key=s3cret'],
    ['plain', '?trace=on', '/mcp?trace=on'],
  ] as const) {
    test(`${agent} agent, host query ${JSON.stringify(hostQuery)}: the seller gets ${expected}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      seen.length = 0;
      const res = await withTimeout(rawPost(`${gateway.agentUrl(agent)}${hostQuery}`, toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-11-25' }));
      assert.equal(res.status, 200);
      assert.deepEqual(seen, [expected]);
    });
  }
});
