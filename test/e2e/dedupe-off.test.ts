/**
 * `dedupe_text: off`: a modern host gets results exactly as the seller sent them (no summary,
 * no lift), byte for byte.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller, type DemoSeller } from '../../examples/seller.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('dedupe_text: off', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller: DemoSeller;
  let gateway: RunningGateway;
  const clients: Client[] = [];

  before(async () => {
    seller = await startDemoSeller();
    gateway = await startGateway(demoGatewayYaml(seller, { defaults: { dedupe_text: 'off' } }));
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await gateway?.close();
    await seller?.close();
  });

  test('SDK client (latest revision): list_products and get_products_legacy untouched', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(seller.url);
    const viaGateway = await connectClient(gateway.agentUrl('demo'));
    clients.push(direct, viaGateway);
    for (const name of ['list_products', 'get_products_legacy']) {
      const want = (await withTimeout(direct.callTool({ name, arguments: {} }))) as CallToolResult;
      const got = (await withTimeout(viaGateway.callTool({ name, arguments: {} }))) as CallToolResult;
      assert.deepEqual(got, want);
    }
  });

  for (const tool of ['list_products', 'get_products_legacy'] as const) {
    test(`raw POST on 2025-11-25: ${tool} body is byte-identical to the direct call`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const headers = { 'mcp-protocol-version': '2025-11-25' };
      const direct = await withTimeout(rawPost(seller.url, toolCall('off-1', tool), headers));
      const viaGateway = await withTimeout(rawPost(gateway.agentUrl('demo'), toolCall('off-1', tool), headers));
      assert.equal(viaGateway.status, 200);
      assert.ok(viaGateway.body.equals(direct.body), `gateway ${viaGateway.bytes} B vs seller ${direct.bytes} B`);
    });
  }

  test('over SSE too: list_products untouched', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(seller.sseUrl);
    const viaGateway = await connectClient(gateway.agentUrl('demo-sse'));
    clients.push(direct, viaGateway);
    const want = (await withTimeout(direct.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    const got = (await withTimeout(viaGateway.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    assert.deepEqual(got, want);
    assert.deepEqual(JSON.parse((got.content[0] as { text: string }).text), got.structuredContent);
  });
});
