/**
 * Regression (trial 17, L1): "a cancelled call later gets a made-up upstream_reset error for an
 * id the client has already dropped". The MCP SDK client aborts a `tools/call` and sends
 * `notifications/cancelled` `{requestId}` in its session (a POST of its own); the gateway
 * forwards it and the seller, as MCP "Cancellation" asks, sends no response for that request
 * and ends its SSE stream (here at once; the SDK seller when the session is deleted). Directly,
 * the host's stream ends plainly. Through the gateway it ended with an isError
 * SERVICE_UNAVAILABLE `upstream_reset` result event for the cancelled id (the SDK logged
 * "Received a response for an unknown message ID"), the exchange line said `local_error` /
 * `upstream_reset` and `adcp_gateway_limit_breaches_total` counted it.
 *
 * Now the gateway keeps the single requests in flight by seller url (the agent's `url`),
 * `Mcp-Session-Id` and id (src/routing/in-flight-requests.ts); a cancellation in the same
 * session of the same seller marks the one it names (sent through another agent of that
 * seller url too: the seller's session is the same, so is its cancellation),
 * and an error the gateway would mint because the seller sent no answer (`upstream_reset`,
 * `sse_idle`, `deadline_exceeded`, ...) is not sent: the host's answer ends plainly, the
 * exchange line says outcome `cancelled` with the reason not minted, and no breach is counted
 * (src/errors/local-reply.ts endCancelled).
 *
 * Input (raw seller on 127.0.0.1; agent `s` with sse_idle_timeout_ms 1000, agent `j` with
 * response_deadline_ms 1000): a `tools/call` answered over SSE with one progress event (no
 * event id), then, after the host's `notifications/cancelled` reached the seller, the stream
 * ended without a response (or kept open: `sse_idle`); a `tools/call` never answered at all
 * (`deadline_exceeded`). Controls, still `upstream_reset`: no cancellation; a cancellation in
 * another session; no session (a stateless seller: not matched, by design); a cancellation
 * naming the id as a string `"12"` for the number 12. A cancellation naming 11 as `1.1e1`
 * matches (ids compare exactly by value, as response ids do). And the real SDK client against
 * an SDK seller without an event store (test/helpers/sdk-session-seller.ts): its error count
 * and the exchange line.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { startSdkSessionSeller, type SdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { abortSlowSdkCall } from '../helpers/sdk-aborted-call.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const PROTOCOL = { 'mcp-protocol-version': '2025-06-18' };
const PROGRESS_FRAME = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n`;

/** What the seller does with the open tools/call once a cancellation reaches it. */
let onCancel: 'end' | 'keep' = 'end';
/** The open tools/call answer (one at a time). */
let open: ServerResponse | undefined;
/** Answer no head at all to the next tools/call (the `deadline_exceeded` case). */
let noHead = false;

function answer(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body.toString('utf8')) as { method?: string };
  if (msg.method === 'tools/call') {
    open = res;
    if (noHead) return;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(PROGRESS_FRAME);
    return;
  }
  // A notification: accepted; a cancellation ends the open call without a response (MCP: the
  // receiver SHOULD NOT send one), whichever session or id it names (the seller does not check).
  res.writeHead(202).end();
  if (msg.method === 'notifications/cancelled' && onCancel === 'end') open?.end();
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1000 }, j: { url: seller.url, response_deadline_ms: 1000 } })),
);

interface OpenCall {
  readonly status: number;
  readonly type: string | null;
  /** Resolves once the progress event reached the host. */
  readonly progressed: Promise<void>;
  /** The whole body once the host's stream ends. */
  readonly body: Promise<string>;
}

