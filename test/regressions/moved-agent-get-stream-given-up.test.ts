/**
 * Regression (hostile trial 36, F2): a reload that moved an agent (its `url` at another
 * resource) ended its standalone GET streams, resumable (outcome `resumable_end`, reason
 * `agent_url_changed`: routing/open-streams.ts), and the MCP TypeScript SDK client (1.32)
 * resumed its GET stream with the last token, signed for the old url: refused 400
 * `resume_token_invalid` twice, it stopped the stream ("Maximum reconnection attempts (2)
 * exceeded"). Its calls went on at the new seller, but the seller's server-initiated messages
 * no longer reached it until the host connected again by hand.
 *
 * Now a `Last-Event-ID` that is a standalone GET stream's token, valid except that it was
 * signed for a url the agent had before a reload moved it (resume/previous-urls.ts: the last
 * few per agent, in memory), is served as a fresh standalone GET stream at the new seller: no
 * `Last-Event-ID` sent to it (the old seller's event id means nothing there), the host's
 * `Mcp-Session-Id` passed on as sent, the exchange line marked `resume_url_moved: true`. A
 * request's stream resumed so is still refused (resume-after-repoint-goes-to-new-seller).
 *
 * Input: two real MCP SDK 1.x servers, stateless (a server per request, as the SDK's
 * stateless example: either serves any host request, so calls go on after the move as in the
 * trial), each with the standalone GET stream (its events with ids); the real gateway with a
 * resume secret, agent `acme` at seller A, reloaded from its file as a SIGHUP does; the real
 * SDK 1.x client (its default 2 reconnection attempts) through the gateway.
 * Expected: after the reload moves `acme` to seller B, the client's GET stream reopens at
 * seller B by itself (B gets a GET without `Last-Event-ID`), the client receives B's
 * `notifications/message`, no "Maximum reconnection attempts" error, and a call answers from B.
 *
 * The session (second test): with stateful SDK sellers (test/support/sdk1/seller.ts) the new
 * seller does not know the host's session. The gateway passes the host's `Mcp-Session-Id` on
 * (it owns no session; a seller sharing sessions with the old one serves it) and the new
 * seller answers 404 `Session not found`, passed to the host. The SDK 1.32 client does not
 * start a new session on a 404 (neither for the GET nor for a call): its calls fail 404 too,
 * and the host must connect again, as after any seller change that loses sessions.
 */
import { until } from '../helpers/raw-stack.js';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createReloader, type Reloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { rewriteAndReload } from '../helpers/config-reload.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { startSdk1Seller, type Sdk1Seller } from '../support/sdk1/seller.js';
import { startStatelessSdk1Seller, type StatelessSdk1Seller } from '../support/sdk1/stateless-seller.js';

const SECRET = 'moved-agent-get-stream-given-up-0123456789abcdef';

const yaml = (url: string): string => ['log_level: info', 'resume:', `  secret: ${SECRET}`, 'agents:', '  acme:', `    url: ${url}`, ''].join('\n');


