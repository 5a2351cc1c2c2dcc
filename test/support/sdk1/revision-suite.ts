/**
 * The revision matrix for the 2025-era revisions: a real MCP SDK 1.x client acting as a host
 * on `revision`, through the real gateway, to a real SDK 1.x server (test/support/sdk1/seller.ts).
 * Each `test/e2e/revision-<revision>.test.ts` runs it for one revision.
 *
 * What it pins, per revision: initialize and the session id; `MCP-Protocol-Version` on every
 * later request (none on 2025-03-26); `tools/list` pages with their `nextCursor` untouched;
 * `tools/call` deduped from 2025-06-18 on and byte-for-byte the seller's on 2025-03-26; the
 * standalone GET stream; DELETE; a seller's 404 for an unknown session passed through. On
 * 2025-11-25 also: the priming event (signed token id, empty data, the seller's `retry:`) and
 * the SDK client resuming a POST stream the seller closed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type ListToolsResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { clampSseRetryMs } from '../../../src/response/sse-encode.js';
import { startGateway } from '../../helpers/gateway.js';
import { rawPost, rawSession } from '../../helpers/raw.js';
import { useSellerAndGateway } from '../../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../../helpers/timeout.js';
import { connectSdk1Host, type Sdk1Host } from './client.js';
import { pageCursor, productsPayload, SELLER_RETRY_MS, startSdk1Seller, TOOL_DEFINITIONS, TOOLS_PAGE_SIZE } from './seller.js';

/** Resume tokens the gateway mints start with this (ARCHITECTURE §4). */
export const TOKEN_PREFIX = 'agw1.';

