/**
 * Regression (a new user's trial, 2026-12-03): a seller's answer holding both `result` and
 * `error` for the request's id was forwarded to the host. JSON-RPC 2.0 §5: "Either the
 * result member or error member MUST be included, but both members MUST NOT be included";
 * such a message is no response at all, and hosts disagree on which member to believe.
 *
 * Input: a raw seller answering a tools/call (id 7) with `{"jsonrpc":"2.0","id":7,
 * "result":{...},"error":{...}}`: as a JSON body (keys plain: the scan's fast path), as a
 * JSON body whose `id` key is escaped (`"\u0069d"`: the parse path), and as the one event of
 * an SSE stream.
 * Expected: in each case the host gets the gateway's `upstream_not_mcp` error for id 7 (a
 * tool error result with `structuredContent.adcp_error`), never the seller's message, and
 * the exchange line says `local_error` / `upstream_not_mcp`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';

const BOTH = '"result":{"content":[{"type":"text","text":"fine"}]},"error":{"code":-32000,"message":"failed"}}';
const ANSWERS: Record<string, { type: string; body: string }> = {
  json: { type: 'application/json', body: `{"jsonrpc":"2.0","id":7,${BOTH}` },
  escaped: { type: 'application/json', body: `{"jsonrpc":"2.0","\\u0069d":7,${BOTH}` },
  sse: { type: 'text/event-stream', body: `event: message\ndata: {"jsonrpc":"2.0","id":7,${BOTH}\n\n` },
};

describe('a seller answer with both result and error', () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const answer = ANSWERS[req.url.split('/')[1]!]!;
        res.writeHead(200, { 'content-type': answer.type }).end(answer.body);
      }),
    (seller) => startObservedGateway(agentsYaml(Object.fromEntries(Object.keys(ANSWERS).map((k) => [k, `${seller.url.replace(/\/mcp$/, '')}/${k}/mcp`])))),
  );

  for (const agent of Object.keys(ANSWERS)) {
    test(`${agent}: upstream_not_mcp for id 7, not the seller's message`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const r = await rawPost(stack.gateway.agentUrl(agent), toolCall(7, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(r.status, 200);
      const message = (agent === 'sse' ? sseMessages(r.text()).at(-1) : r.json()) as { id: unknown; error?: unknown; result: { isError: boolean; structuredContent: { adcp_error: { details: { reason: string } } } } };
      assert.deepEqual(
        { id: message.id, error: message.error, isError: message.result.isError, reason: message.result.structuredContent.adcp_error.details.reason },
        { id: 7, error: undefined, isError: true, reason: 'upstream_not_mcp' },
      );
      assert.equal(r.text().includes('"failed"'), false, "the seller's message never reaches the host");
      const line = await stack.gateway.exchangeLine(agent, 7, 10_000);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
    });
  }
});
