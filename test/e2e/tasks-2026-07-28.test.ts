/**
 * Tasks under MCP 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663) through
 * the gateway, SDK 2.x seller. The final result arrives inside `tasks/get`
 * (`result.result` of a task whose `status` is `"completed"`): that `CallToolResult` is
 * normalized like a `tools/call` result, and nothing else in any tasks answer is touched.
 *
 * The host side is raw 2026-07-28 POSTs for `tools/call` (the SDK 2.x client does not consume
 * `resultType: "task"`: it rejects it as an unsupported result type) and the SDK 2.x client
 * for `tasks/get` (a custom-method request).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { z } from 'zod';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { gatewayYamlFor } from '../support/sdk1/revision-suite.js';
import { connectSdk2Host, envelope, modernPost, type Sdk2Host } from '../support/sdk2/client.js';
import { doublePayload, sdk2Report, startSdk2Seller, TASKS_EXTENSION } from '../support/sdk2/seller.js';

type Answer = { id: number; result?: Record<string, unknown>; error?: { code: number; data?: { adcp_error?: { code: string; recovery: string } } } };

describe('tasks (2026-07-28 extension): the result inside tasks/get', { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  const stack = useSellerAndGateway(startSdk2Seller, (seller) => startGateway(gatewayYamlFor(seller.url)));
  let sdkHost: Sdk2Host;
  const meta = (): Record<string, unknown> => envelope({ [TASKS_EXTENSION]: {} });
  let nextId = 1;

  /** POSTs through the gateway; returns the host's body and the seller's own body for that request. */
  async function viaGateway(method: string, params: Record<string, unknown>, extra: Record<string, string> = {}): Promise<{ host: Buffer; seller: Buffer; answer: Answer }> {
    const res = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), nextId++, method, { ...params, _meta: meta() }, extra));
    assert.equal(res.status, 200);
    const sent = stack.seller.requests.at(-1)!.response!;
    return { host: res.body, seller: sent.body, answer: res.json() as Answer };
  }
  async function newTask(): Promise<string> {
    const created = await viaGateway('tools/call', { name: 'build_report', arguments: {} });
    // The task handle passes through byte for byte.
    assert.ok(created.host.equals(created.seller), 'CreateTaskResult untouched');
    assert.equal(created.answer.result!.resultType, 'task');
    assert.equal(created.answer.result!.status, 'working');
    return created.answer.result!.taskId as string;
  }

  before(async () => {
    sdkHost = await connectSdk2Host(stack.gateway.agentUrl('seller'));
    stack.closeAfter(sdkHost);
  });

  test('a completed task: result.result deduped, every other field exactly the seller\'s', { timeout: TEST_TIMEOUT_MS }, async () => {
    const taskId = await newTask();
    const working = await viaGateway('tasks/get', { taskId });
    assert.ok(working.host.equals(working.seller), 'a working task is untouched');

    stack.seller.setTask(taskId, { status: 'completed', result: doublePayload(sdk2Report(20)) });
    const done = await viaGateway('tasks/get', { taskId });
    const want = (JSON.parse(done.seller.toString()) as Answer).result!;
    const got = done.answer.result!;
    assert.equal(got.resultType, 'complete');
    assert.equal(got.status, 'completed');
    const wantTool = want.result as { content: { text: string }[]; structuredContent: unknown };
    const gotTool = got.result as { content: { type: string; text: string }[]; structuredContent: unknown };
    assert.deepEqual(gotTool.structuredContent, sdk2Report(20));
    assert.equal(gotTool.content.length, 1);
    assert.notEqual(gotTool.content[0]!.text, wantTool.content[0]!.text);
    assert.ok(Buffer.byteLength(gotTool.content[0]!.text) <= 200);
    assert.deepEqual({ ...got, result: { ...gotTool, content: null } }, { ...want, result: { ...wantTool, content: null } });
    assert.ok(done.host.length < done.seller.length);

    // The SDK 2.x client polling the same task reads the normalized result.
    const polled = (await withTimeout(sdkHost.client.request({ method: 'tasks/get', params: { taskId } } as never, z.looseObject({}) as never))) as {
      status: string;
      result: { content: { text: string }[]; structuredContent: unknown };
    };
    assert.equal(polled.status, 'completed');
    assert.deepEqual(polled.result.structuredContent, sdk2Report(20));
    assert.equal(polled.result.content[0]!.text, gotTool.content[0]!.text);
  });

  test('nowhere else: failed, cancelled, and a completed tool error pass through byte for byte', { timeout: TEST_TIMEOUT_MS }, async () => {
    const cases = [
      { status: 'failed', error: { code: -32603, message: 'API rate limit exceeded' } },
      { status: 'cancelled' },
      // A tool error result is a completed task (SEP-2663); its error JSON is never stripped.
      { status: 'completed', result: { ...doublePayload({ adcp_error: { code: 'RATE_LIMITED', message: 'slow down' } }), isError: true } },
    ] as const;
    for (const state of cases) {
      const taskId = await newTask();
      stack.seller.setTask(taskId, state as never);
      const answer = await viaGateway('tasks/get', { taskId });
      assert.ok(answer.host.equals(answer.seller), `${state.status}: untouched`);
    }
  });

  test('over the limit: tasks/get is answered with a JSON-RPC error (-32050, terminal)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const taskId = await newTask();
    stack.seller.setTask(taskId, { status: 'completed', result: doublePayload(sdk2Report(400)) });
    const res = await withTimeout(modernPost(stack.gateway.agentUrl('seller'), nextId++, 'tasks/get', { taskId, _meta: meta() }, { 'x-max-response-bytes': '2000' }));
    assert.equal(res.status, 200);
    const answer = res.json() as Answer;
    assert.equal(answer.error?.code, -32050);
    assert.equal(answer.error?.data?.adcp_error?.code, 'RESPONSE_TOO_LARGE');
    assert.equal(answer.error?.data?.adcp_error?.recovery, 'terminal');
  });
});
