/**
 * Regression (hostile trial 57, F2, Low): the live discovery-size warning ("discovery response
 * over its size target") and `adcp_gateway_discovery_size_overshoot_total` measured a
 * `tools/list` page on the data of the SSE event that carried the response alone, while
 * `probe` measures every byte the host receives through the response. A seller answering
 * `tools/list` with 3,000 `notifications/progress` events (~500 KB) and then a page of no tools
 * got `tools/list page 1  sse  499,944  131,072  over (3,000 events before the response: ...)`
 * from `probe`, exit 1, while the live gateway delivered the same 499,944 bytes to a host with
 * no warning and no metric (the response event's data: 44 bytes).
 * Now the SSE stage counts what it gives the host as it queues it (response/sse-encode.ts
 * `SseFrameBatch.answerSoFar`: bytes written and queued, events), and the warning is judged by `measureDiscovery` on the answer's bytes
 * through the response, as the probe's are, with what came before it said apart (the probe's
 * row note, mcp/discovery-size.ts `beforeResponseText`).
 *
 * Input: a raw node:http seller on 127.0.0.1 answering `tools/list` as the trial's did
 * (/tmp/scratch/trial57/scenarios10.mjs): 3,000 progress events, each with a 50-character
 * message, then `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, in one write; on `/comment`
 * the same with a `: working` comment block between the events and the page. Sent through the
 * gateway by a plain POST (the host's bytes) and by the probe's own SSE reader (probe/rpc.ts).
 * Expected: one warning, exactly (surface, bytes 499,944, target, events_before 3,000,
 * bytes_before 499,890, the message naming them), the metric 1, and the warning's numbers those
 * the host received and the probe reads. Before the fix: no warning, the metric 0 (both tests
 * failed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRpcClient } from '../../src/probe/rpc.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const progress = (i: number): string =>
  `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${i},"message":"${'m'.repeat(50)}"}}\n\n`;
/** The 3,000 events the seller sends before its page. */
const BEFORE = Array.from({ length: 3000 }, (_, i) => progress(i)).join('');
const page = (id: number): string => `data: {"jsonrpc":"2.0","id":${id},"result":{"tools":[]}}\n\n`;
const COMMENT = ': working\n\n';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: number } | null;
      if (msg?.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${BEFORE}${req.url === '/comment' ? COMMENT : ''}${page(msg.id)}`);
    }),
  (seller) => startObservedGateway(`agents:\n  a:\n    url: ${seller.url}\n  c:\n    url: ${new URL(seller.url).origin}/comment\n`),
);

async function metric(gateway: ObservedGateway, labels: string): Promise<number> {
  const text = await gateway.app.gateway.metrics.render();
  const line = text.split('\n').find((l) => l.startsWith(`adcp_gateway_discovery_size_overshoot_total{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

const WARNING = 'discovery response over its size target (AdCP managing-response-size)';

/** The warning's own fields (pino's time, pid, hostname and the request's id aside). */
function warningFields(gateway: ObservedGateway, agent: string): unknown[] {
  return gateway.lines
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(WARNING) && l.agent === agent)
    .map((l) => ({ level: l.level, msg: l.msg, agent: l.agent, surface: l.surface, bytes: l.bytes, target_bytes: l.target_bytes, events_before: l.events_before, bytes_before: l.bytes_before }));
}

/** The warning (as {@link warningFields} gives it) for a tools/list page of `bytes` behind the 3,000 events (499,890 bytes) on `agent`. */
function overshootWarning(agent: string, bytes: number, before = 499_890): unknown {
  return {
    level: 40,
    msg: `${WARNING}; 3,000 events before the response: ${before.toLocaleString('en-US')} bytes`,
    agent,
    surface: 'tools_list_page',
    bytes,
    target_bytes: 131_072,
    events_before: 3000,
    bytes_before: before,
  };
}

/** Waits for the exchange line of request `id` on `agent` (the warning is written before it), or `ms`. */
async function settled(gateway: ObservedGateway, agent: string, id: number): Promise<void> {
  await gateway.exchangeLine(agent, id, 5_000);
}

describe('the live discovery-size check counts what the host receives through the response, as probe does', () => {
  test('3,000 progress events before a tools/list page of no tools: a warning naming them, the metric counted', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { gateway } = stack;
    const before = Buffer.byteLength(BEFORE);
    const total = before + Buffer.byteLength(page(2));
    assert.deepEqual([before, total], [499_890, 499_944], 'the trial\'s numbers');

    const r = await rawPost(gateway.agentUrl('a'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), `${BEFORE}${page(2)}`, 'the host gets the seller\'s bytes as they are');
    await settled(gateway, 'a', 2);
    assert.deepEqual(warningFields(gateway, 'a'), [overshootWarning('a', 499_944)]);
    assert.equal(await metric(gateway, 'agent="a",surface="tools_list_page"'), 1);

    // The probe's reader through the same gateway reads the same numbers.
    const client = createRpcClient({ url: gateway.agentUrl('a'), timeoutMs: 10_000, maxBodyBytes: 4 * 1024 * 1024 });
    client.setSession(undefined, '2025-06-18');
    const reply = await client.call('tools/list', {}); // id 1: as long as the page of id 2
    assert.deepEqual({ answerBytes: reply.answerBytes, before: reply.before }, { answerBytes: 499_944, before: { events: 3000, bytes: 499_890 } });
    await settled(gateway, 'a', 1);
    assert.equal(warningFields(gateway, 'a').length, 2);
    assert.equal(await metric(gateway, 'agent="a",surface="tools_list_page"'), 2);
  });

  // The comment line is before the response, though a host's SSE reader reads it in the page's
  // block (hostile trial 58, 2: test/regressions/discovery-size-comments-before-response-unexplained.test.ts).
  test('a comment just before the page: before the response, in the warning and the probe alike', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { gateway } = stack;
    const r = await rawPost(gateway.agentUrl('c'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    // The gateway writes the comment as `: working\n` (its blank line dispatches nothing).
    assert.equal(r.text(), `${BEFORE}: working\n${page(2)}`);
    assert.equal(r.bytes, 499_954);
    await settled(gateway, 'c', 2);
    assert.deepEqual(warningFields(gateway, 'c'), [overshootWarning('c', 499_954, 499_900)]);
    assert.equal(await metric(gateway, 'agent="c",surface="tools_list_page"'), 1);

    const client = createRpcClient({ url: gateway.agentUrl('c'), timeoutMs: 10_000, maxBodyBytes: 4 * 1024 * 1024 });
    client.setSession(undefined, '2025-06-18');
    const reply = await client.call('tools/list', {});
    assert.deepEqual({ answerBytes: reply.answerBytes, before: reply.before }, { answerBytes: 499_954, before: { events: 3000, bytes: 499_900 } });
  });
});
