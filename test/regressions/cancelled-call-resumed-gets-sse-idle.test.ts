/**
 * Regression (hostile trial 55, F1): "a cancelled call still gets a made-up error for its id
 * once the MCP SDK client resumes". The host cancels a `tools/call` whose SSE stream carried an
 * event with an id (a resume token); the stream ends plainly (outcome `cancelled` at sse_idle,
 * `resumable_end` when the seller ends it); the MCP SDK
 * client, having had that event and no response, resumes it (GET, `Last-Event-ID`). The resume
 * was a new exchange that knew nothing of the cancellation: it went to the seller, which had
 * dropped the call and held the stream open, and at sse_idle_timeout_ms the host got
 * `{"jsonrpc":"2.0","id":1,"result":{..."adcp_error"..."reason":"sse_idle"...}}` for the id it
 * had dropped (the SDK client: "Received a response for an unknown message ID"), the exchange
 * line said `local_error` / `sse_idle` and `adcp_gateway_limit_breaches_total{reason="sse_idle"}`
 * counted it; a resume after the stream's sse_deadline_ms got `sse_deadline` the same way.
 *
 * Now the gateway remembers the cancellations of requests (seller url, session, id:
 * routing/cancelled-requests.ts) for as long as their resume tokens are honoured, and a resume
 * of a remembered one is not sent to the seller: HTTP 405 with `Allow`, no body (MCP Streamable
 * HTTP: a GET is answered with an SSE stream or 405, "the server does not offer an SSE stream at
 * this endpoint"), outcome `cancelled`, reason null, no breach. 405 is what the SDK client
 * (1.x) takes quietly: no error, no retry (an SSE stream ending empty makes it reconnect with a
 * plain GET, which the seller answers 409 while the session's standalone stream is open, three
 * times, each an error), and no connection is held for a request no one awaits.
 *
 * Input: (1) a raw seller on 127.0.0.1 answering each `tools/call` with one event `id: e<id>`
 * and ending the stream when the cancellation reaches it, holding any resume open; agent `r`
 * (sse_idle_timeout_ms 1000), agent `d` (sse_deadline_ms 1000, resumed past it). A control: a
 * call not cancelled whose stream drops is resumed at the seller as before. (2) trial 55's repro:
 * the SDK client, through the gateway, aborts a call to an SDK seller with sessions and an event
 * store (priming events with ids, MCP 2025-11-25), agent `s` (sse_idle_timeout_ms 1000).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { OrderedEventStore } from '../support/sdk1/ordered-event-store.js';
import { agentsYaml } from '../helpers/gateway.js';
import { resumeAnswer, sessionHost, startCutAndResumeSeller } from '../helpers/cut-and-resume.js';
import { sseIds } from '../helpers/raw.js';
import { startSdkSessionSeller, type SdkSessionSeller } from '../helpers/sdk-session-seller.js';
import { abortSlowSdkCall } from '../helpers/sdk-aborted-call.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const SESSION = 'session-f1';
const HEADERS = { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-06-18' };

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () =>
    startCutAndResumeSeller(
      // The control (22): its stream drops after the event, no cancellation; the others are held until cancelled.
      (id) => (id === 22 ? 'cut' : 'until-cancelled'),
      (req, res) => {
        // The control's resume gets its response; any other is held open (the seller dropped its call).
        if (req.headers['last-event-id'] === 'e22') {
          res.writeHead(200, { 'content-type': 'text/event-stream' }).end(resumeAnswer(22, 'e22r'));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': held\n\n');
      },
    ),
  (seller) =>
    startObservedGateway(
      agentsYaml(
        {
          r: { url: seller.url, sse_idle_timeout_ms: 1000 },
          d: { url: seller.url, sse_idle_timeout_ms: 1000, sse_deadline_ms: 1000 },
        },
        RESUME_YAML,
      ),
    ),
);
const host = sessionHost((agent) => stack.gateway.agentUrl(agent), HEADERS);
const { openCall, cancel } = host;

async function resume(agent: string, token: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const res = await host.resume(agent, token);
  const headers: Record<string, string> = {};
  for (const name of ['allow', 'cache-control', 'content-type', 'content-length']) {
    const v = res.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  return { status: res.status, headers, body: await withTimeout(res.text(), 5_000, 'resume body') };
}

const resumeLine = async (agent: string, id: number): Promise<unknown[]> => {
  const l = await stack.gateway.waitForLine((x) => x.msg === 'exchange' && x.agent === agent && x.rpc_id === id && x.http_method === 'GET');
  return [l.outcome, l.reason, l.status, l.upstream_status];
};

const resumesAtSeller = (token: string): number => stack.seller.requests.filter((r) => r.method === 'GET' && r.headers['last-event-id'] === token).length;

async function breaches(agent: string): Promise<string[]> {
  const text = await (await fetch(`${stack.gateway.baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('adcp_gateway_limit_breaches_total{') && l.includes(`agent="${agent}"`));
}

const NOT_RESUMED = { status: 405, headers: { allow: 'POST, GET, DELETE', 'cache-control': 'no-store', 'content-length': '0' }, body: '' };

describe('cancelled-call-resumed-gets-sse-idle', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a cancelled call ended plainly after its token; its resume is answered 405 at once, not sent, outcome cancelled', async () => {
    const call = await openCall('r', 20);
    const [token] = sseIds(call.first);
    assert.ok(token !== undefined && token.startsWith('agw1.'), call.first);
    assert.equal(await cancel('r', 20), 202);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the cancelled stream'), '', 'a plain end');
    // Ended by the seller after an event id: nothing was made up for it (`resumable_end`).
    assert.deepEqual([(await stack.gateway.exchangeLine('r', 20)).outcome], ['resumable_end']);
    assert.deepEqual(await resume('r', token), NOT_RESUMED);
    assert.deepEqual(await resumeLine('r', 20), ['cancelled', null, 405, null]);
    assert.equal(resumesAtSeller('e20'), 0, 'the seller got no resume');
    assert.deepEqual(await breaches('r'), []);
  });

  test('resumed after its sse_deadline_ms: 405 too, not sse_deadline', async () => {
    const call = await openCall('d', 21);
    const [token] = sseIds(call.first);
    assert.equal(await cancel('d', 21), 202);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the cancelled stream'), '');
    await new Promise((r) => setTimeout(r, 1_100)); // past the stream's sse_deadline_ms
    assert.deepEqual(await resume('d', token!), NOT_RESUMED);
    assert.deepEqual(await resumeLine('d', 21), ['cancelled', null, 405, null]);
    assert.deepEqual(await breaches('d'), []);
  });

  test('control: a call not cancelled, its stream dropped after its token, is resumed at the seller as before', async () => {
    const call = await openCall('r', 22);
    const [token] = sseIds(call.first);
    assert.equal(await withTimeout(call.rest, 5_000, 'end of the dropped stream'), '');
    const resumed = await resume('r', token!);
    assert.equal(resumed.status, 200);
    assert.match(resumed.body, /done 22/);
    assert.equal(resumesAtSeller('e22'), 1);
  });
});

// ---------------------------------------------------------------------------------------
// Trial 55's repro: the SDK client, an SDK seller with an event store.

/** An SDK 1.x seller (sessions, an event store) whose `slow` tool waits until its request is cancelled, then returns (the SDK sends nothing for it). */
function startSdkSeller(): Promise<SdkSessionSeller> {
  return startSdkSessionSeller(
    () => {
      const server = new Server({ name: 'resume-cancel-seller', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'slow', inputSchema: { type: 'object' as const } }, { name: 'echo', inputSchema: { type: 'object' as const } }] }));
      server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
        if (req.params.name === 'echo') return { content: [{ type: 'text', text: 'echo' }] };
        const until = Date.now() + 8_000;
        while (!extra.signal.aborted && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        return { content: [{ type: 'text', text: 'slow done' }] };
      });
      return server;
    },
    () => new OrderedEventStore(),
  );
}

