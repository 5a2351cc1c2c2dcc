/**
 * Limits narrower than the default: per call (`X-Max-Response-Bytes` request header) and per
 * tool (`agents.<name>.tools.<tool>.max_response_bytes` in YAML).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

type TooLarge = { adcp_error: { code: string; recovery: string; details: { limit_bytes: number; observed_bytes: number; reason: string } } };

describe('per-call and per-tool limits', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) =>
    startGateway(
      demoGatewayYaml(seller, {
        agents: [
          '  demo-tools:',
          `    url: ${seller.url}`,
          '    tools:',
          '      list_products:',
          '        max_response_bytes: 2000',
        ].join('\n'),
      }),
    ),
  );
  /** Bytes the seller sends for list_products as the SDK client's first tools/call (id 1). */
  let listProductsBytes: number;

  before(async () => {
    const direct = await rawPost(stack.seller.url, toolCall(1, 'list_products'), { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(direct.status, 200);
    listProductsBytes = direct.bytes;
  });

  test('X-Max-Response-Bytes: 1000 makes list_products fail with limit_bytes 1000', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo'), { headers: { 'X-Max-Response-Bytes': '1000' } });
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    assert.equal(result.isError, true);
    const err = (result.structuredContent as TooLarge).adcp_error;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.recovery, 'correctable');
    assert.equal(err.details.limit_bytes, 1000);
    assert.equal(err.details.reason, 'content_length');
    assert.equal(err.details.observed_bytes, listProductsBytes);

    // Small answers still fit under the same per-call limit.
    const small = (await withTimeout(
      client.callTool({ name: 'create_media_buy', arguments: { buyer_ref: 'po-1', product_ids: ['p1'], total_budget: 1000 } }),
    )) as CallToolResult;
    assert.equal(small.isError, undefined);
    assert.equal((small.structuredContent as { buyer_ref: string }).buyer_ref, 'po-1');
  });

  test('the same call without the header succeeds (control)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    assert.equal(result.isError, undefined);
    assert.equal((result.structuredContent as { products: unknown[] }).products.length, 16);
  });

  test('a per-tool max_response_bytes in YAML applies to that tool only', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connectClient(stack.gateway.agentUrl('demo-tools'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    assert.equal(result.isError, true);
    const err = (result.structuredContent as TooLarge).adcp_error;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.details.limit_bytes, 2000);
    assert.equal(err.details.reason, 'content_length');
    assert.equal(err.details.observed_bytes, listProductsBytes);

    // get_products_legacy (~28 KB) is another tool on the same agent: the agent's 4 MiB applies.
    const other = (await withTimeout(client.callTool({ name: 'get_products_legacy', arguments: {} }))) as CallToolResult;
    assert.equal(other.isError, undefined);
    assert.equal((other.structuredContent as { products: unknown[] }).products.length, 12);
  });

  test('a large request is tied to its tool as well (its peek read by the structure scan)', { timeout: TEST_TIMEOUT_MS }, async () => {
    // ~100 KB of arguments: over PEEK_SCAN_MIN_BYTES, so the tool name comes from the scan's
    // member table (request/peek.ts), not from JSON.parse.
    const brief = 'CTV inventory, sports; '.repeat(4_500);
    const client = await connectClient(stack.gateway.agentUrl('demo-tools'));
    stack.closeAfter(client);
    const result = (await withTimeout(client.callTool({ name: 'list_products', arguments: { brief } }))) as CallToolResult;
    assert.equal(result.isError, true);
    const err = (result.structuredContent as TooLarge).adcp_error;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.details.limit_bytes, 2000);
    // Another tool with the same arguments: the agent's limit, the seller's answer.
    const other = (await withTimeout(client.callTool({ name: 'get_products_legacy', arguments: { brief } }))) as CallToolResult;
    assert.equal(other.isError, undefined);
  });
});
