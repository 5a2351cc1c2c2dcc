/**
 * Regression (hostile trial 57, F4, Low): a request waiting out its agent's backoff was still
 * sent after a config reload removed its agent. One call broke the agent's bound (the backoff
 * began), a second call waited for its turn, the config file was swapped for one without the
 * agent (`config reloaded`, `removed: ["a"]`), and ~4 s later, when the backoff ended, the
 * waiting call went to the removed agent's seller with the old config (its headers included),
 * while requests pipelined behind another answer at that moment got 404 `unknown_agent` at
 * their turn (routing/handler.ts: they read the config in force then).
 *
 * Now a request is resolved when the gateway takes it up (its exchange starts: at arrival, or
 * at its pipelined turn) and keeps that config, as any exchange in flight does, but it is
 * never sent to a seller the config no longer gives its agent: a reload that removes its agent
 * answers every request waiting for that agent's backoff at once with the 404 `unknown_agent`
 * a request arriving then gets (the same body, its id echoed as written), and one that moves
 * the agent to another `url` answers them `agent_url_changed` (not sent: the old seller was
 * left, and the old headers must not go to the new one). A reload that keeps the agent at its
 * url (its headers or limits changed) leaves them waiting: each is sent at its turn as it was
 * resolved (docs/configuration.md, "Reload").
 *
 * Input: raw sellers on 127.0.0.1; the real gateway with its config file, reloaded as a SIGHUP
 * does. Agents `a`, `c` and `d` at seller 1, each with max_response_bytes 1000 and a backoff
 * after one breach (30 s for `a` and `c`, 1.5 s for `d`); the `big` tool answers 5,000 bytes.
 * Expected: exact bodies below; the seller never receives the waiting calls of `a` and `c`;
 * no request is left waiting in the guard. Before the fix: 2 of the 3 tests failed (the waiting
 * calls were still waiting 5 s after the reload: their backoff had 25 s to go).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createReloader, type Reloader } from '../../src/reload.js';
import { captureLog } from '../helpers/capture-log.js';
import { rewriteAndReload } from '../helpers/config-reload.js';
import { agentsYaml, type AgentYaml } from '../helpers/gateway.js';
import { rawPost, toolCall, type RawResponse } from '../helpers/raw.js';
import { until } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const BIG = 'tools/call big';
/** An id past 2^53: its refusal must echo it as written, not as a rounded double. */
const BIG_ID = '12345678901234567890';

function answer(req: SeenRequest, res: ServerResponse): void {
  const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string } };
  if (msg.method !== 'tools/call') {
    res.writeHead(202).end();
    return;
  }
  const text = msg.params?.name === 'big' ? 'y'.repeat(5_000) : `done ${msg.id}`;
  res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(msg.id!, { content: [{ type: 'text', text }] }));
}

const guarded = (url: string, backoffMs: number, extra: Record<string, string | number> = {}): AgentYaml => ({
  url,
  max_response_bytes: 1000,
  backoff_after_breaches: 1,
  backoff_base_ms: backoffMs,
  backoff_max_ms: backoffMs,
  response_deadline_ms: 60_000,
  ...extra,
});

/** The `tools/call` ids (as written) each seller received. */
const idsAt = (seller: RawSeller): string[] =>
  seller.requests.map((r) => /"id":([^,}]+)/.exec(r.body.toString('utf8'))?.[1] ?? '').filter((id) => id !== '');

/** The exact 404 `unknown_agent` refusal of a request with id `idText` to agent `name`. */
const unknownAgentBody = (idText: string, name: string): string =>
  `{"jsonrpc":"2.0","id":${idText},"error":{"code":-32600,"message":"Unknown agent \\"${name}\\": no such agent in the gateway config.","data":{"reason":"unknown_agent","agent":"${name}"}}}`;

