import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { startRawSeller, type SeenMessage, type SeenRequest } from '../support/raw-seller.js';
import { callWithSlowHuman } from '../helpers/eliciting-host.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';

const IDLE_MS = 600;
/** How long the seller stays silent after its cancellation before it answers the call: far past IDLE_MS. */
const HOLD_MS = 4_000;
const WIDE = 70;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const extra = (n: number): string => Array.from({ length: n }, (_, i) => `,"m${i}":${i}`).join('');

/** The seller's `notifications/cancelled` for its request `eid`, as tool `name` writes it. */
function cancelOf(name: string, eid: string): string {
  if (name === 'wide_params') return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${eid}"${extra(WIDE)}}}`;
  if (name === 'wide_top') return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${eid}"}${extra(WIDE)}}`;
  return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${eid}"}}`;
}

/**
 * A raw MCP seller with a session: each `tools/call` asks the host (`elicitation/create` on the
 * call's stream), cancels that request itself 100 ms later (its `notifications/cancelled` shaped
 * by the tool's name), then is silent for HOLD_MS before it answers.
 */
async function handle(req: SeenRequest, res: http.ServerResponse): Promise<void> {
  const msg = req.body.length > 0 ? (JSON.parse(req.body.toString('utf8')) as SeenMessage) : undefined;
  if (req.method === 'POST' && msg?.method === 'initialize') {
    const result = { protocolVersion: msg.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'wide-cancel', version: '1' } };
    return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-wide' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  }
  if (req.method === 'POST' && msg?.id === undefined) return void res.writeHead(202).end();
  if (req.method !== 'POST' || msg?.method !== 'tools/call') return void res.writeHead(405).end();
  const name = String(msg.params!.name);
  const eid = `e-${name}`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: eid, method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } })}\n\n`);
  await sleep(100);
  res.write(`data: ${cancelOf(name, eid)}\n\n`);
  await sleep(HOLD_MS);
  res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'held' }] } })}\n\n`);
}

const stack = useSellerAndGateway(
  () => startRawSeller(handle),
  (seller) => startObservedGateway(agentsYaml({ w: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } })),
);
const clients: Client[] = [];
after(async () => { for (const c of clients) await c.close().catch(() => undefined); });

const call = (name: string): Promise<string | undefined> => callWithSlowHuman(stack.gateway.agentUrl('w'), name, clients);

/**
 * Hostile trial 58 (Low): a seller's `notifications/cancelled` for its own elicitation with a
 * top level (or `params`) wider than the scan's 64-member table was not read, so the call's
 * idle clock stayed paused until the seller next spoke (up to sse_deadline_ms) where a narrow
 * cancellation restarts it. Each case is silent HOLD_MS after its cancellation: `sse_idle`.
 */
describe('seller-wide-cancel-keeps-stream-paused', { timeout: 40_000 }, () => {
  test('control: a narrow cancellation restarts the idle clock (sse_idle)', async () => {
    assert.equal(await call('narrow'), 'sse_idle');
  });
  test(`params with requestId and ${WIDE} more members: sse_idle`, async () => {
    assert.equal(await call('wide_params'), 'sse_idle');
  });
  test(`a top level of ${WIDE + 3} members: sse_idle`, async () => {
    assert.equal(await call('wide_top'), 'sse_idle');
  });
});
