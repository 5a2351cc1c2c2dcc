/**
 * A host on MCP 2025-03-26 (no MCP-Protocol-Version header) cannot read structuredContent,
 * so the gateway must hand it the seller's result untouched: no dedupe, no lift, the same bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient, exchangeLog } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('old host (2025-03-26)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller)));

  for (const tool of ['list_products', 'get_products_legacy'] as const) {
    test(`raw POST without MCP-Protocol-Version: ${tool} body is byte-identical to the direct call`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const direct = await withTimeout(rawPost(stack.seller.url, toolCall(3, tool)));
      const viaGateway = await withTimeout(rawPost(stack.gateway.agentUrl('demo'), toolCall(3, tool)));
      assert.equal(direct.status, 200);
      assert.equal(viaGateway.status, 200);
      assert.ok(direct.bytes > 20_000);
      assert.equal(viaGateway.bytes, direct.bytes);
      assert.ok(viaGateway.body.equals(direct.body), 'byte-identical body');
    });
  }

  test('SDK client negotiating 2025-03-26: results equal the seller\'s, text copies intact', { timeout: TEST_TIMEOUT_MS }, async () => {
    const log = exchangeLog();
    const direct = await connectClient(stack.seller.url, { protocolVersion: '2025-03-26' });
    const viaGateway = await connectClient(stack.gateway.agentUrl('demo'), { protocolVersion: '2025-03-26', onExchange: log.onExchange });
    stack.closeAfter(direct, viaGateway);

    for (const name of ['list_products', 'get_products_legacy']) {
      const want = (await withTimeout(direct.callTool({ name, arguments: {} }))) as CallToolResult;
      const got = (await withTimeout(viaGateway.callTool({ name, arguments: {} }))) as CallToolResult;
      assert.deepEqual(got, want);
    }
    // The host really behaved as 2025-03-26: it sent no MCP-Protocol-Version on its calls.
    const calls = log.log.filter((e) => e.rpcMethod === 'tools/call');
    assert.equal(calls.length, 2);
    for (const call of calls) assert.equal(call.requestHeaders['mcp-protocol-version'], undefined);
  });
});