describe('backoff-waiter-sent-after-agent-removed', { timeout: TEST_TIMEOUT_MS }, () => {
  let seller1: RawSeller;
  let seller2: RawSeller;
  let gw: ObservedGateway;
  let dir: string;
  let file: string;
  let reloader: Reloader;
  const agents: Record<string, AgentYaml> = {};

  const reloadWith = (next: Record<string, AgentYaml>): Promise<void> => rewriteAndReload(file, agentsYaml(next, ['log_level: info']), reloader);
  const call = (agent: string, id: string | number, tool: string): Promise<RawResponse> =>
    rawPost(gw.agentUrl(agent), typeof id === 'string' ? `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}` : toolCall(id, tool), HEADERS);
  /** Breaks `agent`'s bound with call `id` and waits for its exchange line: the `big` kind backs off from there. */
  async function breach(agent: string, id: number): Promise<void> {
    const r = await call(agent, id, 'big');
    assert.match(r.text(), /"reason\\":\\"raw_bytes\\"/);
    assert.equal((await gw.exchangeLine(agent, id)).reason, 'raw_bytes');
    assert.equal(gw.app.gateway.guard.isBackingOff(agent, BIG), true);
  }

  before(async () => {
    seller1 = await startRawSeller(answer);
    seller2 = await startRawSeller(answer);
    Object.assign(agents, {
      a: guarded(seller1.url, 30_000),
      c: guarded(seller1.url, 30_000),
      d: guarded(seller1.url, 1_500, { headers: '{x-seller-key: old-key}' }),
    });
    const yaml = agentsYaml(agents, ['log_level: info']);
    gw = await startObservedGateway(yaml);
    dir = await mkdtemp(join(tmpdir(), 'gw-backoff-reload-'));
    file = join(dir, 'gateway.yaml');
    await writeFile(file, yaml);
    reloader = createReloader({ path: file, env: {}, control: gw.app.gateway, log: captureLog().logger, watch: false });
  });
  after(async () => {
    reloader.close();
    await gw.close();
    await seller1.close();
    await seller2.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a reload that removes the agent answers its waiting calls 404 unknown_agent at once, never sent', async () => {
    await breach('a', 1);
    const second = call('a', 2, 'big');
    const third = call('a', BIG_ID, 'big');
    await until('calls 2 and 3 wait for their backoff turn', () => gw.app.gateway.guard.waiting('a', BIG) === 2);

    delete agents.a;
    await reloadWith(agents);
    const [r2, r3] = await withTimeout(Promise.all([second, third]), 5_000, 'the waiting calls answered');
    assert.deepEqual([r2.status, r2.headers.get('content-type'), r2.text()], [404, 'application/json', unknownAgentBody('2', 'a')]);
    assert.deepEqual([r3.status, r3.text()], [404, unknownAgentBody(BIG_ID, 'a')]);
    // What a call arriving now gets, byte for byte.
    const late = await call('a', 2, 'big');
    assert.deepEqual([late.status, late.headers.get('content-type'), late.text()], [r2.status, r2.headers.get('content-type'), r2.text()]);

    const line = await gw.exchangeLine('a', 2);
    assert.deepEqual([line.outcome, line.reason, line.status, line.upstream_status, line.bytes_from_seller], ['refused', 'unknown_agent', 404, null, 0]);
    // Taken up, they are exchanges: a `refused` line (and refusal count) only for the late call.
    assert.deepEqual(
      gw.lines.filter((l) => l.msg === 'refused').map((l) => [l.agent, l.reason, l.status]),
      [['a', 'unknown_agent', 404]],
    );
    assert.deepEqual(idsAt(seller1), ['1'], 'the seller received the breaking call only');
    assert.equal(gw.app.gateway.guard.waiting('a', BIG), 0);
    await until('no exchange open', () => gw.app.gateway.openExchanges === 0);
  });

  test('a reload that moves the agent to another url answers its waiting call agent_url_changed, sent to neither seller', async () => {
    await breach('c', 11);
    const waiting = call('c', 12, 'big');
    await until('call 12 waits for its backoff turn', () => gw.app.gateway.guard.waiting('c', BIG) === 1);

    agents.c = guarded(seller2.url, 30_000);
    await reloadWith(agents);
    const r = await withTimeout(waiting, 5_000, 'the waiting call answered');
    assert.deepEqual([r.status, r.text()], [200, expectedErrorJson({ id: 12, method: 'tools/call', toolName: 'big', reason: 'agent_url_changed' })]);
    const line = await gw.exchangeLine('c', 12);
    assert.deepEqual([line.outcome, line.reason, line.status, line.upstream_status], ['local_error', 'agent_url_changed', 200, null]);
    assert.equal(gw.app.gateway.guard.waiting('c', BIG), 0);

    // Another tool (not backing off) goes to the new seller.
    const next = await call('c', 13, 'small');
    assert.match(next.text(), /done 13/);
    assert.deepEqual(idsAt(seller1), ['1', '11']);
    assert.deepEqual(idsAt(seller2), ['13']);
  });

  test('a reload that keeps the agent at its url leaves its waiting call to be sent at its turn, as it was resolved', async () => {
    await breach('d', 21);
    const waiting = call('d', 22, 'big');
    await until('call 22 waits for its backoff turn', () => gw.app.gateway.guard.waiting('d', BIG) === 1);

    agents.d = guarded(seller1.url, 1_500, { headers: '{x-seller-key: new-key}' });
    await reloadWith(agents);
    const r = await withTimeout(waiting, 10_000, 'the waiting call answered');
    // Sent as the probe: its 5,000-byte answer breaks the bound again.
    assert.match(r.text(), /"reason\\":\\"raw_bytes\\"/);
    const sent = seller1.requests.filter((q) => /"id":22\b/.test(q.body.toString('utf8')));
    assert.deepEqual(
      sent.map((q) => q.headers['x-seller-key']),
      ['old-key'],
      'sent once, with the headers it was resolved with',
    );
    const now = await call('d', 23, 'small');
    assert.match(now.text(), /done 23/);
    assert.equal(seller1.requests.find((q) => /"id":23\b/.test(q.body.toString('utf8')))?.headers['x-seller-key'], 'new-key');
  });
});
