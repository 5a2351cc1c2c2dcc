/**
 * Tasks (MCP 2025-11-25, experimental) through the gateway, SDK 1.x host and seller:
 * - `tools/call` with `params.task` answers with a task handle (`CreateTaskResult`): it passes
 *   through untouched (there is no tool result in it to normalize);
 * - `tasks/result` carries the tool's `CallToolResult`: deduped like `tools/call`, its
 *   `_meta["io.modelcontextprotocol/related-task"]` kept; over the limit it is answered with
 *   a tool error result (`RESPONSE_TOO_LARGE`, `correctable`), like `tools/call`;
 * - `tasks/get` and `tasks/list` are bounded (JSON-RPC error -32050 over the limit, `terminal`)
 *   and otherwise untouched, `nextCursor` included.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, rawSession, sseMessages, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { connectSdk1Host } from '../support/sdk1/client.js';
import { gatewayYamlFor } from '../support/sdk1/revision-suite.js';
import { startSdk1Seller } from '../support/sdk1/seller.js';

const REVISION = '2025-11-25';
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

type Msg = { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string; data?: { adcp_error?: Record<string, unknown> } } };

/** The JSON-RPC response with `id` in a JSON or SSE body. */
function answer(res: RawResponse, id: number): Msg {
  const type = res.headers.get('content-type')?.split(';')[0];
  const messages = (type === 'text/event-stream' ? sseMessages(res.text()) : [res.json()]) as Msg[];
  const found = messages.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
  assert.ok(found, `a response for id ${id} in ${res.text().slice(0, 300)}`);
  return found;
}

/** A raw 2025-11-25 session that can add headers per request. */
async function session(url: string): Promise<(id: number, method: string, params: Record<string, unknown>, extra?: Record<string, string>) => Promise<Msg>> {
  const s = await rawSession(url, REVISION);
  const headers = { 'mcp-session-id': s.sessionId!, 'mcp-protocol-version': REVISION };
  return async (id, method, params, extra = {}) => answer(await rawPost(url, { jsonrpc: '2.0', id, method, params }, { ...headers, ...extra }), id);
}

/** Task fields that differ between two runs. */
function masked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (['taskId', 'createdAt', 'lastUpdatedAt'].includes(key) ? '*' : v)));
}