/** POSTs tools/call `id` to agent `agent`, reading its SSE answer as it comes. */
async function openCall(agent: string, id: number, session: string | undefined): Promise<OpenCall> {
  const res = await fetch(stack.gateway.agentUrl(agent), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...PROTOCOL, ...(session ? { 'mcp-session-id': session } : {}) },
    body: JSON.stringify(toolCall(id, 'get_products')),
  });
  let text = '';
  let progressedNow: () => void = () => {};
  const progressed = new Promise<void>((resolve) => (progressedNow = resolve));
  const body = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes(PROGRESS_FRAME)) progressedNow();
    }
    return text;
  })();
  return { status: res.status, type: res.headers.get('content-type'), progressed, body };
}

/** POSTs `notifications/cancelled` naming `requestId` (its JSON text as written), in `session` (none when undefined). */
async function cancel(agent: string, requestIdText: string, session: string | undefined): Promise<void> {
  const r = await rawPost(stack.gateway.agentUrl(agent), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${requestIdText},"reason":"user"}}`, {
    ...PROTOCOL,
    ...(session ? { 'mcp-session-id': session } : {}),
  });
  assert.equal(r.status, 202);
}

const outcomeOf = async (agent: string, id: number): Promise<{ outcome: unknown; reason: unknown; status: unknown }> => {
  const line = await stack.gateway.exchangeLine(agent, id);
  return { outcome: line.outcome, reason: line.reason, status: line.status };
};

async function breachSeries(agent: string): Promise<string[]> {
  const text = await (await fetch(`${stack.gateway.baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('adcp_gateway_limit_breaches_total{') && l.includes(`agent="${agent}"`));
}

/** The error events after the progress event: [id, details.reason] of each. */
function errorEvents(body: string): Array<[unknown, unknown]> {
  assert.ok(body.startsWith(PROGRESS_FRAME), body);
  return sseMessages(body.slice(PROGRESS_FRAME.length)).map((m) => {
    const msg = m as { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { details: { reason: unknown } } } } };
    assert.equal(msg.result.isError, true);
    return [msg.id, msg.result.structuredContent.adcp_error.details.reason];
  });
}

