/**
 * Checks shared by the regressions whose raw seller answers a `tools/call` with a message the
 * gateway must judge (case-variant-member-names-accepted, response-with-repeated-id-member-accepted).
 */
import assert from 'node:assert/strict';
import { expectedErrorFrame, expectedErrorJson, type ObservedGateway } from '../support/hostile-seller.js';
import { rawPost, toolCall } from './raw.js';

/**
 * Calls `tool` with JSON-RPC id `id` on agent `seller` and checks that the host got upstream_not_mcp
 * for that id (as JSON for a tool named `json…`, as an SSE frame otherwise), HTTP 200, and the
 * exchange line says local_error with the bytes the host got.
 */
export async function assertToolCallUpstreamNotMcp(gw: ObservedGateway, tool: string, id: number, headers: Record<string, string>): Promise<void> {
  const r = await rawPost(gw.agentUrl('seller'), toolCall(id, tool), headers);
  const expected = { id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
  assert.equal(r.status, 200);
  assert.equal(r.text(), tool.startsWith('json') ? expectedErrorJson(expected) : expectedErrorFrame(expected));
  const line = await gw.exchangeLine('seller', id);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
}

/** Calls `tool` with id `id` on agent `seller` and checks the host got `text` byte for byte, HTTP 200, and the exchange line says ok. */
export async function assertToolCallPassed(gw: ObservedGateway, tool: string, id: number, headers: Record<string, string>, text: string): Promise<void> {
  const r = await rawPost(gw.agentUrl('seller'), toolCall(id, tool), headers);
  assert.equal(r.status, 200);
  assert.equal(r.text(), text);
  const line = await gw.exchangeLine('seller', id);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
}