/** A gateway in front of `first`, with its config file and the reloader a SIGHUP runs. */
async function gatewayWithFile(first: string): Promise<{ gw: ObservedGateway; moveTo(url: string): Promise<void>; close(): Promise<void> }> {
  const gw = await startObservedGateway(yaml(first));
  const dir = await mkdtemp(join(tmpdir(), 'gw-moved-'));
  const file = join(dir, 'gateway.yaml');
  await writeFile(file, yaml(first));
  const reloader: Reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: captureLog().logger, watch: false });
  return {
    gw,
    moveTo: (url) => rewriteAndReload(file, yaml(url), reloader),
    async close() {
      reloader.close();
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The real SDK 1.x client through the gateway: its default 2 reconnection attempts, short delays; the errors it reports. */
function sdkClient(url: string): { client: Client; transport: StreamableHTTPClientTransport; errors: string[] } {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
  const client = new Client({ name: 'moved-agent-host', version: '1.0.0' });
  const errors: string[] = [];
  client.onerror = (err) => void errors.push(err.message);
  return { client, transport, errors };
}

describe('moved-agent-get-stream-given-up', { timeout: TEST_TIMEOUT_MS }, () => {
  describe('stateless sellers: the reported failure', () => {
    let sellerA: StatelessSdk1Seller;
    let sellerB: StatelessSdk1Seller;
    let stack: Awaited<ReturnType<typeof gatewayWithFile>>;
    before(async () => {
      sellerA = await startStatelessSdk1Seller('A');
      sellerB = await startStatelessSdk1Seller('B');
      stack = await gatewayWithFile(sellerA.url);
    });
    after(async () => {
      await stack.close();
      await sellerA.close();
      await sellerB.close();
    });

    test("after a reload moves the agent, the SDK client's GET stream goes on at the new seller by itself", async () => {
      const { client, transport, errors } = sdkClient(stack.gw.agentUrl('acme'));
      const messages: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(String(n.params.data)));
      try {
        await withTimeout(client.connect(transport), undefined, 'connect');
        await until("the client's GET stream at seller A", () => sellerA.openGetStreams() === 1);
        assert.equal(await sellerA.notify('before the move'), 1);
        await until("seller A's notification", () => messages.includes('A: before the move'));

        const getsAtB = (): number => sellerB.requests.filter((r) => r.method === 'GET').length;
        await stack.moveTo(sellerB.url);
        const ended = await stack.gw.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.reason === 'agent_url_changed');
        assert.equal(ended.outcome, 'resumable_end');

        // The client's resume, with its last token (seller A's), opens a GET stream at seller B.
        await until("the client's GET stream at seller B", () => sellerB.openGetStreams() === 1 || errors.some((e) => e.startsWith('Maximum reconnection attempts')));
        assert.deepEqual(errors.filter((e) => e.startsWith('Maximum reconnection attempts')), [], 'the client did not give up its GET stream');
        assert.equal(sellerB.openGetStreams(), 1);
        assert.equal(getsAtB(), 1);
        const get = sellerB.requests.find((r) => r.method === 'GET')!;
        assert.equal(get.headers['last-event-id'], undefined, "seller A's event id does not reach seller B");
        // Its exchange line is written when it ends: it is open.
        assert.equal(stack.gw.lines.some((l) => l.msg === 'exchange' && l.resume_url_moved === true), false);

        assert.equal(await sellerB.notify('after the move'), 1);
        await until("seller B's notification", () => messages.includes('B: after the move'));
        assert.deepEqual(messages, ['A: before the move', 'B: after the move']);

        // Calls go on, at seller B.
        const result = await withTimeout(client.callTool({ name: 'whoami' }), undefined, 'the call');
        assert.deepEqual(result.content, [{ type: 'text', text: 'seller B' }]);
      } finally {
        await client.close();
      }
      // Closed by the host: its exchange line says it was a moved resume.
      const line = await stack.gw.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.resume_url_moved === true);
      assert.deepEqual(
        { agent: line.agent, rpc_kind: line.rpc_kind, status: line.status, upstream_status: line.upstream_status, outcome: line.outcome },
        { agent: 'acme', rpc_kind: 'none', status: 200, upstream_status: 200, outcome: 'ok' },
      );
    });
  });

  describe('stateful sellers: the host session goes to the new seller as sent', () => {
    let sellerA: Sdk1Seller;
    let sellerB: Sdk1Seller;
    let stack: Awaited<ReturnType<typeof gatewayWithFile>>;
    before(async () => {
      sellerA = await startSdk1Seller();
      sellerB = await startSdk1Seller();
      stack = await gatewayWithFile(sellerA.url);
    });
    after(async () => {
      await stack.close();
      await sellerA.close();
      await sellerB.close();
    });

    test('the fresh GET carries the Mcp-Session-Id; the new seller answers 404, passed on; the SDK client starts no new session', async () => {
      const { client, transport, errors } = sdkClient(stack.gw.agentUrl('acme'));
      let listChanged = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
      try {
        await withTimeout(client.connect(transport), undefined, 'connect');
        const session = transport.sessionId;
        assert.ok(session !== undefined);
        await until("the client's GET stream at seller A", () => sellerA.requests.some((r) => r.method === 'GET'));
        // An event with an id on the GET stream, so the client holds a token of it.
        for (let i = 0; i < 100 && listChanged === 0; i++) {
          await sellerA.notifyToolListChanged();
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(listChanged > 0);

        await stack.moveTo(sellerB.url);
        await until('the resume at seller B', () => sellerB.requests.some((r) => r.method === 'GET'));
        const get = sellerB.requests.find((r) => r.method === 'GET')!;
        assert.equal(get.headers['last-event-id'], undefined);
        assert.equal(get.headers['mcp-session-id'], session);
        const line = await stack.gw.waitForLine((l) => l.msg === 'exchange' && l.http_method === 'GET' && l.resume_url_moved === true);
        assert.deepEqual({ status: line.status, upstream_status: line.upstream_status }, { status: 404, upstream_status: 404 });

        // The SDK 1.32 client retries the GET (each a 404), then gives it up; a call fails 404 too.
        await until('the client giving up its GET stream', () => errors.some((e) => e.startsWith('Maximum reconnection attempts')));
        await assert.rejects(client.callTool({ name: 'list_products' }), /Session not found/);
        assert.equal(transport.sessionId, session, 'no new session');
      } finally {
        await client.close();
      }
    });
  });
});
