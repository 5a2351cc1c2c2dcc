/**
 * Regression (hostile trial 58, 2, Low): a `tools/list` page sent after ~132 KB of SSE comments
 * was `over 132,098` in the probe's row and in the live warning, with no note of what came
 * before the response (no events_before/bytes_before), though README says a row whose SSE
 * answer carried anything before the response says what. The gateway writes each comment
 * line without a blank line after it (the seller's blank lines between comments dispatch
 * nothing), so all the comments sat in the response's event block, and both left the comment
 * lines opening that block out of `before` (the live stage: SseFrameBatch `commentTail`; the
 * probe: bytes before the block).
 * Now both count them before the response: `events_before` 0, `bytes_before` the comments'
 * bytes, and the message `0 events before the response: <n> bytes`.
 *
 * Input: a raw node:http seller on 127.0.0.1 answering `tools/list` over SSE with 3,000
 * comments `: keepalive comment padding padding padding` (each with a blank line), then the
 * page. A plain POST through the gateway (the live warning), and `runProbe`.
 * Expected: the warning and the probe row: bytes = what the host got, events_before 0,
 * bytes_before = the host's bytes before the page's `data:` line.
 * Before the fix: neither had events_before/bytes_before (1 of 1 test failed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe } from '../../src/probe/probe.js';
import { answerSessionRequests, startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const COMMENT = ': keepalive comment padding padding padding\n\n';

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = answerSessionRequests(req, res, 'raw')?.msg;
      if (msg === undefined) return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 3000; i++) res.write(COMMENT);
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 't', inputSchema: { type: 'object' } }] } })}\n\n`);
    }),
  (seller) => startObservedGateway(`agents:\n  c1:\n    url: ${seller.url}\n`),
);

const WARNING = 'discovery response over its size target (AdCP managing-response-size)';

test('comments before a tools/list page are what came before the response, in probe and live alike', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { gateway, seller } = stack;
  const r = await rawPost(gateway.agentUrl('c1'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(r.status, 200);
  const text = r.text();
  assert.match(text, /^: keepalive comment/, 'the comments reach the host');
  const beforeBytes = Buffer.byteLength(text.slice(0, text.indexOf('data: ')));
  const expected = { bytes: r.bytes, events_before: 0, bytes_before: beforeBytes };
  assert.ok(beforeBytes > 131_072, `the comments alone are over the target: ${beforeBytes}`);

  await gateway.exchangeLine('c1', 2, 5_000);
  const live = gateway.lines
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(WARNING))
    .map((l) => ({ msg: l.msg, bytes: l.bytes, events_before: l.events_before, bytes_before: l.bytes_before }));
  assert.deepEqual(live, [{ msg: `${WARNING}; 0 events before the response: ${beforeBytes.toLocaleString('en-US')} bytes`, ...expected }]);

  const config = parseConfig(`log_level: silent\nagents:\n  c1:\n    url: ${seller.url}\n`, { env: {}, source: 'test' });
  const report = await runProbe({ config, agent: 'c1', logger: false });
  const row = report.rows.find((x) => x.surface === 'tools_list_page')!;
  // The probe's tools/list is its request id 2 too: the same bytes.
  assert.deepEqual({ bytes: row.bytes, events_before: row.events_before, bytes_before: row.bytes_before, status: row.status }, { ...expected, status: 'over' });
});
