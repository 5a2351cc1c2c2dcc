/**
 * Regression (review of hostile trial 57 F2's fix, Low): the live discovery-size warning
 * ("discovery response over its size target") and `adcp_gateway_discovery_size_overshoot_total`
 * counted the gateway's own resume tokens in a `tools/list` page's bytes: the SSE stage rewrites
 * each seller event id into a token of ~200 characters, so a seller answering with 1,000 short
 * `id:`-carrying progress events (the review's: 110,843 bytes, under the 131,072-byte target)
 * drew the warning at 333,263 bytes, what the host got (here: 126,843 and 335,628). The target is about the seller's answer (AdCP
 * "Managing response size": "AdCP producers SHOULD keep each serialized MCP response at or
 * below 128 KiB"); a token is the gateway's. The probe (through the same gateway) reported the
 * same page over as well.
 * Now both count the answer as the host receives it without the `id:` lines carrying resume
 * tokens (the live stage: sse-event-ids.ts `tokenLineBytes`; the probe's reader: probe/rpc.ts
 * `tokenBytes`, resume/token.ts `resumeTokenSellerId`): for a seller writing its events as the
 * gateway does (`id: `, `data: `, LF), exactly the seller's bytes less its `id:` lines (at
 * first each token counted as the seller id it carries; hostile trial 58, 1: which events get a
 * token depends on the tokens' lengths).
 *
 * Input: a raw node:http seller on 127.0.0.1 answering `tools/list` over SSE with N progress
 * events, each `id: <i>` and a 3-character message, then the page (with an id of its own):
 * agent `under` N = 1,000 (126,843 bytes), agent `over` N = 1,300 (165,543 bytes: over the
 * target by the seller's bytes alone). Sent through the gateway by a plain POST (the host's bytes), and by
 * `runProbe` (its own in-process gateway, which mints tokens too).
 * Expected: `under`: the host gets more than the target (the tokens), no warning, the metric 0,
 * the probe's row `pass` at the seller's bytes; `over`: one warning whose bytes, events_before
 * and bytes_before are the seller's, the metric 1, the probe's row `over` with the same numbers.
 * Before the fix: `under` warned (bytes 335,628) and the probe said `over`; `over`'s numbers
 * were the host's (435,517; 3 of 3 tests failed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe } from '../../src/probe/probe.js';
import { answerSessionRequests, startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const TARGET = 131_072;
const progress = (i: number): string =>
  `id: ${i}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${i},"message":"${'m'.repeat(3)}"}}\n\n`;
const before = (n: number): string => Array.from({ length: n }, (_, i) => progress(i)).join('');
const page = (n: number, id: number): string => `id: ${n}\ndata: {"jsonrpc":"2.0","id":${id},"result":{"tools":[]}}\n\n`;
const EVENTS: Record<string, number> = { under: 1000, over: 1300 };

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = answerSessionRequests(req, res, 'raw')?.msg;
      if (msg === undefined) return;
      const n = EVENTS[req.url!.slice(1)]!;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${before(n)}${page(n, msg.id as number)}`);
    }),
  (seller) => startObservedGateway(`agents:\n${Object.keys(EVENTS).map((a) => `  ${a}:\n    url: ${new URL(seller.url).origin}/${a}\n`).join('')}`),
);

const WARNING = 'discovery response over its size target (AdCP managing-response-size)';

function warnings(gateway: ObservedGateway, agent: string): unknown[] {
  return gateway.lines
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(WARNING) && l.agent === agent)
    .map((l) => ({ msg: l.msg, surface: l.surface, bytes: l.bytes, target_bytes: l.target_bytes, events_before: l.events_before, bytes_before: l.bytes_before }));
}

async function metric(gateway: ObservedGateway, agent: string): Promise<number> {
  const text = await gateway.app.gateway.metrics.render();
  const line = text.split('\n').find((l) => l.startsWith(`adcp_gateway_discovery_size_overshoot_total{agent="${agent}",surface="tools_list_page"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * The seller's bytes of its answer to request `id` on `agent`, its `id:` lines left out (as
 * both count it since hostile trial 58, 1: test/regressions/probe-and-live-discovery-size-disagree.test.ts):
 * all of it, and before the page's event.
 */
function sellerBytes(agent: string, id: number): { total: number; before: number } {
  const n = EVENTS[agent]!;
  const noIds = (text: string): number => Buffer.byteLength(text.replace(/^id: [^\n]*\n/gm, ''));
  return { total: noIds(before(n) + page(n, id)), before: noIds(before(n)) };
}

async function probeRow(agent: string): Promise<unknown> {
  const config = parseConfig(`log_level: silent\nagents:\n  ${agent}:\n    url: ${new URL(stack.seller.url).origin}/${agent}\n`, { env: {}, source: 'test' });
  const report = await runProbe({ config, agent, logger: false });
  const row = report.rows.find((r) => r.surface === 'tools_list_page')!;
  return { bytes: row.bytes, events_before: row.events_before, bytes_before: row.bytes_before, status: row.status };
}

describe('the discovery size counts the seller\'s answer, not the gateway\'s resume tokens', () => {
  test('1,000 events with short ids under the target: no warning, though the host gets more than the target', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { gateway } = stack;
    const seller = sellerBytes('under', 2);
    assert.ok(seller.total < TARGET, `the seller's answer is under the target: ${seller.total}`);
    const r = await rawPost(gateway.agentUrl('under'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.match(r.text(), /^id: agw1\./, 'the ids went out as resume tokens');
    assert.ok(r.bytes > TARGET, `the host got the tokens: ${r.bytes} bytes`);
    await gateway.exchangeLine('under', 2, 5_000);
    assert.deepEqual(warnings(gateway, 'under'), []);
    assert.equal(await metric(gateway, 'under'), 0);
  });

  test('1,300 events, over the target by the seller\'s bytes: the warning gives the seller\'s numbers', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { gateway } = stack;
    const seller = sellerBytes('over', 2);
    assert.ok(seller.total > TARGET);
    const r = await rawPost(gateway.agentUrl('over'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 200);
    await gateway.exchangeLine('over', 2, 5_000);
    assert.deepEqual(warnings(gateway, 'over'), [
      {
        msg: `${WARNING}; 1,300 events before the response: ${seller.before.toLocaleString('en-US')} bytes`,
        surface: 'tools_list_page',
        bytes: seller.total,
        target_bytes: TARGET,
        events_before: 1300,
        bytes_before: seller.before,
      },
    ]);
    assert.equal(await metric(gateway, 'over'), 1);
  });

  test('probe agrees: the same numbers, pass under the target and over above it', { timeout: TEST_TIMEOUT_MS }, async () => {
    // The probe's tools/list is its request id 2 (initialize is 1).
    const under = sellerBytes('under', 2);
    const over = sellerBytes('over', 2);
    assert.deepEqual(await probeRow('under'), { bytes: under.total, events_before: 1000, bytes_before: under.before, status: 'pass' });
    assert.deepEqual(await probeRow('over'), { bytes: over.total, events_before: 1300, bytes_before: over.before, status: 'over' });
  });
});
