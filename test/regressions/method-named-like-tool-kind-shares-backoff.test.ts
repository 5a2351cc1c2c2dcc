/**
 * Regression (a review of the request side, L1): a backoff kind was `<method> <tool>` for a
 * `tools/call` and the method alone otherwise (admission/agent-guard.ts `callKind`), so a
 * request whose method is literally `tools/call small_tool` had the kind of tool
 * `small_tool`: it waited out that tool's backoff, and, sent as its probe, its clean `-32601`
 * answer ended the tool's backoff. Now method kinds and tool kinds are apart: a tool's is
 * `tools/call <tool>`, a method's the method when it holds no space, else
 * `method "<method as a JSON string>"` (no MCP method holds a space), and the names longer
 * than a config's tool name share `over-long tool name` or `over-long method`; the log lines'
 * `call` shows them so.
 *
 * Input: a raw seller answering a `tools/call` with a 5,000-byte result and any other method
 * with `-32601`; agent `a` whose tool `small_tool` has `max_response_bytes: 1000`,
 * `backoff_after_breaches: 2`, a 60 s backoff, a 1 s `response_deadline_ms`. Two calls of
 * `small_tool`, then a request of method `tools/call small_tool`.
 * Expected: the two calls breach (`raw_bytes`) and `small_tool` backs off; the request of the
 * odd method is sent at once and its answer passed as the seller wrote it; `small_tool` still
 * backs off. The kinds' exact names.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callKind } from '../../src/admission/agent-guard.js';
import { methodNotFound, oversizedResult, useBackoffStack } from '../helpers/backoff-stack.js';
import { toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

describe('a method named like a tool’s backoff kind', { timeout: TEST_TIMEOUT_MS }, () => {
  const { stack, post } = useBackoffStack(
    (body) => {
      const m = JSON.parse(body) as { id: number; method: string };
      return m.method === 'tools/call' ? oversizedResult(m.id) : methodNotFound(m.id);
    },
    ['backoff_after_breaches: 2', 'tools:', '  small_tool: { max_response_bytes: 1000 }'],
    '2025-06-18',
  );

  test('is a kind of its own: sent at once while the tool backs off, its clean answer ending nothing', async () => {
    for (const id of [1, 2]) {
      const res = await post(toolCall(id, 'small_tool'));
      const reason = (res.json() as { result: { structuredContent: { adcp_error: { details: { reason: string } } } } }).result.structuredContent.adcp_error.details.reason;
      assert.equal(reason, 'raw_bytes');
    }
    const guard = stack.gateway.app.gateway.guard;
    assert.equal(guard.isBackingOff('a', callKind('tools/call', 'small_tool')), true);
    const odd = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call small_tool' });
    assert.deepEqual([odd.status, odd.text()], [200, methodNotFound(3)]);
    assert.deepEqual(
      stack.seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { method: string }).method),
      ['tools/call', 'tools/call', 'tools/call small_tool'],
    );
    assert.equal(guard.isBackingOff('a', callKind('tools/call', 'small_tool')), true, 'the tool still backs off');
  });

  test('the kinds’ names: a tool’s, a method’s, a method with a space, over-long names, a batch', () => {
    assert.deepEqual(
      [
        callKind('tools/call', 'small_tool'),
        callKind('tools/list', undefined),
        callKind('tools/call small_tool', undefined),
        callKind('method "x"', undefined),
        callKind('tools/call', 'x'.repeat(129)),
        callKind('x'.repeat(129), undefined),
        callKind('tools/call', 'over-long tool name'),
        callKind(undefined, undefined, true),
      ],
      ['tools/call small_tool', 'tools/list', 'method "tools/call small_tool"', 'method "method \\"x\\""', 'over-long tool name', 'over-long method', 'tools/call over-long tool name', 'batch'],
    );
    assert.equal(callKind('tools/call', 'x'.repeat(128)), `tools/call ${'x'.repeat(128)}`);
    assert.equal(callKind('m'.repeat(128), undefined), 'm'.repeat(128));
  });
});
