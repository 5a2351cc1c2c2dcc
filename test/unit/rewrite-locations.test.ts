/**
 * Where the rewrite stage looks for a CallToolResult (src/response/rewrite.ts), per method and
 * host revision, and that it touches nothing else.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Exchange } from '../../src/exchange.js';
import { STATELESS_SINCE, deliversTaskResultInTasksGet, hostReadsStructuredContent, protocolVersionOf } from '../../src/mcp/revision.js';
import { rewriteResponse, toolResultLocation } from '../../src/response/rewrite.js';

// Long enough that its summary is shorter than its copy (a shorter copy is kept as written: normalize.ts summaryShortens).
const data = { status: 'completed', items: [1, 2, 3], message: 'Three items matched the brief; each is listed in items.' };
const dup = (): Record<string, unknown> => ({ content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data });

function exchange(method: string, protocolVersion: string, normalize = true): Exchange {
  return {
    rpc: { kind: 'request', id: 7, method, toolName: undefined },
    protocolVersion,
    normalize,
    limits: { max_response_bytes: 1 << 20, max_json_depth: 64, max_json_nodes: 100_000 },
  } as unknown as Exchange;
}
const response = (result: unknown): Record<string, unknown> => ({ jsonrpc: '2.0', id: 7, result });

describe('rewrite locations', () => {
  test('revision helpers: one source for revision dates', () => {
    assert.equal(STATELESS_SINCE, '2026-07-28');
    assert.equal(protocolVersionOf(undefined), '2025-03-26');
    assert.equal(hostReadsStructuredContent('2025-03-26'), false);
    assert.equal(hostReadsStructuredContent('2025-06-18'), true);
    assert.equal(deliversTaskResultInTasksGet('2025-11-25'), false);
    assert.equal(deliversTaskResultInTasksGet('2026-07-28'), true);
    assert.equal(deliversTaskResultInTasksGet('draft'), false);
  });

  test('toolResultLocation per method and revision', () => {
    for (const v of ['2025-06-18', '2025-11-25', '2026-07-28']) {
      assert.equal(toolResultLocation('tools/call', v), 'result');
      assert.equal(toolResultLocation('tasks/result', v), 'result');
      for (const m of ['tools/list', 'tasks/list', 'tasks/cancel', 'resources/read', 'prompts/get', 'server/discover']) assert.equal(toolResultLocation(m, v), undefined);
    }
    assert.equal(toolResultLocation('tasks/get', '2025-11-25'), undefined);
    assert.equal(toolResultLocation('tasks/get', '2026-07-28'), 'result.result');
    assert.equal(toolResultLocation('tasks/get', 'garbage'), undefined);
  });

  test('tools/call and tasks/result: result deduped, other keys (_meta, resultType) kept in order', () => {
    for (const method of ['tools/call', 'tasks/result']) {
      const meta = { 'io.modelcontextprotocol/related-task': { taskId: 't1' } };
      const out = rewriteResponse(exchange(method, '2025-11-25'), response({ ...dup(), _meta: meta, resultType: 'complete' }));
      assert.equal(out.changed, true);
      assert.equal(out.action, 'deduped');
      const result = (out.message as { result: Record<string, unknown> }).result;
      assert.deepEqual(Object.keys(result), ['content', 'structuredContent', '_meta', 'resultType']);
      assert.deepEqual(result._meta, meta);
      assert.deepEqual(result.structuredContent, data);
    }
  });

  test('a task handle or an input_required result in answer to tools/call is not a tool result', () => {
    for (const resultType of ['task', 'input_required', 'something_new']) {
      const msg = response({ ...dup(), resultType });
      assert.equal(rewriteResponse(exchange('tools/call', '2026-07-28'), msg).changed, false);
    }
    // 2025-11-25 handle: { task } only.
    assert.equal(rewriteResponse(exchange('tools/call', '2025-11-25'), response({ task: { taskId: 't', status: 'working' } })).changed, false);
  });

  test('2026-07-28 tasks/get: only a completed task\'s result.result', () => {
    const task = { taskId: 't1', status: 'completed', createdAt: 'x', lastUpdatedAt: 'x', ttlMs: 1, resultType: 'complete' };
    const out = rewriteResponse(exchange('tasks/get', '2026-07-28'), response({ ...task, result: dup() }));
    assert.equal(out.changed, true);
    const result = (out.message as { result: Record<string, unknown> }).result;
    assert.deepEqual({ ...result, result: null }, { ...task, result: null });
    assert.deepEqual((result.result as { structuredContent: unknown }).structuredContent, data);
    assert.notEqual((result.result as { content: { text: string }[] }).content[0]!.text, JSON.stringify(data));

    for (const status of ['working', 'input_required', 'failed', 'cancelled']) {
      assert.equal(rewriteResponse(exchange('tasks/get', '2026-07-28'), response({ ...task, status, result: dup() })).changed, false, status);
    }
    // A 2025-11-25 tasks/get carries no result: even one that (wrongly) does is left alone.
    assert.equal(rewriteResponse(exchange('tasks/get', '2025-11-25'), response({ ...task, result: dup() })).changed, false);
    // An error result inside a completed task is never stripped.
    assert.equal(rewriteResponse(exchange('tasks/get', '2026-07-28'), response({ ...task, result: { ...dup(), isError: true } })).changed, false);
  });

  test('never: normalize off (old host, dedupe_text off), another id, an error, a notification', () => {
    assert.equal(rewriteResponse(exchange('tools/call', '2025-03-26', false), response(dup())).changed, false);
    assert.equal(rewriteResponse(exchange('tools/call', '2025-11-25'), { jsonrpc: '2.0', id: 8, result: dup() }).changed, false);
    assert.equal(rewriteResponse(exchange('tools/call', '2025-11-25'), { jsonrpc: '2.0', id: 7, error: { code: 1, message: 'x' } }).changed, false);
    assert.equal(rewriteResponse(exchange('tools/call', '2025-11-25'), { jsonrpc: '2.0', method: 'notifications/tasks', params: { result: dup() } }).changed, false);
  });

  test('a "__proto__" key in the seller\'s answer stays plain data', () => {
    const raw = JSON.parse(`{"jsonrpc":"2.0","id":7,"__proto__":{"polluted":true},"result":{"taskId":"t","status":"completed","__proto__":{"x":1},"result":${JSON.stringify(dup())}}}`) as unknown;
    const out = rewriteResponse(exchange('tasks/get', '2026-07-28'), raw);
    assert.equal(out.changed, true);
    const msg = out.message as Record<string, unknown>;
    assert.ok(Object.hasOwn(msg, '__proto__'));
    assert.ok(Object.hasOwn(msg.result as object, '__proto__'));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(msg), Object.prototype);
  });
});