describe('cancelled-call-resumed-gets-sse-idle: the MCP SDK client aborts a call, then resumes it', { timeout: TEST_TIMEOUT_MS }, () => {
  const sdk = useSellerAndGateway(startSdkSeller, (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1000 } }, RESUME_YAML)));
  const clients: Client[] = [];
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
  });

  test('no error for the cancelled id, no resume at the seller; the next call in the session works', async () => {
    const { client, errors } = await abortSlowSdkCall(sdk.gateway.agentUrl('s'), 2, clients);
    const posted = await sdk.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.http_method === 'POST');
    assert.deepEqual([posted.outcome, posted.reason], ['cancelled', 'sse_idle']);
    // The client resumes the stream it had a priming event on: answered at once, quietly.
    const resumed = await sdk.gateway.waitForLine((l) => l.msg === 'exchange' && l.method === 'tools/call' && l.http_method === 'GET');
    assert.deepEqual([resumed.rpc_id, resumed.outcome, resumed.reason, resumed.status], [posted.rpc_id, 'cancelled', null, 405]);
    const next = await withTimeout(client.callTool({ name: 'echo', arguments: {} }), 5_000, 'next call');
    assert.deepEqual(next.content, [{ type: 'text', text: 'echo' }]);
    assert.deepEqual(sdk.seller.gets.filter((id) => id !== null), [], 'no resume reached the seller');
    assert.deepEqual(errors, []);
  });
});
