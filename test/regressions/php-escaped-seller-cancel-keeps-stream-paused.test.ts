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
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `value` as PHP's json_encode writes it by default: every `/` escaped as `\/`. */
const php = (value: unknown): string => JSON.stringify(value).replaceAll('/', '\\/');

/** The seller's request to the host, `eid`, as PHP writes it: `"method":"elicitation\/create"`. */
const elicitationOf = (eid: string): string =>
  php({ jsonrpc: '2.0', id: eid, method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } });

/** The seller's `notifications/cancelled` for its request `eid`, as PHP writes it: `"method":"notifications\/cancelled"`. */
const phpCancelOf = (eid: string): string => php({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: eid, reason: 'timed out' } });

/**
 * The SSE bytes of the cancellation for tool `name`, as the writes the seller makes (each one
 * its own chunk: the seller waits between them). `split:<text>`: the PHP event cut just before
 * `<text>`'s first occurrence.
 */
function cancelWrites(name: string, eid: string): string[] {
  const event = `data: ${phpCancelOf(eid)}\n\n`;
  if (name === 'php') return [event];
  if (name === 'u0063') return [`data: {"jsonrpc":"2.0","method":"notifications/\\u0063ancelled","params":{"requestId":"${eid}"}}\n\n`];
  // The method key and its value on two data lines of one event (joined by LF: JSON whitespace).
  if (name === 'multiline') return [`data: {"jsonrpc":"2.0","method"\ndata: :"notifications\\/cancelled","params":{"requestId":"${eid}"}}\n\n`];
  // Beside a progress notification in the same chunk, which goes out raw when nothing else is read.
  if (name === 'with_progress') return [`data: ${php({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'a/b' } })}\n\n${event}`];
  if (name.startsWith('split:')) {
    const at = event.indexOf(name.slice('split:'.length));
    assert.ok(at > 0, name);
    return [event.slice(0, at), event.slice(at)];
  }
  if (name === 'escaped_key') return [`data: {"jsonrpc":"2.0","m\\u0065thod":"notifications\\/cancelled","params":{"requestId":"${eid}"}}\n\n`];
  return []; // 'none': no cancellation
}

let sessions = 0;
/** Each session's standalone GET stream, by session id. */
const getStreams = new Map<string, http.ServerResponse>();

/**
 * A raw MCP seller with a session per host: each `tools/call` asks the host (`elicitation/create`
 * as PHP writes it, on the call's stream, or on the session's GET stream for a tool named
 * `get:...`), cancels that request itself 100 ms later (the writes of `cancelWrites`, 30 ms
 * apart), then is silent for HOLD_MS before it answers `held`.
 */
async function handle(req: SeenRequest, res: http.ServerResponse): Promise<void> {
  const session = String(req.headers['mcp-session-id'] ?? '');
  if (req.method === 'GET' && session !== '') {
    getStreams.set(session, res);
    return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
  }
  const msg = req.body.length > 0 ? (JSON.parse(req.body.toString('utf8')) as SeenMessage) : undefined;
  if (req.method === 'POST' && msg?.method === 'initialize') {
    const result = { protocolVersion: msg.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'php-cancel', version: '1' } };
    return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `php-${++sessions}` }).end(php({ jsonrpc: '2.0', id: msg.id, result }));
  }
  if (req.method === 'POST' && msg?.id === undefined) return void res.writeHead(202).end();
  if (req.method !== 'POST' || msg?.method !== 'tools/call') return void res.writeHead(405).end();
  const name = String(msg.params!.name);
  const eid = `e-${name}`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let out: http.ServerResponse = res;
  if (name.startsWith('get:')) {
    for (let i = 0; i < 100 && !getStreams.has(session); i++) await sleep(20);
    out = getStreams.get(session)!;
    assert.ok(out !== undefined, 'the host opened the GET stream');
    res.write(': call\n\n');
  }
  out.write(`data: ${elicitationOf(eid)}\n\n`);
  await sleep(100);
  for (const w of cancelWrites(name.replace(/^get:/, ''), eid)) {
    out.write(w);
    await sleep(30);
  }
  await sleep(HOLD_MS);
  res.end(`data: ${php({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'held' }] } })}\n\n`);
}

const stack = useSellerAndGateway(
  () => startRawSeller(handle),
  (seller) => startObservedGateway(agentsYaml({ p: { url: seller.url, sse_idle_timeout_ms: IDLE_MS } })),
);
const clients: Client[] = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const s of getStreams.values()) s.destroy();
});

const call = (name: string): Promise<string | undefined> => callWithSlowHuman(stack.gateway.agentUrl('p'), name, clients);

/**
 * Hostile trial 59, I1: a seller's `notifications/cancelled` written
 * `"method":"notifications\/cancelled"` (PHP's json_encode escapes `/` by default, so a PHP
 * seller writes every method so) or `"notifications/\u0063ancelled"` was never read: its own
 * elicitation stayed awaited, and the call's idle clock stayed paused until sse_deadline_ms
 * (1 h by default). The method value is now compared decoded. Each case is silent HOLD_MS after
 * its cancellation: `sse_idle` when the cancellation is read, `held` when the stream stays paused.
 */
describe('php-escaped-seller-cancel-keeps-stream-paused', { timeout: 90_000 }, () => {
  test('control: a request written "elicitation\\/create" is awaited (no cancellation: the stream stays paused, held)', async () => {
    assert.equal(await call('none'), 'held');
  });
  test('control: a cancellation with an escaped top-level key is not read (documented): held', async () => {
    assert.equal(await call('escaped_key'), 'held');
  });
  for (const name of [
    'php',
    'u0063',
    'multiline',
    'with_progress',
    'split:\\/cancelled',
    'split:/cancelled',
    'split:"method"',
    'split:"notifications',
    'split:"params"',
    'split:\n\n',
    'get:php',
    'get:split:/cancelled',
  ]) {
    test(`${JSON.stringify(name)}: the cancellation is read, sse_idle`, async () => {
      assert.equal(await call(name), 'sse_idle');
    });
  }
});
