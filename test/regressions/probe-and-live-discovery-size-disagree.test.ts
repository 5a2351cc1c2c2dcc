/**
 * Regression (hostile trial 58, 1, Low): `probe` and the live discovery-size warning gave the
 * same seller's `tools/list` page different sizes: 1,290 progress events written `id:N` /
 * `data:{...}` (141,072 bytes from the seller), `probe --json` 142,675 bytes (bytes_before
 * 142,571), the warning 142,619 (142,515). Both counted each gateway resume token as the seller
 * id it carries, but an event the token credit refuses a token (sse-token-credit.ts) goes out
 * with no `id:` line at all, and how many are refused depends on the tokens' lengths: the
 * probe's tokens carry its own session id (a 243-byte `id:` line here, 204 for a host without
 * one), so the two answers lost the seller ids of different numbers of events.
 * Now both leave every token-carrying `id:` line out (sse-event-ids.ts `tokenLineBytes`,
 * probe/rpc.ts `tokenBytes`): the seller's answer without its event ids, as the gateway
 * writes it, whichever events got a token.
 *
 * Input: a raw node:http seller on 127.0.0.1 (a session id on `initialize`, as the trial's)
 * answering `tools/list` over SSE with 1,290 events `id:<i>` / `data:<progress>` and the page
 * (`id:x`). A plain POST through the gateway (no session: the live warning), and `runProbe`.
 * Expected: the warning's and the probe row's bytes, events_before and bytes_before are equal,
 * and are the seller's events and page re-encoded (`data: `, LF) without their `id:` lines.
 * Before the fix: probe 142,675 / 142,571, live 143,654 / 143,550 (1 of 1 test failed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { runProbe } from '../../src/probe/probe.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const N = 1290;
const INIT = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } };
const progressData = (i: number): string => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${i}}}`;
const pageData = (id: number): string => `{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const msg = JSON.parse(req.body.toString('utf8') || 'null') as { id?: number; method?: string } | null;
      if (msg?.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'initialize') {
        return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'S0123456789abcdef' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: INIT }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < N; i++) res.write(`id:${i}\ndata:${progressData(i)}\n\n`);
      res.end(`id:x\ndata:${pageData(msg.id)}\n\n`);
    }),
  (seller) => startObservedGateway(`agents:\n  p:\n    url: ${seller.url}\n`),
);

const WARNING = 'discovery response over its size target (AdCP managing-response-size)';

test('probe and the live warning give the same seller the same bytes and bytes_before', { timeout: TEST_TIMEOUT_MS }, async () => {
  const { gateway, seller } = stack;
  // The seller's answer to request `id` as the gateway writes it, its `id:` lines left out.
  let before = 0;
  for (let i = 0; i < N; i++) before += Buffer.byteLength(`data: ${progressData(i)}\n\n`);
  const expected = (id: number) => ({ bytes: before + Buffer.byteLength(`data: ${pageData(id)}\n\n`), events_before: N, bytes_before: before });

  const r = await rawPost(gateway.agentUrl('p'), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(r.status, 200);
  await gateway.exchangeLine('p', 2, 5_000);
  const live = gateway.lines
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(WARNING))
    .map((l) => ({ bytes: l.bytes, events_before: l.events_before, bytes_before: l.bytes_before }));

  const config = parseConfig(`log_level: silent\nagents:\n  p:\n    url: ${seller.url}\n`, { env: {}, source: 'test' });
  const report = await runProbe({ config, agent: 'p', logger: false });
  const row = report.rows.find((x) => x.surface === 'tools_list_page')!;
  const probe = { bytes: row.bytes, events_before: row.events_before, bytes_before: row.bytes_before };

  assert.deepEqual(probe, live[0], 'the probe and the live warning agree');
  // Both requests are id 2 (the probe's initialize is 1).
  assert.deepEqual(live, [expected(2)]);
  assert.deepEqual(probe, expected(2));
  assert.equal(row.status, 'over');
});