/** Waits (bounded) until `check` holds; for state that another socket sets. */
export async function until(check: () => boolean, label: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function gatewayYamlFor(url: string, agent = 'seller'): string {
  return ['log_level: silent', 'agents:', `  ${agent}:`, `    url: ${url}`, ''].join('\n');
}

const readsStructuredContent = (revision: string): boolean => revision >= '2025-06-18';

export function describeRevision(revision: '2025-03-26' | '2025-06-18' | '2025-11-25'): void {
  describe(`MCP ${revision}: SDK 1.x host -> gateway -> SDK 1.x seller`, { timeout: TEST_TIMEOUT_MS * 3 }, () => {
    const stack = useSellerAndGateway(startSdk1Seller, (seller) => startGateway(gatewayYamlFor(seller.url)));
    const host = async (url: string): Promise<Sdk1Host> => {
      const h = await connectSdk1Host(url, revision);
      stack.closeAfter(h);
      return h;
    };

    test('initialize: the revision is negotiated and the seller\'s session id reaches the host', { timeout: TEST_TIMEOUT_MS }, async () => {
      const from = stack.seller.requests.length;
      const h = await host(stack.gateway.agentUrl('seller'));
      const sessionId = h.transport.sessionId;
      assert.ok(sessionId, 'the host holds a session id');
      assert.ok(stack.seller.sessionIds().includes(sessionId), 'it is the seller\'s own id, unchanged');
      assert.equal(h.transport.protocolVersion, revision);

      const seen = stack.seller.requests.slice(from);
      const init = seen.find((r) => r.rpcMethod === 'initialize');
      assert.equal((init?.body as { params: { protocolVersion: string } }).params.protocolVersion, revision);
      const after = seen.filter((r) => r.rpcMethod !== 'initialize');
      assert.ok(after.length >= 1, 'notifications/initialized reached the seller');
      for (const r of after) {
        assert.equal(r.headers['mcp-session-id'], sessionId);
        // 2025-03-26 has no MCP-Protocol-Version header; from 2025-06-18 on it is on every request.
        assert.equal(r.headers['mcp-protocol-version'], revision === '2025-03-26' ? undefined : revision);
      }
    });

    test('tools/list: every page and its nextCursor pass through untouched', { timeout: TEST_TIMEOUT_MS }, async () => {
      const direct = await host(stack.seller.url);
      const via = await host(stack.gateway.agentUrl('seller'));
      const from = stack.seller.requests.length;
      const pages: ListToolsResult[] = [];
      let cursor: string | undefined;
      do {
        const want = await withTimeout(direct.client.listTools(cursor === undefined ? undefined : { cursor }));
        const got = await withTimeout(via.client.listTools(cursor === undefined ? undefined : { cursor }));
        assert.deepEqual(got, want);
        pages.push(got);
        cursor = got.nextCursor;
      } while (cursor !== undefined && pages.length < 10);

      const pageCount = Math.ceil(TOOL_DEFINITIONS.length / TOOLS_PAGE_SIZE);
      assert.equal(pages.length, pageCount);
      assert.deepEqual(pages.map((p) => p.nextCursor), [...Array.from({ length: pageCount - 1 }, (_, i) => pageCursor(i + 2)), undefined]);
      assert.deepEqual(pages.flatMap((p) => p.tools.map((t) => t.name)), TOOL_DEFINITIONS.map((t) => t.name));
      // The cursors reached the seller through the gateway exactly as the seller minted them.
      const viaSession = via.transport.sessionId;
      const cursorsSeen = stack.seller.requests
        .slice(from)
        .filter((r) => r.rpcMethod === 'tools/list' && r.headers['mcp-session-id'] === viaSession)
        .map((r) => (r.body as { params?: { cursor?: string } }).params?.cursor);
      assert.deepEqual(cursorsSeen, [undefined, ...Array.from({ length: pageCount - 1 }, (_, i) => pageCursor(i + 2))]);
    });

    test(
      readsStructuredContent(revision)
        ? 'tools/call: the duplicated JSON text is replaced by a summary, structuredContent kept'
        : 'tools/call: the seller\'s result reaches the host untouched (no structuredContent on 2025-03-26)',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const direct = await host(stack.seller.url);
        const via = await host(stack.gateway.agentUrl('seller'));
        const want = (await withTimeout(direct.client.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
        const got = (await withTimeout(via.client.callTool({ name: 'list_products', arguments: {} }))) as CallToolResult;
        assert.deepEqual(want.structuredContent, productsPayload());
        assert.equal((want.content[0] as { text: string }).text, JSON.stringify(productsPayload()));
        if (readsStructuredContent(revision)) {
          assert.deepEqual(got.structuredContent, want.structuredContent);
          assert.equal(got.content.length, 1);
          const summary = (got.content[0] as { type: string; text: string }).text;
          assert.equal(got.content[0]?.type, 'text');
          assert.ok(summary.length > 0 && Buffer.byteLength(summary) <= 200, `summary: ${summary}`);
          assert.notEqual(summary, (want.content[0] as { text: string }).text);
        } else {
          assert.deepEqual(got, want);
        }
        // Nothing to dedupe: the same result either way.
        const args = { name: 'get_media_buy', arguments: { media_buy_id: 'mb_1' } };
        assert.deepEqual(await withTimeout(via.client.callTool(args)), await withTimeout(direct.client.callTool(args)));
      },
    );

    test('standalone GET stream: a server notification with no request reaches the host', { timeout: TEST_TIMEOUT_MS }, async () => {
      const via = await host(stack.gateway.agentUrl('seller'));
      let received!: () => void;
      const got = new Promise<void>((resolve) => (received = resolve));
      via.client.setNotificationHandler(ToolListChangedNotificationSchema, () => received());
      // The SDK client opens the GET stream after notifications/initialized; wait until the
      // gateway has answered it (the seller registers the stream before its headers go out).
      await until(() => via.exchanges.some((e) => e.method === 'GET' && e.status === 200), 'the GET stream');
      const get = via.exchanges.find((e) => e.method === 'GET');
      assert.equal(get?.contentType?.split(';')[0], 'text/event-stream');
      assert.equal(get?.requestHeaders['mcp-session-id'], via.transport.sessionId);
      await stack.seller.notifyToolListChanged();
      await withTimeout(got, 5_000, 'notifications/tools/list_changed');
    });

    test('DELETE ends the session at the seller; the seller\'s 404 for it then passes through', { timeout: TEST_TIMEOUT_MS }, async () => {
      const via = await host(stack.gateway.agentUrl('seller'));
      const sessionId = via.transport.sessionId!;
      await withTimeout(via.transport.terminateSession());
      const del = via.exchanges.find((e) => e.method === 'DELETE');
      assert.equal(del?.status, 200);
      assert.equal(del?.requestHeaders['mcp-session-id'], sessionId);
      await until(() => !stack.seller.sessionIds().includes(sessionId), 'the seller to drop the session');

      const headers: Record<string, string> = { 'mcp-session-id': sessionId, ...(revision === '2025-03-26' ? {} : { 'mcp-protocol-version': revision }) };
      const call = { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} };
      const direct = await withTimeout(rawPost(stack.seller.url, call, headers));
      const viaGateway = await withTimeout(rawPost(stack.gateway.agentUrl('seller'), call, headers));
      assert.equal(direct.status, 404);
      assert.equal(viaGateway.status, 404);
      assert.ok(viaGateway.body.equals(direct.body), 'the seller\'s 404 body, byte for byte');
    });

    test('an expired session: the seller\'s 404 reaches the SDK client as a 404', { timeout: TEST_TIMEOUT_MS }, async () => {
      const via = await host(stack.gateway.agentUrl('seller'));
      await stack.seller.expireSessions();
      await assert.rejects(
        withTimeout(via.client.callTool({ name: 'get_media_buy', arguments: { media_buy_id: 'mb_1' } })),
        (err: unknown) => err instanceof StreamableHTTPError && err.code === 404,
      );
      const call = via.exchanges.filter((e) => e.rpcMethod === 'tools/call').at(-1);
      assert.equal(call?.status, 404);
      assert.equal(call?.contentType?.split(';')[0], 'application/json');
    });

    if (revision < '2025-11-25') return;

    test('priming event: its id is a signed resume token, its data empty, the seller\'s retry: forwarded (clamped)', { timeout: TEST_TIMEOUT_MS }, async () => {
      const session = await rawSession(stack.gateway.agentUrl('seller'), revision);
      const res = await withTimeout(session.post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_media_buy', arguments: { media_buy_id: 'mb_1' } } }));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type')?.split(';')[0], 'text/event-stream');
      const events = res.text().split(/\r?\n\r?\n/).filter((block) => block.trim() !== '');
      const fields = (block: string, name: string): string[] =>
        block.split(/\r?\n/).filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      const primingIndex = events.findIndex((b) => fields(b, 'id').length > 0);
      assert.ok(primingIndex >= 0, 'an event with an id');
      const priming = events[primingIndex]!;
      assert.ok(fields(priming, 'id')[0]!.startsWith(TOKEN_PREFIX), `id is a gateway token: ${fields(priming, 'id')[0]}`);
      assert.deepEqual(fields(priming, 'data'), ['']);
      // The seller's 25 ms goes out clamped to the gateway's least (test/regressions/sse-retry-field-passes-through.test.ts).
      const retryMs = clampSseRetryMs(SELLER_RETRY_MS);
      assert.ok(events.some((b) => fields(b, 'retry').includes(String(retryMs))), `retry: ${retryMs} forwarded`);
      // Every id the host sees is a token; the result is the last message.
      for (const b of events) for (const id of fields(b, 'id')) assert.ok(id.startsWith(TOKEN_PREFIX));
      const last = JSON.parse(fields(events.at(-1)!, 'data').join('\n')) as { id: number; result: CallToolResult };
      assert.equal(last.id, 5);
      assert.deepEqual(last.result.structuredContent, { media_buy_id: 'mb_1', status: 'active' });
    });

    // Generous bounds: the SDK client waits out the seller's `retry:` plus its own backoff before
    // it resumes, which took > 10 s once on a loaded 2-core CI machine.
    test('the SDK client resumes a POST stream the seller closed, with the token as Last-Event-ID', { timeout: 3 * TEST_TIMEOUT_MS }, async () => {
      const direct = await host(stack.seller.url);
      const via = await host(stack.gateway.agentUrl('seller'));
      const from = stack.seller.requests.length;
      const progress: Progress[] = [];
      const want = (await withTimeout(direct.client.callTool({ name: 'slow_report', arguments: { rows: 30 } }), 2 * TEST_TIMEOUT_MS)) as CallToolResult;
      const got = (await withTimeout(
        via.client.callTool({ name: 'slow_report', arguments: { rows: 30 } }, undefined, { onprogress: (p) => progress.push(p), timeout: 2 * TEST_TIMEOUT_MS }),
        2 * TEST_TIMEOUT_MS,
      )) as CallToolResult;

      assert.deepEqual(got.structuredContent, want.structuredContent);
      assert.deepEqual(progress, [{ progress: 1, total: 2, message: 'queued' }]);
      // The result came back on a GET carrying the gateway's token...
      const resume = via.exchanges.filter((e) => e.method === 'GET' && e.requestHeaders['last-event-id'] !== undefined);
      assert.ok(resume.length >= 1, 'the client resumed');
      for (const r of resume) assert.ok(r.requestHeaders['last-event-id']!.startsWith(TOKEN_PREFIX));
      assert.equal(resume.at(-1)!.status, 200);
      // ...which the seller received as its own event id, never as a token.
      const viaSession = via.transport.sessionId;
      const sellerResume = stack.seller.requests
        .slice(from)
        .filter((r) => r.method === 'GET' && r.headers['mcp-session-id'] === viaSession && r.headers['last-event-id'] !== undefined);
      assert.equal(sellerResume.length, resume.length, 'every resume reached the seller');
      const upstreamId = String(sellerResume.at(-1)!.headers['last-event-id']);
      assert.ok(upstreamId.length > 0 && !upstreamId.startsWith(TOKEN_PREFIX), `seller got its own id: ${upstreamId}`);
      // Dedupe applied to the resumed result as to any other.
      assert.equal(got.content.length, 1);
      assert.notEqual((got.content[0] as { text: string }).text, (want.content[0] as { text: string }).text);
    });
  });
}