describe('a call the host cancelled gets no made-up error for its id', { timeout: TEST_TIMEOUT_MS }, () => {
  test('cancelled in its session, the seller ends the stream without a response: the host stream ends plainly, outcome cancelled', async () => {
    onCancel = 'end';
    const call = await openCall('s', 7, 'session-a');
    assert.deepEqual([call.status, call.type], [200, 'text/event-stream']);
    await withTimeout(call.progressed, 5_000, 'progress event');
    await cancel('s', '7', 'session-a');
    assert.equal(await withTimeout(call.body, 5_000, 'end of stream'), PROGRESS_FRAME, 'the progress event and a plain end, no error event');
    assert.deepEqual(await outcomeOf('s', 7), { outcome: 'cancelled', reason: 'upstream_reset', status: 200 });
  });

  for (const [label, id, cancelAgent, idText] of [
    ['the cancellation names 11 written 1.1e1: the same id, cancelled', 11, 's', '1.1e1'],
    // Agent `j` has the seller url of `s`: the seller's session, so the cancellation, is the same.
    ["cancelled through another agent of the same seller url (its session and ids are the seller's): cancelled", 15, 'j', '15'],
  ] as const) {
    test(label, async () => {
      onCancel = 'end';
      const call = await openCall('s', id, 'session-a');
      await withTimeout(call.progressed, 5_000, 'progress event');
      await cancel(cancelAgent, idText, 'session-a');
      assert.equal(await withTimeout(call.body, 5_000, 'end of stream'), PROGRESS_FRAME);
      assert.deepEqual(await outcomeOf('s', id), { outcome: 'cancelled', reason: 'upstream_reset', status: 200 });
    });
  }

  test('cancelled, the seller keeps the stream open: it ends plainly at sse_idle, outcome cancelled', async () => {
    onCancel = 'keep';
    const call = await openCall('s', 13, 'session-a');
    await withTimeout(call.progressed, 5_000, 'progress event');
    await cancel('s', '13', 'session-a');
    assert.equal(await withTimeout(call.body, 5_000, 'end of stream'), PROGRESS_FRAME);
    assert.deepEqual(await outcomeOf('s', 13), { outcome: 'cancelled', reason: 'sse_idle', status: 200 });
    open?.destroy();
    onCancel = 'end';
  });

  test('cancelled before any answer head, the deadline runs out: HTTP 200, an empty SSE stream, outcome cancelled', async () => {
    noHead = true;
    onCancel = 'keep';
    try {
      const before = stack.seller.requests.length;
      const posted = openCall('j', 14, 'session-a');
      const until = Date.now() + 5_000;
      while (stack.seller.requests.length === before && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      await cancel('j', '14', 'session-a');
      const call = await posted;
      assert.deepEqual([call.status, call.type, await withTimeout(call.body, 5_000, 'end of stream')], [200, 'text/event-stream', '']);
      assert.deepEqual(await outcomeOf('j', 14), { outcome: 'cancelled', reason: 'deadline_exceeded', status: 200 });
      assert.deepEqual(await breachSeries('j'), []);
    } finally {
      noHead = false;
      onCancel = 'end';
      open?.destroy();
    }
  });

  for (const [label, id, callSession, cancelSession, idText] of [
    ['no cancellation', 8, 'session-a', undefined, undefined],
    ['a cancellation in another session', 9, 'session-a', 'session-b', '9'],
    ['no session on either (a stateless seller): not matched', 10, undefined, undefined, '10'],
    ['a cancellation naming the string "12" for the number 12', 12, 'session-a', 'session-a', '"12"'],
  ] as const) {
    test(`control, ${label}: the stream ends with upstream_reset for the id`, async () => {
      onCancel = 'end';
      const call = await openCall('s', id, callSession);
      await withTimeout(call.progressed, 5_000, 'progress event');
      if (idText === undefined) open?.end();
      else await cancel('s', idText, cancelSession);
      assert.deepEqual(errorEvents(await withTimeout(call.body, 5_000, 'end of stream')), [[id, 'upstream_reset']]);
      assert.deepEqual(await outcomeOf('s', id), { outcome: 'local_error', reason: 'upstream_reset', status: 200 });
    });
  }

  test('limit breaches: only the controls count', async () => {
    assert.deepEqual(await breachSeries('s'), ['adcp_gateway_limit_breaches_total{agent="s",reason="upstream_reset"} 4']);
  });
});

// ---------------------------------------------------------------------------------------
// The real SDK client (trial 17's repro): a seller built with the SDK server, no event store.

/** An SDK 1.x seller (sessions, no event store) whose `slow` tool waits until its request is cancelled (or 4 s), then returns. */
function startSdkSeller(): Promise<SdkSessionSeller> {
  return startSdkSessionSeller(() => {
    const server = new Server({ name: 'cancel-seller', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'slow', inputSchema: { type: 'object' as const } }] }));
    server.setRequestHandler(CallToolRequestSchema, async (_req, extra) => {
      const until = Date.now() + 4_000;
      while (!extra.signal.aborted && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return { content: [{ type: 'text', text: 'slow done' }] };
    });
    return server;
  });
}

describe('the MCP SDK client aborts a call through the gateway', { timeout: TEST_TIMEOUT_MS }, () => {
  const sdk = useSellerAndGateway(startSdkSeller, (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url } })));
  const clients: Client[] = [];
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
  });

  test('no error for the cancelled id after the session is deleted; the exchange ends cancelled', async () => {
    const { transport, errors } = await abortSlowSdkCall(sdk.gateway.agentUrl('s'), 0, clients);
    const cancelLine = await sdk.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'notifications/cancelled');
    assert.equal(cancelLine.status, 202);
    await new Promise((r) => setTimeout(r, 200));
    await transport.terminateSession();
    const line = await sdk.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'cancelled', reason: 'upstream_reset', status: 200 });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      errors.filter((e) => e.includes('unknown message ID')),
      [],
      'no response for the cancelled id reached the client',
    );
  });
});
