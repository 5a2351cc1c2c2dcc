/**
 * JSON endpoint, host on 2025-06-18+: a legacy result whose payload is only JSON in
 * content[0].text gets that JSON lifted into `structuredContent`; content never ends up empty.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('json legacy lift', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller)));

  test('get_products_legacy gets structuredContent equal to the JSON in its text', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(stack.seller.url);
    const viaGateway = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(direct, viaGateway);

    const want = (await withTimeout(direct.callTool({ name: 'get_products_legacy', arguments: {} }))) as CallToolResult;
    const got = (await withTimeout(viaGateway.callTool({ name: 'get_products_legacy', arguments: {} }))) as CallToolResult;

    // The seller's answer is the legacy shape: no structuredContent, one JSON text item.
    assert.equal(want.structuredContent, undefined);
    assert.equal(want.content.length, 1);
    const legacyText = (want.content[0] as { type: string; text: string }).text;
    const payload = JSON.parse(legacyText) as Record<string, unknown>;
    assert.equal((payload.products as unknown[]).length, 12);

    assert.equal(got.isError, undefined);
    assert.deepEqual(got.structuredContent, payload);
    // Once lifted, the text is a duplicate of structuredContent like any other, so it is replaced
    // by a short summary: content keeps exactly one text item, never empty, never the JSON again.
    assert.equal(got.content.length, 1);
    assert.equal(got.content[0]?.type, 'text');
    const summary = (got.content[0] as { text: string }).text;
    assert.ok(summary.length > 0);
    assert.ok(Buffer.byteLength(summary) <= 200, `summary is ${Buffer.byteLength(summary)} bytes`);
    assert.notEqual(summary, legacyText);
  });
});
