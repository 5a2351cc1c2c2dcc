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

function newServer(): McpServer['server'] {
  const mcp = new McpServer({ name: 'elicit-seller', version: '1.0.0' });
  // `server.elicitInput()`: the request goes on the standalone GET stream (a shared id).
  mcp.registerTool('ask', { description: 'asks on GET' }, async () => {
    const r = await mcp.server.elicitInput({ message: 'Approve?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }, { timeout: 20_000 });
    return { content: [{ type: 'text', text: `answered ${r.action}` }] };
  });
  // A seller that keeps its standalone GET stream alive (a notification every 100 ms, 200 at most).
  let n = 0;
  const t = setInterval(() => { if (++n > 200) clearInterval(t); void mcp.sendToolListChanged(); }, 100);
  t.unref();
  return mcp.server;
}

// The agent: idle 300 + deadline 400 (the GET stream's limits: its shared id was kept 700 ms); tool `ask`: its own deadline 5,000.
const stack = useSellerAndGateway(
  () => startSdkSessionSeller(newServer),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        e: { url: seller.url, sse_idle_timeout_ms: 300, sse_deadline_ms: 400, tools: '\n      ask:\n        sse_idle_timeout_ms: 300\n        sse_deadline_ms: 5000' },
      }),
    ),
);
const clients: Client[] = [];
after(async () => { for (const c of clients) await c.close().catch(() => undefined); });

const connect = (answerMs: number): Promise<Client> =>
  connectElicitingHost(stack.gateway.agentUrl('e'), stack.seller, answerMs, clients);
async function ask(c: Client): Promise<string | undefined> {
  const o = (await withTimeout(c.callTool({ name: 'ask', arguments: {} }, undefined, { timeout: 10_000 }), 10_000, 'ask'));
  return reasonOrText(o);
}

/**
 * Review of e863d18 (Low-Medium): a request the seller sends on the standalone GET stream (a
 * shared id) expired at the GET stream's `sse_idle_timeout_ms` + `sse_deadline_ms` (the agent's
 * limits). A tool with its own longer `sse_deadline_ms` then had its call's idle clock restarted
 * at that expiry, and the call ended `sse_idle` while the human still decided (before e863d18
 * it was answered). Now a shared id is kept to the largest idle limit + deadline among the
 * stream that carried it and the streams waiting for it.
 */
describe('shared-elicitation-expires-before-tool-deadline', { timeout: 30_000 }, () => {
  test("control: the host answers within the agent's idle + deadline", async () => {
    assert.equal(await ask(await connect(200)), 'answered accept');
  });
  test("the host answers at 1,500 ms, past the agent's 700 ms but within the tool's 5,000 ms deadline", async () => {
    assert.equal(await ask(await connect(1_500)), 'answered accept');
  });
});
