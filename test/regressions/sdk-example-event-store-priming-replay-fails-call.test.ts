/**
 * Regression: an SSE event whose data is `{}` (no JSON-RPC message of any kind, naming none)
 * on a call's stream failed the call through the gateway, while the MCP SDK client reading
 * the seller directly skipped it and returned the result.
 *
 * Reported failure (a hostile trial 17, M1): the MCP TypeScript SDK's example
 * InMemoryEventStore names events `<stream>_<ms>_<random>` and replays them sorted as strings,
 * so a priming event (stored as `{}`) written in the same millisecond as a progress event was
 * sometimes replayed after it as `data: {}`. The gateway ended the call's stream
 * `upstream_not_mcp` (~1 call in 5 through the gateway; 30/30 directly). Deterministic here: a
 * raw seller writes the `{}` event itself.
 *
 * Input: a raw node:http seller behind the real gateway. `tools/call` of `t`: an SSE answer
 * `id: e1` / `data: {}`, then a progress notification (`id: e2`), then the result (`id: e3`).
 * `resume`: the POST's stream carries the progress (`id: e1`) and ends; the GET resuming from
 * `e1` replays `id: e2` / `data: {}` and then the result (the trial's shape). `idonly`: the
 * same as `t` with `{"jsonrpc":"2.0","id":999}` in place of `{}` (control: still refused, a Go
 * host reads it as a response to its call 999). A batch (2025-03-26) of `ping` (1) and
 * `tools/list` (2): request 1's response, `{}`, request 2's response.
 * Expectation: the `{}` event is dropped, `message_without_kind` (its id made no resume
 * token), counted by the exchange line's `events_dropped` and
 * `adcp_gateway_sse_events_dropped_total`; its drop line is debug, not warn (a hostile trial
 * 47, F2: test/regressions/sdk-priming-event-replayed-warns.test.ts), so none at `info` here; the host gets exactly the progress and the result
 * (each with a resume token), outcome ok; the MCP SDK client gets the result, directly and
 * through the gateway, the resumed call included. Control: the id-only message still ends the
 * call `upstream_not_mcp`.
 * Was: `upstream_not_mcp` for the call (and for request 2 of the batch), nothing of the
 * progress or the result forwarded; the SDK client's call returned the gateway's error result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, RESUME_TOKEN, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { connectSdk1Host } from '../support/sdk1/client.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { droppedInLines, droppedInMetrics } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const REASON = 'message_without_kind';
const RESULT = { content: [{ type: 'text', text: 'hello' }] };

/** A progress notification for token `token`, as the SDK servers write it. */
const progress = (token: string | number): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 } });
const answer = (id: string | number): string => toolResponse(id, RESULT);
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';

type Msg = { id?: string | number; method?: string; params?: { name?: string; protocolVersion?: string; _meta?: { progressToken?: string | number } } };

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const sse = (text: string): void => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end(text);
    if (req.method === 'GET') {
      // The resume of `resume`'s stream (the seller's id e1; its request's id in the id itself).
      const last = req.headers['last-event-id'];
      if (typeof last !== 'string' || !last.startsWith('e1:')) return void res.writeHead(405).end();
      return sse(`id: e2\ndata: {}\n\nid: e3\nevent: message\ndata: ${answer(JSON.parse(last.slice(3)) as string | number)}\n\n`);
    }
    const body = req.body.toString('utf8');
    if (body.startsWith('[')) return sse(`data: ${R1}\n\nid: e1\ndata: {}\n\ndata: ${R2}\n\n`);
    const m = JSON.parse(body) as Msg;
    if (m.id === undefined) return void res.writeHead(202).end();
    if (m.method === 'initialize') {
      const result = { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'kindless', version: '1' } };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    }
    const token = m.params?._meta?.progressToken ?? 'p';
    const name = m.params?.name;
    if (name === 'resume') return sse(`id: e1:${JSON.stringify(m.id)}\ndata: ${progress(token)}\n\n`);
    const first = name === 'idonly' ? '{"jsonrpc":"2.0","id":999}' : '{}';
    sse(`id: e1\ndata: ${first}\n\nid: e2\ndata: ${progress(token)}\n\nid: e3\nevent: message\ndata: ${answer(m.id)}\n\n`);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ s: seller.url })));
