/**
 * Regression (reported by a new user's trial): a host that stopped reading an SSE stream was
 * logged and counted as the seller's `sse_idle`. The host not reading fills the socket
 * buffers, the gateway stops reading the seller until the host drains (SSE_HOST_BUFFER_BYTES,
 * src/response/sse-stage.ts), no byte arrives, and the idle timer blamed the seller, which
 * was streaming all along (blocked by TCP back-pressure).
 *
 * Input: seller -> gateway -> raw host (net.connect), all on 127.0.0.1. The seller answers a
 * tools/call with SSE: up to EVENTS progress notifications (no id) of EVENT_BYTES each,
 * written as fast as TCP lets it, then the result. The host reads its first bytes (the head)
 * and stops reading (`socket.pause()`). Agent `s`: sse_idle_timeout_ms 200, sse_deadline_ms
 * 60000; agent `d`: 60000 and 3000; agent `r`: 2000 and 60000. Agent `g`: the host opens the
 * standalone GET stream instead, the seller streams the same notifications (no result),
 * sse_idle_timeout_ms 200 (such a stream has no deadline).
 * Expectation:
 * 1. (agents `s`, `d`, `g`) the host never reads again until the gateway gives up: at the
 *    idle timeout (`s`, `g`) or the deadline (`d`), whichever the host's stall reaches first
 *    (the other is past the test's own timeout), with reason `host_not_reading` (outcome
 *    `local_error`, status 200, upstream_status 200) in the exchange line, written while the
 *    host still does not read, and in
 *    `adcp_gateway_limit_breaches_total`, and `sse_idle` nowhere; the seller's request is
 *    aborted while it still had events to send; the host's connection is closed without the
 *    end of the chunked body or a final event (only whole progress events, in order, before).
 * 2. (agent `r`) the host stops reading for a while (shorter than its idle timeout), then
 *    reads again: the stream goes on, every event arrives in order, then the result (outcome `ok`).
 * Before the fix: (1) ended `sse_idle` 200 ms into the stall, its exchange line written only
 * once the host read again; (2), with a 200 ms idle timeout, ended `sse_idle` after 275 of
 * the 2049 messages. Before the fix of `g` (daef0fa: the standalone GET stream was ended
 * plainly, an end that waited behind the unread bytes, with the stage parked in its drain
 * wait): no exchange line until the host read again or left (then `resumable_end`), the
 * connection held meanwhile. Measured after it (Node 20, loaded 2-core VM): `d` ended at 3008 ms,
 * ~4.35 MB (272 events) written to the host and 560 of the seller's events sent.
 * Timeouts here are hang guards; the wait of case 2 (600 ms) only makes the host's stall
 * real. The buffers fill well within the 3000 ms deadline (~60 ms).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { sseMessages } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { drainOrClose } from '../../src/response/drain.js';
import { SSE_HOST_BUFFER_BYTES } from '../../src/response/sse-host-writer.js';

const IDLE_MS = 200;
/** 16 KB events: 2048 of them (32 MiB) are several times what loopback socket buffers hold. */
const EVENT_BYTES = 16_000;
const EVENTS = 2048;

