/**
 * Regression (a review of the request side, M2): the backoff kept an entry per call kind keyed
 * by the host's tool name (or method) verbatim, with no length cap (admission/agent-guard.ts
 * `callKind`, `breakerForBreach`): up to 64 per agent once they breached, each name up to
 * `max_request_bytes`. 64 `tools/call` with distinct ~4 MiB names, each answered over
 * `max_response_bytes`, kept ~226 MB of heap. Now a tool name longer than the longest one the
 * config accepts (128 characters: config/schema.ts TOOL_NAME_PATTERN) is no kind of its own:
 * every such tool shares one kind (`over-long tool name`), as every such method shares
 * another, so the names are not kept and their breaches count together.
 *
 * Input: a raw seller answering every call with a 5,000-byte result; agent `b` with
 * `max_response_bytes: 1000`, `backoff_after_breaches: 2`, a 60 s backoff and a 1 s
 * `response_deadline_ms`. In turn: `tools/call` of tool A (129 characters), B (100,000), C
 * (128), D (1,001): A, B and C differ in their first character.
 * Expected: A, B, C reach the seller and breach (`raw_bytes`); A and B are one kind, which backs off after
 * them (C, at the config's longest, is a kind of its own); D shares it and is answered
 * `agent_backoff` without being sent; `adcp_gateway_agent_calls_backing_off{agent="b"}` is 1.
 * No timing asserted (D's answer comes at its deadline).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callKind } from '../../src/admission/agent-guard.js';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const A = 'a'.repeat(129);
const B = 'b'.repeat(100_000);
const C = 'c'.repeat(128);
const D = 'd'.repeat(1_001);

/** The `details.reason` of the gateway's tool-result error `text`. */
function reasonOf(text: string): string {
  return (JSON.parse(text) as { result: { structuredContent: { adcp_error: { details: { reason: string } } } } }).result.structuredContent.adcp_error.details.reason;
}

describe('tool names longer than the config accepts share one backoff kind', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
        res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [{ type: 'text', text: 'y'.repeat(5_000) }] }));
      }),
    (seller) =>
      startGateway(
        agentsYaml({ b: { url: seller.url, max_response_bytes: 1000, backoff_after_breaches: 2, backoff_base_ms: 60000, backoff_max_ms: 60000, response_deadline_ms: 1000 } }, ['log_level: silent']),
      ),
  );

  test('two over-long names breach as one kind, which then holds back a third; a 128-character name is a kind of its own', async () => {
    const call = async (id: number, name: string): Promise<string> => {
      const res = await withTimeout(rawPost(stack.gateway.agentUrl('b'), toolCall(id, name), { 'mcp-protocol-version': '2025-06-18' }));
      assert.equal(res.status, 200);
      return reasonOf(res.text());
    };
    assert.deepEqual([await call(1, A), await call(2, B), await call(3, C), await call(4, D)], ['raw_bytes', 'raw_bytes', 'raw_bytes', 'agent_backoff']);
    const sent = stack.seller.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { params: { name: string } }).params.name);
    assert.deepEqual(
      sent.map((name) => `${name[0]}${name.length}`),
      ['a129', 'b100000', 'c128'],
      'D was not sent',
    );
    assert.equal(callKind('tools/call', A), callKind('tools/call', D));
    assert.equal(stack.gateway.app.gateway.guard.isBackingOff('b', callKind('tools/call', B)), true);
    assert.equal(stack.gateway.app.gateway.guard.isBackingOff('b', callKind('tools/call', C)), false);
    const metrics = await (await withTimeout(fetch(`${stack.gateway.baseUrl}/metrics`))).text();
    assert.match(metrics, /^adcp_gateway_agent_calls_backing_off\{agent="b"\} 1$/m);
  });
});