const gw = (): ObservedGateway => stack.gateway;

/** The drops counted for this agent since line `seen` (the warnings) and by the metric since `before`. */
async function assertOneDrop(seen: number, before: number, line: Record<string, unknown>): Promise<void> {
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, { outcome: 'ok', reason: REASON, events_dropped: { [REASON]: 1 } });
  // The drop line of an SDK priming event is debug: none at this gateway's `info`.
  assert.deepEqual(droppedInLines(gw().lines.slice(seen), 's'), {});
  assert.equal(droppedInMetrics(await gw().app.gateway.metrics.render(), 's', REASON), before + 1);
}

describe('sdk-example-event-store-priming-replay-fails-call', { timeout: TEST_TIMEOUT_MS }, () => {
  test('raw host: `data: {}` on a call\'s stream is dropped message_without_kind; the progress and the result reach the host', async () => {
    const before = droppedInMetrics(await gw().app.gateway.metrics.render(), 's', REASON);
    const seen = gw().lines.length;
    const r = await rawPost(gw().agentUrl('s'), toolCall(1, 't'), HEADERS);
    assert.equal(r.status, 200);
    const ids = sseIds(r.text());
    // Two resume tokens: the progress's and the result's; the dropped event's id made none.
    assert.equal(ids.length, 2);
    for (const id of ids) assert.match(id, RESUME_TOKEN);
    assert.equal(r.text(), `id: ${ids[0]}\ndata: ${progress('p')}\n\nid: ${ids[1]}\nevent: message\ndata: ${answer(1)}\n\n`);
    await assertOneDrop(seen, before, await gw().exchangeLine('s', 1));
  });

  test('raw host: `data: {}` on a batch\'s stream is dropped; both responses reach the host', async () => {
    const before = droppedInMetrics(await gw().app.gateway.metrics.render(), 's', REASON);
    const seen = gw().lines.length;
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    const r = await rawPost(gw().agentUrl('s'), batch, { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), `data: ${R1}\n\ndata: ${R2}\n\n`);
    await assertOneDrop(seen, before, await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen));
  });

  test('control: an id-only message for another id still ends the call upstream_not_mcp', async () => {
    const r = await rawPost(gw().agentUrl('s'), toolCall(2, 'idonly'), HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorFrame({ id: 2, method: 'tools/call', toolName: 'idonly', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().exchangeLine('s', 2);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, { outcome: 'local_error', reason: 'upstream_not_mcp', events_dropped: undefined });
  });

  for (const tool of ['t', 'resume']) {
    test(`MCP SDK client, tool ${tool}: gets the result directly and through the gateway`, async () => {
      for (const [label, url] of [
        ['direct', stack.seller.url],
        ['gateway', gw().agentUrl('s')],
      ] as const) {
        const host = await connectSdk1Host(url, '2025-06-18');
        const resumes = (): number => stack.seller.requests.filter((q) => q.method === 'GET' && String(q.headers['last-event-id']).startsWith('e1:')).length;
        const resumedBefore = resumes();
        try {
          const progressSeen: number[] = [];
          const result = await withTimeout(host.client.callTool({ name: tool, arguments: {} }, undefined, { onprogress: (p) => progressSeen.push(p.progress) }), 10_000, `${label} callTool`);
          assert.deepEqual(result, RESULT, label);
          assert.deepEqual(progressSeen, [1], label);
          // `resume`: the client resumed from the progress's id (through the gateway, its token), and the seller replayed after e1.
          assert.equal(resumes() - resumedBefore, tool === 'resume' ? 1 : 0, label);
        } finally {
          await host.close();
        }
      }
    });
  }
});
