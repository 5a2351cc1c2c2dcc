/**
 * Regression (issue 5, bench/RESULTS.md "SSE: one-event results"): the answer most MCP
 * servers give to tools/call (the TypeScript SDK's default), `text/event-stream` with one
 * `message` event and then the end, cost the gateway a fixed price per response that was not
 * its work:
 * - its head, its event and its end left in three socket writes (the head was flushed alone
 *   before any event, then the event, then the end);
 * - the seller's body, already arrived whole when the stage stopped at the response event,
 *   was destroyed with a new AbortError (Node's stream iterator), whose stack Node's stream
 *   error handling formats.
 *
 * Input: a real seller (node:http) answering with one event (a) whole, in one write; (b)
 * then keeping its stream open; (c) head first, the event only once the host saw the head.
 * Expectation: (a) the host's answer leaves the gateway in one socket write, exactly the
 * seller's event; no error stack is formatted in the gateway process while it is answered;
 * the seller's connection is kept (the next call reuses it). (b) the same answer, and the
 * seller's connection is closed (a response not read to its end never goes back to the
 * pool). (c) the host gets the head before the seller sends the event (a slow stream's
 * start is visible at once), then the event.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { toolResponse } from '../support/raw-seller.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

let sellerServer: http.Server;
let gw: RunningGateway;
/** The seller's connections, in the order they were opened, and whether each one closed. */
const sellerSockets: Array<{ socket: Socket; closed: boolean }> = [];
/** The connection each call (by id) came on. */
const servedBy = new Map<number, { socket: Socket; closed: boolean }>();
/** Socket writes (flushes to the kernel) the gateway made to its hosts. */
let hostWrites = 0;
let headSeen: () => void = () => {};

const frame = (id: number): string => `event: message\ndata: ${toolResponse(id, { content: [{ type: 'text', text: `answer ${id} ${'x'.repeat(900)}` }] })}\n\n`;

before(async () => {
  // Its own server rather than test/support/raw-seller.ts: that one's 1 s keep-alive is under
  // undici's keep-alive threshold (2 s), so undici would never reuse a connection to it.
  sellerServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(Buffer.concat(chunks), res).catch(() => res.destroy()));
  });
  sellerServer.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => sellerServer.listen(0, '127.0.0.1', resolve));
  const sellerUrl = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}/mcp`;
  gw = await startGateway(['agents:', '  s:', `    url: ${sellerUrl}`, ''].join('\n'));
  gw.app.server.on('connection', (socket: Socket) => {
    const counted = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    for (const name of ['_write', '_writev'] as const) {
      const original = counted[name];
      counted[name] = function (this: unknown, ...args: unknown[]) {
        hostWrites++;
        return original.apply(this, args);
      };
    }
  });
});
after(async () => {
  await gw.close();
  sellerServer.closeAllConnections();
  await new Promise<void>((resolve) => sellerServer.close(() => resolve()));
});

async function answer(body: Buffer, res: http.ServerResponse): Promise<void> {
  const { id, params } = JSON.parse(body.toString('utf8')) as { id: number; params: { name: string } };
  const socket = res.socket!;
  let entry = sellerSockets.find((s) => s.socket === socket);
  if (entry === undefined) {
    const added = { socket, closed: false };
    sellerSockets.push(added);
    socket.on('close', () => (added.closed = true));
    entry = added;
  }
  servedBy.set(id, entry);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (params.name === 'whole') return void res.end(frame(id));
  if (params.name === 'open') return void res.write(frame(id)); // never ends
  // slow: the head alone, the event once the host has the head.
  res.flushHeaders();
  await withTimeout(new Promise<void>((resolve) => (headSeen = resolve)), 5_000, 'the host seeing the head');
  res.end(frame(id));
}

/** POSTs a tools/call on a new connection; `onHead` runs when the response head arrives. */
function call(id: number, name: string, onHead: () => void = () => {}): Promise<{ status: number; type: string | undefined; body: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
  return withTimeout(
    new Promise((resolve, reject) => {
      const req = http.request(gw.agentUrl('s'), {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      });
      req.on('response', (res) => {
        onHead();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    }),
    5_000,
    `call ${id} (${name})`,
  );
}

async function eventually(check: () => boolean, label: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), label);
}

test('one event that arrived whole: one socket write to the host, no error stack, the seller connection kept', { timeout: TEST_TIMEOUT_MS }, async () => {
  await call(1, 'whole'); // warm: the seller connection exists, lazily loaded code is loaded
  const before = sellerSockets.length;
  const formatted: unknown[] = [];
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = (err, frames) => {
    formatted.push(err);
    return `${String(err)}\n${frames.map((f) => `    at ${String(f)}`).join('\n')}`;
  };
  hostWrites = 0;
  let r;
  try {
    r = await call(2, 'whole');
    await new Promise((resolve) => setImmediate(resolve)); // whatever the exchange does after the host's end
  } finally {
    Error.prepareStackTrace = saved;
  }
  assert.equal(r.status, 200);
  assert.equal(r.type, 'text/event-stream');
  assert.equal(r.body, frame(2));
  assert.equal(hostWrites, 1, 'head, event and end in one socket write');
  assert.deepEqual(
    formatted.map((e) => (e as Error).stack ?? String(e)),
    [],
    'no error stack formatted',
  );
  assert.equal(sellerSockets.length, before, 'the seller connection was reused');
  assert.equal(servedBy.get(2), servedBy.get(1));
  assert.equal(servedBy.get(2)!.closed, false, 'and stays open');
});

test('a stream still open after its response: the same answer, and the seller connection is closed', { timeout: TEST_TIMEOUT_MS }, async () => {
  const r = await call(3, 'open');
  assert.equal(r.body, frame(3));
  const connection = servedBy.get(3)!;
  await eventually(() => connection.closed, 'the connection of the unfinished response closed');
  const count = sellerSockets.length;
  await call(4, 'whole');
  assert.equal(sellerSockets.length, count + 1, 'the next call opened a new connection');
});

test('a slow stream: the host gets the head before the seller sends its event, then the event', { timeout: TEST_TIMEOUT_MS }, async () => {
  hostWrites = 0;
  const r = await call(5, 'slow', () => headSeen());
  assert.equal(r.status, 200);
  assert.equal(r.body, frame(5));
  assert.equal(hostWrites, 2, 'the head alone, then the event and the end');
});
