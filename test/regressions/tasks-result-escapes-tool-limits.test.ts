/**
 * Reported (a new user's hostile trial, F7): a tool's per-tool limits do not apply when its
 * result is fetched with `tasks/result`. Per-tool limits match `params.name` of a `tools/call`
 * only; a task-augmented call's real result comes back through `tasks/result`, which names no
 * tool, so it gets the agent's limits (tool `tiny` at 500 bytes: its direct answer of 1500
 * bytes is refused, the same result through `tasks/result` passes under the agent's 3000).
 * Carrying a tool's limits to its task would need a taskId -> tool table (kept across
 * replicas and restarts); not built. Documented instead (docs/configuration.md,
 * "agents.<agent>.tools.<tool>"; README, under the revision table): `tasks/result` gets the
 * agent's limits, and a host may lower them per call with `X-Max-Response-Bytes`.
 * This test pins that behaviour.
 *
 * Input (raw seller on 127.0.0.1; agent max_response_bytes 3000, tool `tiny`
 * max_response_bytes 500): every request is answered with a 1500-byte JSON tool result for
 * its id.
 * Expectation: tools/call `tiny` gets RESPONSE_TOO_LARGE (limit_bytes 500); `tasks/result`
 * gets the seller's result byte for byte (the agent's 3000); `tasks/result` with
 * `X-Max-Response-Bytes: 500` gets RESPONSE_TOO_LARGE (limit_bytes 500), a tool error result
 * as for `tools/call`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponseOfSize } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const RESULT_BYTES = 1500;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const { id } = JSON.parse(req.body.toString()) as { id: number };
      const body = toolResponseOfSize(id, RESULT_BYTES);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 3000\n    tools:\n      tiny:\n        max_response_bytes: 500\n`),
);

interface ToolError {
  id: number;
  result: { isError: boolean; structuredContent: { adcp_error: { code: string; details: { limit_bytes: number } } } };
}

async function post(message: unknown, headers: Record<string, string> = {}): Promise<string> {
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), message, { ...HEADERS, ...headers }), undefined, 'the POST');
  assert.equal(r.status, 200);
  return r.text();
}

function assertTooLarge(text: string, id: number, limit: number): void {
  const m = JSON.parse(text) as ToolError;
  assert.equal(m.id, id);
  assert.equal(m.result.isError, true);
  assert.equal(m.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
  assert.equal(m.result.structuredContent.adcp_error.details.limit_bytes, limit);
}

const tasksResult = (id: number): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId: 'tk1' } });

describe("tasks/result gets the agent's limits, not the tool's", { timeout: TEST_TIMEOUT_MS }, () => {
  test("tools/call tiny: the tool's 500 bytes", async () => {
    assertTooLarge(await post(toolCall(1, 'tiny')), 1, 500);
  });

  test("tasks/result: the agent's 3000 bytes, the result as sent", async () => {
    assert.equal(await post(tasksResult(2)), toolResponseOfSize(2, RESULT_BYTES));
  });

  test('tasks/result with X-Max-Response-Bytes: 500: refused at 500, a tool error result', async () => {
    assertTooLarge(await post(tasksResult(3), { 'x-max-response-bytes': '500' }), 3, 500);
  });
});
