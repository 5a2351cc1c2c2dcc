/**
 * JSON endpoint, host on 2025-06-18+: list_products comes back with the seller's
 * `structuredContent` unchanged and the duplicated JSON text replaced by a short summary,
 * so the host receives fewer bytes than the seller sent.
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

describe('json dedupe', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller)));

  test('list_products via the gateway: same structuredContent, JSON copy replaced by a <= 200 byte summary', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await connectClient(stack.seller.url);
    const viaGateway = await connectClient(stack.gateway.agentUrl('demo'));
    stack.closeAfter(direct, viaGateway);

    const want = (await withTimeout(direct.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
    const got = (await withTimeout(viaGateway.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;

    // The seller really does send the double payload (otherwise this test proves nothing).
    assert.equal(want.content.length, 1);
    const sellerText = want.content[0];
    assert.equal(sellerText?.type, 'text');
    assert.deepEqual(JSON.parse((sellerText as { text: string }).text), want.structuredContent);
    assert.ok(Buffer.byteLength((sellerText as { text: string }).text) > 30_000);

    assert.equal(got.isError, undefined);
    assert.deepEqual(got.structuredContent, want.structuredContent);
    assert.equal(got.content.length, 1);
    const summary = got.content[0];
    assert.equal(summary?.type, 'text');
    const text = (summary as { text: string }).text;
    assert.ok(text.length > 0, 'summary is not empty');
    assert.ok(Buffer.byteLength(text) <= 200, `summary is ${Buffer.byteLength(text)} bytes`);
    assert.notEqual(text, (sellerText as { text: string }).text);
  });

  test('raw POST: fewer bytes to the host than from the seller, everything but the text unchanged', { timeout: TEST_TIMEOUT_MS }, async () => {
    const headers = { 'mcp-protocol-version': '2025-06-18' };
    const direct = await withTimeout(rawPost(stack.seller.url, toolCall(7, 'list_products'), headers));
    const viaGateway = await withTimeout(rawPost(stack.gateway.agentUrl('demo'), toolCall(7, 'list_products'), headers));
    assert.equal(direct.status, 200);
    assert.equal(viaGateway.status, 200);
    assert.equal(viaGateway.headers.get('content-type')?.split(';')[0], 'application/json');

    type Msg = { jsonrpc: string; id: number; result: CallToolResult };
    const d = direct.json() as Msg;
    const g = viaGateway.json() as Msg;
    const sellerText = (d.result.content[0] as { text: string }).text;
    const summary = (g.result.content[0] as { text: string }).text;

    // Only content[] changed: same id, same structuredContent, no other key added or dropped.
    assert.deepEqual(g, { ...d, result: { ...d.result, content: [{ type: 'text', text: summary }] } });

    // Exactly the escaped JSON copy left the body and the escaped summary came in.
    assert.ok(viaGateway.bytes < direct.bytes, `${viaGateway.bytes} < ${direct.bytes}`);
    const expected = direct.bytes - Buffer.byteLength(JSON.stringify(sellerText)) + Buffer.byteLength(JSON.stringify(summary));
    assert.equal(viaGateway.bytes, expected);
    // A rewritten body carries its own, correct length.
    const len = viaGateway.headers.get('content-length');
    if (len !== null) assert.equal(Number(len), viaGateway.bytes);
    assert.equal(viaGateway.headers.get('content-encoding'), null);
  });
});
