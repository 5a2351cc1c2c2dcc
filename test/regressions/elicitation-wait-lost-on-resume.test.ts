/**
 * Regression (review of trial 57 F3's fix, Medium): "the pause is lost when the host resumes
 * the stream". MCP 2025-11-25 lets a server close a call's SSE stream while it waits (the SDK's
 * `extra.closeSSEStream()`, SSE polling); the host resumes it with `Last-Event-ID`. The ids the
 * first stream waited for died with it, so the resumed stream ran its `sse_idle_timeout_ms`
 * while the human decided: the resume ended `local_error` `sse_idle` (~600 ms in) and the call,
 * which succeeds straight to the seller, failed.
 *
 * Now a request's stream that ends resumable (`resumable_end`) with its own requests to the host
 * outstanding leaves them to its call (routing/host-answer-waits.ts `park`), and a resume of that
 * call in the same session and seller endpoint waits for them, its idle clock paused.
 *
 * Input: a real MCP TypeScript SDK 1.x seller (McpServer, sessions, an event store) whose tool
 * `ask_close` elicits with `relatedRequestId` (on the call's stream), closes that stream 50 ms
 * later and answers with what the host said; the real SDK client, reconnecting after 100 ms,
 * answering the elicitation after 2000 ms; through the gateway on 127.0.0.1, agent `e` with
 * `sse_idle_timeout_ms: 600`. Before the fix: 1 of 1 test failed (the resume ended `sse_idle`,
 * the client got no result).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { RESUME_YAML, startObservedGateway } from '../support/hostile-seller.js';
import { OrderedEventStore } from '../support/sdk1/ordered-event-store.js';
import { connectElicitingHost } from '../helpers/eliciting-host.js';
import { agentsYaml } from '../helpers/gateway.js';
import { startSdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { withTimeout } from '../helpers/timeout.js';

const IDLE_MS = 600;

function newServer(): McpServer['server'] {
  const mcp = new McpServer({ name: 'elicit-seller', version: '1.0.0' });
  // Asks on the call's stream, then closes that stream while it waits (SSE polling, SEP-1699): the host resumes with Last-Event-ID.
  mcp.registerTool('ask_close', { description: 'asks, closes its stream' }, async (extra) => {
    const p = mcp.server.elicitInput({ message: 'Approve?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }, { relatedRequestId: extra.requestId });
    setTimeout(() => extra.closeSSEStream?.(), 50);
    const r = await p;
    return { content: [{ type: 'text', text: `approved: ${r.action}` }] };
  });
  return mcp.server;
}

const stack = useSellerAndGateway(
  () => startSdkSessionSeller(newServer, () => new OrderedEventStore()),
  (seller) => startObservedGateway(agentsYaml({ e: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } }, RESUME_YAML)),
);
const clients: Client[] = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
});

describe('elicitation-wait-lost-on-resume', { timeout: 30_000 }, () => {
  test('a call whose stream the seller closes while its elicitation awaits the host, resumed, waits for the answer', async () => {
    const client = await connectElicitingHost(stack.gateway.agentUrl('e'), stack.seller, 2000, clients, {
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
    });
    const r = (await withTimeout(client.callTool({ name: 'ask_close', arguments: {} }, undefined, { timeout: 8_000 }), 9_000, 'call').catch((e: unknown) => ({ thrown: String(e) }))) as {
      content?: { text?: string }[];
      thrown?: string;
    };
    assert.deepEqual(r, { content: [{ type: 'text', text: 'approved: accept' }] });
    // The call's stream ended resumable, and the resume (a GET with Last-Event-ID) ended with the call's response, not sse_idle.
    const calls = stack.gateway.lines.filter((x) => x.msg === 'exchange' && x.method === 'tools/call');
    assert.deepEqual(
      calls.map((x) => [x.http_method, x.outcome, x.reason]),
      [
        ['POST', 'resumable_end', null],
        ['GET', 'ok', null],
      ],
    );
  });
});
