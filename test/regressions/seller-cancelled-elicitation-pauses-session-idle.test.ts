import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectElicitingHost, reasonOrText } from '../helpers/eliciting-host.js';
import { startSdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { withTimeout } from '../helpers/timeout.js';

const IDLE_MS = 600;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function newServer(): McpServer['server'] {
  const mcp = new McpServer({ name: 'elicit-seller', version: '1.0.0' });
  // The SDK's own request timeout (60 s by default; 300 ms here): it sends notifications/cancelled, the client then never answers.
  mcp.registerTool('ask_timeout', { description: 'asks on GET, gives up' }, async () => {
    try {
      await mcp.server.elicitInput({ message: 'Approve?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }, { timeout: 300 });
      return { content: [{ type: 'text', text: 'answered' }] };
    } catch (e) {
      return { content: [{ type: 'text', text: `gave up: ${(e as Error).message}` }] };
    }
  });
  mcp.registerTool('sleep', { description: 'silent' }, async () => {
    await sleep(1500);
    return { content: [{ type: 'text', text: 'slept' }] };
  });
  // A seller that keeps its standalone GET stream alive (a notification every 200 ms, 200 at most).
  let n = 0;
  const t = setInterval(() => { if (++n > 200) clearInterval(t); void mcp.sendToolListChanged(); }, 200);
  t.unref();
  return mcp.server;
}

const stack = useSellerAndGateway(
  () => startSdkSessionSeller(newServer),
  (seller) => startObservedGateway(agentsYaml({ e: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } })),
);
const clients: Client[] = [];
after(async () => { for (const c of clients) await c.close().catch(() => undefined); });

const connect = (answerMs: number): Promise<Client> =>
  connectElicitingHost(stack.gateway.agentUrl('e'), stack.seller, answerMs, clients);
const call = (c: Client, name: string) => withTimeout(c.callTool({ name, arguments: {} }, undefined, { timeout: 10_000 }), 10_000, name);
const reason = reasonOrText;

/**
 * Review of hostile trial 57 F3's fix: a seller's request to the host on the standalone GET
 * stream (`server.elicitInput()`) that the seller then gave up on (the SDK's request timeout:
 * `notifications/cancelled`, which the host SHOULD NOT answer) stayed awaited, so every later
 * stream of the session had its idle clock paused: a silent call there ran to sse_deadline_ms
 * instead of ending with `sse_idle`. The seller's cancellation now ends the wait.
 */
describe('seller-cancelled-elicitation-pauses-session-idle', { timeout: 30_000 }, () => {
  test('control: a silent call gets sse_idle', async () => {
    const c = await connect(0);
    assert.equal(reason(await call(c, 'sleep')), 'sse_idle');
  });
  test('after the seller cancels its own elicitation (SDK timeout), a later silent call of the session still gets sse_idle', async () => {
    const c = await connect(15_000); // a human slower than the seller's timeout
    assert.match(reason(await call(c, 'ask_timeout')) ?? '', /^gave up: /);
    const cancels = stack.seller.messages.filter((m) => (m as { method?: unknown }).method === 'notifications/cancelled');
    assert.equal(cancels.length, 0, 'the seller cancels its own request to the host, not the host');
    assert.equal(reason(await call(c, 'sleep')), 'sse_idle');
  });
});