describe(`tasks (${REVISION}): task handles, tasks/result, tasks/get, tasks/list through the gateway`, { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  const stack = useSellerAndGateway(startSdk1Seller, (seller) => startGateway(gatewayYamlFor(seller.url)));

  test('SDK client callToolStream with a task: the handle passes through, the result is deduped', { timeout: TEST_TIMEOUT_MS }, async () => {
    const run = async (url: string): Promise<{ kinds: string[]; result: CallToolResult; task: unknown }> => {
      const h = await connectSdk1Host(url, REVISION);
      stack.closeAfter(h);
      const kinds: string[] = [];
      let result: CallToolResult | undefined;
      let task: unknown;
      const stream = h.client.experimental.tasks.callToolStream({ name: 'build_report', arguments: { rows: 12 } }, CallToolResultSchema, { task: { ttl: 60_000 } });
      for await (const message of stream) {
        kinds.push(message.type);
        if (message.type === 'taskCreated') task = message.task;
        if (message.type === 'result') result = message.result as CallToolResult;
        if (message.type === 'error') throw message.error;
      }
      assert.ok(result);
      return { kinds, result, task };
    };
    const direct = await withTimeout(run(stack.seller.url));
    const via = await withTimeout(run(stack.gateway.agentUrl('seller')));
    assert.equal(via.kinds[0], 'taskCreated');
    assert.equal(via.kinds.at(-1), 'result');
    assert.deepEqual(masked(via.task), masked(direct.task));
    assert.deepEqual(via.result.structuredContent, direct.result.structuredContent);
    assert.equal((direct.result.content[0] as { text: string }).text, JSON.stringify(direct.result.structuredContent));
    assert.equal(via.result.content.length, 1);
    assert.notEqual((via.result.content[0] as { text: string }).text, (direct.result.content[0] as { text: string }).text);
  });

  test('raw: the handle, tasks/get and tasks/result against the seller\'s own answers', { timeout: TEST_TIMEOUT_MS }, async () => {
    const direct = await session(stack.seller.url);
    const via = await session(stack.gateway.agentUrl('seller'));
    const call = { name: 'build_report', arguments: { rows: 8 }, task: { ttl: 60_000 } };
    const [d1, v1] = [await withTimeout(direct(1, 'tools/call', call)), await withTimeout(via(1, 'tools/call', call))];
    assert.deepEqual(Object.keys(v1.result!).filter((k) => k !== '_meta'), ['task']);
    assert.deepEqual(masked(v1), masked(d1));

    const viaTask = (v1.result!.task as { taskId: string }).taskId;
    const directTask = (d1.result!.task as { taskId: string }).taskId;
    const [d2, v2] = [await withTimeout(direct(2, 'tasks/get', { taskId: directTask })), await withTimeout(via(2, 'tasks/get', { taskId: viaTask }))];
    assert.equal(v2.result!.status, 'completed');
    assert.deepEqual(masked(v2), masked(d2));

    const [d3, v3] = [await withTimeout(direct(3, 'tasks/result', { taskId: directTask })), await withTimeout(via(3, 'tasks/result', { taskId: viaTask }))];
    const want = d3.result as CallToolResult;
    const got = v3.result as CallToolResult;
    assert.deepEqual((got._meta as Record<string, unknown>)[RELATED_TASK], { taskId: viaTask });
    assert.deepEqual(got.structuredContent, want.structuredContent);
    // Only the duplicated text changed.
    assert.deepEqual(masked({ ...got, content: null }), masked({ ...want, content: null }));
    assert.equal(got.content.length, 1);
    assert.notEqual((got.content[0] as { text: string }).text, (want.content[0] as { text: string }).text);
  });

  test('tasks/list: bounded, and its nextCursor passes through', { timeout: TEST_TIMEOUT_MS }, async () => {
    const via = await session(stack.gateway.agentUrl('seller'));
    for (let i = 0; i < 11; i++) await withTimeout(via(100 + i, 'tools/call', { name: 'build_report', arguments: { rows: 1 }, task: { ttl: 60_000 } }));
    const page1 = await withTimeout(via(200, 'tasks/list', {}));
    const cursor = page1.result!.nextCursor as string;
    assert.equal(typeof cursor, 'string');
    assert.equal((page1.result!.tasks as unknown[]).length, 10);
    const page2 = await withTimeout(via(201, 'tasks/list', { cursor }));
    assert.equal((page2.result!.tasks as unknown[]).length, 1);
    assert.equal(page2.result!.nextCursor, undefined);
    const listed = stack.seller.requests.filter((r) => r.rpcMethod === 'tasks/list').map((r) => (r.body as { params: { cursor?: string } }).params.cursor);
    assert.deepEqual(listed.slice(-2), [undefined, cursor]);

    const tooLarge = await withTimeout(via(202, 'tasks/list', {}, { 'x-max-response-bytes': '400' }));
    assert.equal(tooLarge.error?.code, -32050);
    assert.equal(tooLarge.error?.data?.adcp_error?.code, 'RESPONSE_TOO_LARGE');
    assert.equal(tooLarge.error?.data?.adcp_error?.recovery, 'terminal');
  });

  test('over the limit: tasks/result gets a tool error result, tasks/get a JSON-RPC error', { timeout: TEST_TIMEOUT_MS }, async () => {
    const via = await session(stack.gateway.agentUrl('seller'));
    const created = await withTimeout(via(1, 'tools/call', { name: 'build_report', arguments: { rows: 400 }, task: { ttl: 60_000 } }));
    const taskId = (created.result!.task as { taskId: string }).taskId;

    const result = await withTimeout(via(2, 'tasks/result', { taskId }, { 'x-max-response-bytes': '2000' }));
    const tool = result.result as CallToolResult;
    assert.equal(tool.isError, true);
    const err = (tool.structuredContent as { adcp_error: { code: string; recovery: string; details: { limit_bytes: number; reason: string } } }).adcp_error;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.recovery, 'correctable');
    assert.equal(err.details.limit_bytes, 2000);
    assert.equal(err.details.reason, 'sse_cumulative');
    assert.deepEqual(JSON.parse((tool.content[0] as { text: string }).text), { adcp_error: err });

    const get = await withTimeout(via(3, 'tasks/get', { taskId }, { 'x-max-response-bytes': '120' }));
    assert.equal(get.error?.code, -32050);
    assert.equal(get.error?.data?.adcp_error?.recovery, 'terminal');

    // Under the limit the same task's result comes through.
    const ok = await withTimeout(via(4, 'tasks/result', { taskId }));
    assert.equal(((ok.result as CallToolResult).structuredContent as { rows: unknown[] }).rows.length, 400);
  });
});
