/**
 * `dedupe_text: off`: a modern host gets results exactly as the seller sent them (no summary,
 * no lift), byte for byte.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('dedupe_text: off', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller, { defaults: { dedupe_text: 'off' } })));

  test('SDK client (latest revision): list_products and get_products_legacy untouched', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(stack.seller.url);
    const viaGateway = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(direct, viaGateway);
    for (const name of ['list_products', 'get_products_legacy']) {
      const want = (await withTimeout(direct.callTool({ name, arguments: {} }))) as CallToolResult;
      const got = (await withTimeout(viaGateway.callTool({ name, arguments: {} }))) as CallToolResult;
      assert.deepEqual(got, want);
    }
  });

  for (const tool of ['list_products', 'get_products_legacy'] as const) {
    test(`raw POST on 2025-11-25: ${tool} body is byte-identical to the direct call`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const headers = { 'mcp-protocol-version': '2025-11-25' };
      const direct = await withTimeout(rawPost(stack.seller.url, toolCall('off-1', tool), headers));
      const viaGateway = await withTimeout(rawPost(stack.gateway.agentUrl('demo'), toolCall('off-1', tool), headers));
      assert.equal(viaGateway.status, 200);
      assert.ok(viaGateway.body.equals(direct.body), `gateway ${viaGateway.bytes} B vs seller ${direct.bytes} B`);
    });
  }

  test('over SSE too: list_products untouched', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(stack.seller.sseUrl);
    const viaGateway = await connectClient(stack.gateway.agentUrl('demo-sse'));
    stack.closeAfter(direct, viaGateway);
    const want = (await withTimeout(direct.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    const got = (await withTimeout(viaGateway.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    assert.deepEqual(got, want);
    assert.deepEqual(JSON.parse((got.content[0] as { text: string }).text), got.structuredContent);
  });
});
