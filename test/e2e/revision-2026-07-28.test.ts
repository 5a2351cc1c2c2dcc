/**
 * MCP 2026-07-28 through the gateway: a real SDK 2.x client pinned to 2026-07-28 as the host,
 * a real SDK 2.x server (`createMcpHandler`) as the seller. The revision is stateless: no
 * initialize (a `server/discover` probe instead), no session, no GET stream, no DELETE; the
 * gateway must carry all of that through unchanged and still normalize results.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { gatewayYamlFor } from '../support/sdk1/revision-suite.js';
import { connectSdk2Host, MODERN, modernPost, envelope, type Sdk2Host } from '../support/sdk2/client.js';
import { SDK2_TOOLS, sdk2PageCursor, sdk2Products, SDK2_TOOLS_PAGE_SIZE, startSdk2Seller } from '../support/sdk2/seller.js';

type ToolResult = { content: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean; _meta?: unknown };

describe(`MCP ${MODERN}: SDK 2.x host -> gateway -> SDK 2.x seller`, { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  const stack = useSellerAndGateway(startSdk2Seller, (seller) => startGateway(gatewayYamlFor(seller.url)));
  const host = async (url: string): Promise<Sdk2Host> => {
    const h = await connectSdk2Host(url);
    stack.closeAfter(h);
    return h;
  };

  test('connect: the server/discover probe negotiates 2026-07-28; no session is minted or needed', { timeout: TEST_TIMEOUT_MS }, async () => {
    const from = stack.seller.requests.length;
    const h = await host(stack.gateway.agentUrl('seller'));
    assert.equal(h.client.getProtocolEra(), 'modern');
    const probe = stack.seller.requests[from]!;
    assert.equal(probe.method, 'POST');
    assert.equal(probe.headers['mcp-protocol-version'], MODERN);
    assert.equal(probe.headers['mcp-method'], 'server/discover');
    assert.equal((JSON.parse(probe.body.toString()) as { method: string }).method, 'server/discover');
    // No initialize anywhere, no session id either way.
    assert.ok(stack.seller.requests.slice(from).every((r) => !r.body.toString().includes('"initialize"')));
    assert.ok(stack.seller.requests.slice(from).every((r) => r.headers['mcp-session-id'] === undefined));
    assert.ok(h.exchanges.every((e) => e.requestHeaders['mcp-session-id'] === undefined));
  });

  test('tools/list: pages and nextCursor pass through untouched (byte for byte, and through the SDK client)', { timeout: TEST_TIMEOUT_MS }, async () => {
    // Raw: each page's body through the gateway is the seller's body, byte for byte.
    let cursor: string | undefined;
    const cursors: (string | undefined)[] = [];
    let id = 1;
    do {
      const params = { ...(cursor !== undefined ? { cursor } : {}), _meta: envelope() };
      const direct = await withTimeout(modernPost(stack.seller.url, id, 'tools/list', params));
      const via = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), id, 'tools/list', params));
      assert.equal(via.status, 200);
      assert.ok(via.body.equals(direct.body), `page ${id}: the seller's bytes`);
      cursors.push(cursor);
      cursor = (via.json() as { result: { nextCursor?: string } }).result.nextCursor;
      id++;
    } while (cursor !== undefined && id < 10);
    const pageCount = Math.ceil(SDK2_TOOLS.length / SDK2_TOOLS_PAGE_SIZE);
    assert.deepEqual(cursors, [undefined, ...Array.from({ length: pageCount - 1 }, (_, i) => sdk2PageCursor(i + 2))]);

    // The SDK 2.x client follows nextCursor itself: the seller sees every cursor exactly.
    const from = stack.seller.requests.length;
    const h = await host(stack.gateway.agentUrl('seller'));
    const listed = await withTimeout(h.client.listTools());
    assert.deepEqual(listed.tools.map((t) => t.name), SDK2_TOOLS.map((t) => t.name));
    const seen = stack.seller.requests
      .slice(from)
      .filter((r) => r.headers['mcp-method'] === 'tools/list')
      .map((r) => (JSON.parse(r.body.toString()) as { params?: { cursor?: string } }).params?.cursor);
    assert.deepEqual(seen, cursors);
  });

  test('tools/call: duplicated JSON text replaced by a summary; resultType and _meta kept', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await host(stack.seller.url);
    const via = await host(stack.gateway.agentUrl('seller'));
    const want = (await withTimeout(direct.client.callTool({ name: 'list_products', arguments: { region: 'us-west1' } }))) as ToolResult;
    const got = (await withTimeout(via.client.callTool({ name: 'list_products', arguments: { region: 'us-west1' } }))) as ToolResult;
    assert.deepEqual(want.structuredContent, sdk2Products('us-west1'));
    assert.deepEqual(got.structuredContent, want.structuredContent);
    assert.deepEqual(got._meta, want._meta);
    assert.equal(got.content.length, 1);
    assert.notEqual(got.content[0]?.text, want.content[0]?.text);
    assert.ok(Buffer.byteLength(got.content[0]!.text!) <= 200);

    // On the wire: only the text changed; resultType "complete" is still there for the SDK to read.
    const params = { name: 'list_products', arguments: { region: 'us-west1' }, _meta: envelope() };
    const raw = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), 7, 'tools/call', params, { 'mcp-param-region': 'us-west1' }));
    const sellerBody = JSON.parse(stack.seller.requests.at(-1)!.response!.body.toString()) as { result: Record<string, unknown> };
    const hostBody = raw.json() as { result: Record<string, unknown> };
    assert.equal(hostBody.result.resultType, 'complete');
    assert.deepEqual({ ...hostBody.result, content: null }, { ...sellerBody.result, content: null });

    // Nothing to dedupe: the same result.
    const args = { name: 'get_media_buy', arguments: { media_buy_id: 'mb_9' } };
    assert.deepEqual(await withTimeout(via.client.callTool(args)), await withTimeout(direct.client.callTool(args)));
  });

  test('no GET stream and no DELETE in this revision: the seller\'s 405 answers pass through', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const headers = { 'mcp-protocol-version': MODERN, accept: 'application/json, text/event-stream' };
      const direct = await withTimeout(fetch(stack.seller.url, { method, headers }));
      const via = await withTimeout(fetch(stack.gateway.agentUrl('seller'), { method, headers }));
      const [d, v] = [Buffer.from(await direct.arrayBuffer()), Buffer.from(await via.arrayBuffer())];
      assert.equal(direct.status, 405);
      assert.equal(via.status, 405, method);
      assert.ok(v.equals(d), `${method}: the seller's 405 body`);
    }
  });

  test('an Mcp-Session-Id an older client sends is forwarded as is (the seller ignores it)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const params = { name: 'get_media_buy', arguments: { media_buy_id: 'mb_1' }, _meta: envelope() };
    const res = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), 3, 'tools/call', params, { 'mcp-session-id': 'stale-session' }));
    assert.equal(res.status, 200);
    assert.equal(stack.seller.requests.at(-1)!.headers['mcp-session-id'], 'stale-session');
    assert.equal(res.headers.get('mcp-session-id'), null);
  });

  test(
    'over the limit, the SDK 2.x client reads the gateway\'s tool error result',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const limited = await startGateway(
        [gatewayYamlFor(stack.seller.url).trimEnd(), '    tools:', '      list_products:', '        max_response_bytes: 400', ''].join('\n'),
      );
      try {
        const h = await host(limited.agentUrl('seller'));
        const result = (await withTimeout(h.client.callTool({ name: 'list_products', arguments: {} }))) as ToolResult;
        assert.equal(result.isError, true);
        assert.equal((result.structuredContent as { adcp_error: { code: string } }).adcp_error.code, 'RESPONSE_TOO_LARGE');
      } finally {
        await limited.close();
      }
    },
  );
});
