/**
 * SSE endpoint: a tool result that arrives as several events (two progress notifications,
 * then the result) reaches the host intact, progress included, and dedupe applies to the
 * result event just as it does to a JSON body.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { startDemoSeller } from '../../examples/seller.js';
import { connectClient, exchangeLog } from '../helpers/client.js';
import { demoGatewayYaml, startGateway } from '../helpers/gateway.js';
import { rawSession, sseMessages } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

describe('sse result', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(startDemoSeller, (seller) => startGateway(demoGatewayYaml(seller)));
  let direct: Client;
  let viaGateway: Client;
  const gatewayLog = exchangeLog();

  before(async () => {
    direct = await connectClient(stack.seller.sseUrl);
    stack.closeAfter(direct);
    viaGateway = await connectClient(stack.gateway.agentUrl('demo-sse'), { onExchange: gatewayLog.onExchange });
    stack.closeAfter(viaGateway);
  });

  test('list_creative_formats: progress notifications and the deduped result arrive over SSE', { timeout: TEST_TIMEOUT_MS }, async () => {
    const progressDirect: Progress[] = [];
    const progressGateway: Progress[] = [];
    const want = (await withTimeout(
      direct.callTool({ name: 'list_creative_formats', arguments: {} }, undefined, { onprogress: (p) => progressDirect.push(p) }),
    )) as CallToolResult;
    const got = (await withTimeout(
      viaGateway.callTool({ name: 'list_creative_formats', arguments: {} }, undefined, { onprogress: (p) => progressGateway.push(p) }),
    )) as CallToolResult;

    // It really was an SSE response from the gateway.
    const [call] = gatewayLog.toolCalls('list_creative_formats');
    assert.equal(call?.status, 200);
    assert.equal(call?.contentType?.split(';')[0]?.trim().toLowerCase(), 'text/event-stream');

    const expectedProgress = [
      { progress: 1, total: 3, message: 'Loading format registry' },
      { progress: 2, total: 3, message: 'Resolving asset requirements' },
    ];
    assert.deepEqual(progressDirect, expectedProgress);
    assert.deepEqual(progressGateway, expectedProgress);

    assert.equal(got.isError, undefined);
    assert.deepEqual(got.structuredContent, want.structuredContent);
    assert.equal((got.structuredContent as { formats: unknown[] }).formats.length, 9);
    assert.equal(got.content.length, 1);
    const text = (got.content[0] as { type: string; text: string }).text;
    assert.equal(got.content[0]?.type, 'text');
    assert.ok(Buffer.byteLength(text) <= 200, `summary is ${Buffer.byteLength(text)} bytes`);
    assert.notEqual(text, (want.content[0] as { text: string }).text);
  });

  test('raw SSE through the gateway: three events, two progress notifications then the result', { timeout: TEST_TIMEOUT_MS }, async () => {
    const session = await withTimeout(rawSession(stack.gateway.agentUrl('demo-sse')));
    const res = await withTimeout(
      session.post({ jsonrpc: '2.0', id: 'f-1', method: 'tools/call', params: { name: 'list_creative_formats', arguments: {}, _meta: { progressToken: 'p-1' } } }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase(), 'text/event-stream');
    assert.equal(res.headers.get('content-length'), null);
    const messages = sseMessages(res.text()) as Array<{ method?: string; id?: string; params?: { progress: number }; result?: CallToolResult }>;
    assert.deepEqual(
      messages.map((m) => m.method ?? `result:${m.id}`),
      ['notifications/progress', 'notifications/progress', 'result:f-1'],
    );
    assert.deepEqual(messages.slice(0, 2).map((m) => m.params?.progress), [1, 2]);
    assert.ok(Buffer.byteLength((messages[2]?.result?.content[0] as { text: string }).text) <= 200);
  });

  test('list_products over SSE: deduped, fewer bytes to the host than from the seller', { timeout: TEST_TIMEOUT_MS }, async () => {
    const sellerLog = exchangeLog();
    const counted = await connectClient(stack.seller.sseUrl, { onExchange: sellerLog.onExchange });
    try {
      const want = (await withTimeout(counted.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
      const got = (await withTimeout(viaGateway.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
      assert.deepEqual(got.structuredContent, want.structuredContent);
      assert.equal(got.content.length, 1);
      assert.ok(Buffer.byteLength((got.content[0] as { text: string }).text) <= 200);

      const [fromSeller] = sellerLog.toolCalls('list_products');
      const [toHost] = gatewayLog.toolCalls('list_products');
      // Ids of the same length (1 and 2 here), so the two bodies are comparable byte for byte.
      assert.equal(String(fromSeller?.rpcId).length, String(toHost?.rpcId).length);
      assert.equal(toHost?.contentType?.split(';')[0]?.trim().toLowerCase(), 'text/event-stream');
      const sellerBytes = await withTimeout(fromSeller!.bodyBytes);
      const hostBytes = await withTimeout(toHost!.bodyBytes);
      // Exactly the escaped JSON copy left the event and the escaped summary came in; the
      // event framing is unchanged.
      const copyBytes = Buffer.byteLength(JSON.stringify((want.content[0] as { text: string }).text));
      const summaryBytes = Buffer.byteLength(JSON.stringify((got.content[0] as { text: string }).text));
      assert.ok(hostBytes < sellerBytes);
      assert.equal(hostBytes, sellerBytes - copyBytes + summaryBytes, `seller ${sellerBytes} B, host ${hostBytes} B`);
    } finally {
      await counted.close();
    }
  });
});