function progress(n: number): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n},"message":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(EVENT_BYTES - head.length - tail.length) + tail;
}
const result = (id: number): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`;

/** What the seller did for one request, by JSON-RPC id. */
interface SellerStream {
  events: number;
  /** The seller wrote its last event and the result. */
  ended: boolean;
  /** Resolves when its connection closed (the gateway aborted it, or it ended). */
  closed: Promise<void>;
}
const streams = new Map<number, SellerStream>();

/** The key of the standalone GET stream in `streams` (it answers no id). */
const GET_STREAM = 0;

function startStreamingSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const id = req.method === 'GET' ? GET_STREAM : (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
    let isClosed = false;
    const s: SellerStream = { events: 0, ended: false, closed: new Promise((resolve) => res.once('close', resolve)) };
    void s.closed.then(() => (isClosed = true));
    streams.set(id, s);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    void (async () => {
      // Never silent by choice: the next event is written as soon as TCP takes the last one.
      while (s.events < EVENTS && !isClosed) {
        s.events++;
        if (!res.write(progress(s.events))) await drainOrClose(res);
      }
      if (isClosed) return;
      s.ended = true;
      res.end(id === GET_STREAM ? '' : result(id));
    })();
  });
}

const stack = useSellerAndGateway(startStreamingSeller, (seller) =>
  startObservedGateway(
    agentsYaml({
      s: { url: seller.url, sse_idle_timeout_ms: IDLE_MS, sse_deadline_ms: 60000, max_response_bytes: 1073741824 },
      d: { url: seller.url, sse_idle_timeout_ms: 60000, sse_deadline_ms: 3000, max_response_bytes: 1073741824 },
      r: { url: seller.url, sse_idle_timeout_ms: 10 * IDLE_MS, sse_deadline_ms: 60000, max_response_bytes: 1073741824 },
      g: { url: seller.url, sse_idle_timeout_ms: IDLE_MS },
    }),
  ),
);
const gw = (): ObservedGateway => stack.gateway;

/** The gateway's socket to each host, by the host's port. */
const hostSockets = new Map<number, net.Socket>();

function getStream(agent: string): string {
  return `GET /agents/${agent}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\r\n`;
}

interface StalledHost {
  socket: net.Socket;
  /** Every byte the host read. */
  wire: Buffer[];
}

/** A host that sends a tools/call (or opens the standalone GET stream), reads the first bytes of the answer, and stops reading. */
async function stalledHost(agent: string, id: number): Promise<StalledHost> {
  const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
  const wire: Buffer[] = [];
  const first = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', (c: Buffer) => {
      wire.push(c);
      socket.pause();
      resolve();
    });
  });
  socket.write(id === GET_STREAM ? getStream(agent) : toolCallRequest(id, agent));
  await withTimeout(first, 10_000, 'the response head');
  return { socket, wire };
}

/** Resolves once the gateway holds at least SSE_HOST_BUFFER_BYTES for the host: it then waits for the host to drain. */
async function gatewayWaitsForHost(host: StalledHost): Promise<void> {
  const gatewaySide = (): net.Socket | undefined => hostSockets.get(host.socket.localPort!);
  // At most 1000 looks, 10 ms apart (a hang guard, not a timing).
  for (let k = 0; k < 1000; k++) {
    if ((gatewaySide()?.writableLength ?? 0) >= SSE_HOST_BUFFER_BYTES) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`the gateway never held ${SSE_HOST_BUFFER_BYTES} bytes for the paused host`);
}

/** Reads the rest of the answer: until the end of the chunked body, or until the connection closes. */
async function readRest(host: StalledHost): Promise<{ wire: Buffer; closed: boolean }> {
  const { socket, wire } = host;
  const done = new Promise<boolean>((resolve) => {
    socket.on('data', (c: Buffer) => {
      wire.push(c);
      if (c.length >= 5 && c.subarray(c.length - 5).toString('latin1') === '0\r\n\r\n') resolve(false);
    });
    socket.once('close', () => resolve(true));
    socket.on('error', () => {}); // a reset: 'close' follows
  });
  socket.resume();
  try {
    const closed = await withTimeout(done, 15_000, 'the rest of the answer');
    return { wire: Buffer.concat(wire), closed };
  } finally {
    socket.destroy();
  }
}

/** The body of a chunked response cut short: its whole chunks, and whether its terminating chunk came. */
function partialChunkedBody(wire: Buffer): { head: string; body: string; terminated: boolean } {
  const s = wire.toString('latin1');
  const headEnd = s.indexOf('\r\n\r\n');
  assert.ok(headEnd !== -1, 'a response head');
  let at = headEnd + 4;
  let body = '';
  // One chunk per turn, at most one per byte of the wire.
  for (let k = 0; k < s.length; k++) {
    const eol = s.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = Number.parseInt(s.slice(at, eol), 16);
    if (size === 0) return { head: s.slice(0, headEnd), body: Buffer.from(body, 'latin1').toString('utf8'), terminated: true };
    if (s.length < eol + 2 + size + 2) break;
    body += s.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return { head: s.slice(0, headEnd), body: Buffer.from(body, 'latin1').toString('utf8'), terminated: false };
}

/** The whole SSE events of `body` (an event cut off at its end is not one). */
function wholeEvents(body: string): Array<{ id?: unknown; params?: { progress: number } }> {
  const end = body.lastIndexOf('\n\n');
  return end === -1 ? [] : (sseMessages(body.slice(0, end + 2)) as Array<{ id?: unknown; params?: { progress: number } }>);
}

async function breachSeries(): Promise<string[]> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('adcp_gateway_limit_breaches_total{'));
}

describe('an SSE host that stops reading is not the seller going idle', { timeout: TEST_TIMEOUT_MS }, () => {
  before(() => {
    gw().app.server.on('connection', (socket: net.Socket) => hostSockets.set(socket.remotePort!, socket));
  });

  for (const [agent, id, bound] of [
    ['s', 1, 'the idle timeout'],
    ['d', 3, 'the deadline'],
    ['g', GET_STREAM, 'the idle timeout, on the standalone GET stream'],
  ] as const) {
    test(`a host that never reads again: host_not_reading at ${bound}, its connection closed`, async () => {
      const host = await stalledHost(agent, id);
      await gatewayWaitsForHost(host);
      const seller = streams.get(id)!;
      await withTimeout(seller.closed, 15_000, 'the gateway ending the seller request');
      assert.equal(seller.ended, false, 'the seller still had events to send when the gateway gave up');
      assert.ok(seller.events < EVENTS, `the seller wrote ${seller.events} of ${EVENTS} events`);

      // The exchange is over (its line written) while the host still does not read.
      const line = await gw().exchangeLine(agent, id === GET_STREAM ? null : id, 10_000);
      const { wire, closed } = await readRest(host);
      assert.deepEqual(
        { outcome: line.outcome, reason: line.reason, status: line.status, upstream_status: line.upstream_status },
        { outcome: 'local_error', reason: 'host_not_reading', status: 200, upstream_status: 200 },
      );
      assert.deepEqual(gw().lines.filter((l) => l.reason === 'sse_idle'), []);
      assert.deepEqual(
        (await breachSeries()).filter((l) => l.includes(`agent="${agent}"`)),
        [`adcp_gateway_limit_breaches_total{agent="${agent}",reason="host_not_reading"} 1`],
      );

      assert.equal(closed, true, 'the gateway closed the connection');
      const { head, body, terminated } = partialChunkedBody(wire);
      assert.match(head, /^HTTP\/1\.1 200 /);
      assert.match(head, /\r\ncontent-type: text\/event-stream\r\n/i);
      assert.equal(terminated, false, 'a stream cut short never looks complete');
      const events = wholeEvents(body);
      assert.ok(events.length > 0 && events.length <= seller.events, `${events.length} whole events`);
      events.forEach((m, k) => {
        assert.equal(m.id, undefined, 'no final event for the request');
        assert.equal(m.params?.progress, k + 1);
      });
    });
  }

  test('a host that stops reading for a while (within its idle timeout), then reads: the whole stream, then the result', async () => {
    const host = await stalledHost('r', 2);
    await gatewayWaitsForHost(host);
    // The stall goes on for a while (a lower bound: the host is paused throughout).
    await new Promise((resolve) => setTimeout(resolve, 3 * IDLE_MS));
    assert.equal(streams.get(2)!.ended, false, 'the seller is held back by the host');

    const { wire, closed } = await readRest(host);
    assert.equal(closed, false, 'the chunked body ended');
    const { responses, rest } = parseResponses(wire, 1);
    assert.equal(rest, '');
    assert.equal(responses[0]!.status, 200);
    const messages = sseMessages(responses[0]!.body) as Array<{ id?: unknown; params?: { progress: number } }>;
    assert.equal(messages.length, EVENTS + 1, 'every event of the seller, then the result');
    messages.slice(0, -1).forEach((m, k) => assert.equal(m.params?.progress, k + 1));
    assert.equal(messages.at(-1)!.id, 2);

    const line = await gw().exchangeLine('r', 2, 10_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });
});
