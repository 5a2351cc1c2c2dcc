/**
 * Regression (hostile trial 57, F3, Low): "`sse_idle_timeout_ms` runs while the seller is
 * waiting for the host, breaking elicitation". A tool that asks its host for input
 * (`elicitation/create`, a server-to-client request sent on the call's SSE stream) is silent
 * until the host answers it (a separate POST carrying the JSON-RPC response for that id in the
 * same session). A host taking longer than `sse_idle_timeout_ms` to answer (a human approving)
 * got `adcp_error` SERVICE_UNAVAILABLE `sse_idle` through the gateway, where the same call
 * straight to the seller succeeded: with the default (5 minutes), any approval longer than that
 * failed.
 *
 * Now, while a stream has a server-to-client request outstanding (a message with a `method` and
 * an `id` the seller sent on it, or on a stream answering no call, such as the standalone GET
 * stream, where the SDK's `server.elicitInput()` sends it), its idle clock is paused until the
 * host POSTs the response for that id in the same session and seller endpoint, then restarted
 * from then (routing/host-answer-waits.ts; response/sse-stream-timers.ts). The stream's
 * `sse_deadline_ms` still runs meanwhile.
 *
 * Input: a real MCP TypeScript SDK 1.x seller (McpServer, sessions) whose tool `ask` calls
 * `elicitInput` (sent on the session's standalone GET stream, as in the trial) and answers with
 * what the host said, `ask_here` the same with `relatedRequestId` (sent on the call's own
 * stream), `ask_here_then_sleep` that, then 1500 ms of silence, and `sleep` 1500 ms of silence
 * without asking anything; the real SDK client with an elicitation handler answering after a
 * delay; through the gateway on 127.0.0.1, agent `e` with `sse_idle_timeout_ms: 600`, agent `d`
 * with that and `sse_deadline_ms: 1000`. Before the fix the first two cases failed (sse_idle),
 * and so did the last (sse_idle came before its deadline).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { connectElicitingHost } from '../helpers/eliciting-host.js';
import { startSdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const IDLE_MS = 600;
/** Longer than IDLE_MS: the host's answer comes after the idle limit. */
const SLOW_ANSWER_MS = 1500;
const SILENT_MS = 1500;
const DEADLINE_MS = 1000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function newServer(): McpServer['server'] {
  const mcp = new McpServer({ name: 'elicit-seller', version: '1.0.0' });
  const ask = async (relatedRequestId?: string | number): Promise<string> => {
    const r = await mcp.server.elicitInput(
      { message: 'Approve?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
      relatedRequestId === undefined ? undefined : { relatedRequestId },
    );
    return `approved: ${r.action} ${JSON.stringify(r.content)}`;
  };
  mcp.registerTool('ask', { description: 'asks the host on the standalone GET stream' }, async () => ({ content: [{ type: 'text', text: await ask() }] }));
  mcp.registerTool('ask_here', { description: "asks the host on the call's stream" }, async (extra) => ({ content: [{ type: 'text', text: await ask(extra.requestId) }] }));
  mcp.registerTool('ask_here_then_sleep', { description: 'asks, then is silent' }, async (extra) => {
    const text = await ask(extra.requestId);
    await sleep(SILENT_MS);
    return { content: [{ type: 'text', text }] };
  });
  mcp.registerTool('sleep', { description: 'silent' }, async () => {
    await sleep(SILENT_MS);
    return { content: [{ type: 'text', text: 'slept' }] };
  });
  return mcp.server;
}

const stack = useSellerAndGateway(
  () => startSdkSessionSeller(newServer),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        e: { url: seller.url, sse_idle_timeout_ms: IDLE_MS },
        d: { url: seller.url, sse_idle_timeout_ms: IDLE_MS, sse_deadline_ms: DEADLINE_MS },
      }),
    ),
);

const clients: Client[] = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
});

/** An eliciting host connected to agent `agent`, answering each elicitation after `answerMs`. */
const connect = (agent: string, answerMs: number): Promise<Client> =>
  connectElicitingHost(stack.gateway.agentUrl(agent), stack.seller, answerMs, clients);

async function call(client: Client, name: string): Promise<unknown> {
  return withTimeout(client.callTool({ name, arguments: {} }, undefined, { timeout: 10_000 }), 10_000, name);
}

/** The reason of the `adcp_error` in a minted tool error result (docs/errors.md), else the result. */
function adcpReason(result: unknown): unknown {
  const r = result as { isError?: boolean; structuredContent?: { adcp_error?: { code?: string; details?: { reason?: string } } } };
  return r.isError === true ? [r.structuredContent?.adcp_error?.code, r.structuredContent?.adcp_error?.details?.reason] : result;
}

async function callLine(agent: string, tool: string): Promise<unknown[]> {
  const l = await stack.gateway.waitForLine((x) => x.msg === 'exchange' && x.agent === agent && x.tool === tool && x.http_method === 'POST', 5_000);
  return [l.outcome, l.reason];
}

describe('elicitation-wait-hits-sse-idle', { timeout: TEST_TIMEOUT_MS }, () => {
  test("the host answers the elicitation (on the GET stream) after sse_idle_timeout_ms: the call succeeds", async () => {
    const client = await connect('e', SLOW_ANSWER_MS);
    assert.deepEqual(await call(client, 'ask'), { content: [{ type: 'text', text: 'approved: accept {"ok":true}' }] });
    assert.deepEqual(await callLine('e', 'ask'), ['ok', null]);
  });

  test("the host answers the elicitation (on the call's stream) after sse_idle_timeout_ms: the call succeeds", async () => {
    const client = await connect('e', SLOW_ANSWER_MS);
    assert.deepEqual(await call(client, 'ask_here'), { content: [{ type: 'text', text: 'approved: accept {"ok":true}' }] });
    assert.deepEqual(await callLine('e', 'ask_here'), ['ok', null]);
  });

  test('a seller silent with no server request outstanding still gets sse_idle', async () => {
    const client = await connect('e', 0);
    assert.deepEqual(adcpReason(await call(client, 'sleep')), ['SERVICE_UNAVAILABLE', 'sse_idle']);
    assert.deepEqual(await callLine('e', 'sleep'), ['local_error', 'sse_idle']);
  });

  test('once the host has answered, the idle clock runs again: silent after the answer, sse_idle', async () => {
    const client = await connect('e', 0);
    assert.deepEqual(adcpReason(await call(client, 'ask_here_then_sleep')), ['SERVICE_UNAVAILABLE', 'sse_idle']);
    assert.deepEqual(await callLine('e', 'ask_here_then_sleep'), ['local_error', 'sse_idle']);
  });

  test('the pause does not outlast the stream: sse_deadline_ms still ends it', async () => {
    const client = await connect('d', SLOW_ANSWER_MS);
    assert.deepEqual(adcpReason(await call(client, 'ask')), ['SERVICE_UNAVAILABLE', 'sse_deadline']);
    assert.deepEqual(await callLine('d', 'ask'), ['local_error', 'sse_deadline']);
  });
});
