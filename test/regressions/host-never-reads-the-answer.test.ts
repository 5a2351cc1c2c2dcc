/**
 * Regression: a host that never reads the answer the gateway has ENDED held it forever. Once
 * an answer is handed to the host's response (a JSON body to `reply.send`; an SSE stream's
 * last event and its end), Node writes what the socket takes and holds the rest; from a host
 * that does not read, the socket takes only what the kernel buffers hold (~4 MiB measured on
 * loopback), so a larger answer never finished: the response's 'close' never came, so the
 * exchange wrote no `exchange` line, was never counted in the metrics, and its connection and
 * the bytes Node held for it (up to a whole max_response_bytes answer) stayed forever (no
 * timer bounded it: the JSON deadline was cleared once the answer was settled, the SSE
 * stage's timers once the stream ended, and Fastify's connectionTimeout is 0).
 *
 * Input: seller (node:http) -> gateway -> raw host (net.connect), all on 127.0.0.1. The host
 * sends a tools/call and stops reading at once (`socket.pause()` before any byte arrives).
 * The seller answers with ANSWER_BYTES (16 MiB: several times what loopback socket buffers
 * take from a host that does not read):
 * - agent `j`: a JSON result (response_deadline_ms 4000: the answer takes 0.4-1 s to arrive and
 *   be sent on a loaded 2-core VM, so the deadline runs out while the host holds it back);
 * - agent `e`: an SSE stream whose one event is the result: the gateway ends the stream
 *   normally (sse_idle_timeout_ms 300);
 * - agent `c`: an SSE stream whose first event (a progress notification of ANSWER_BYTES) is
 *   completed, once the gateway holds all of it (adcp_gateway_agent_buffered_response_bytes),
 *   by a write that also crosses max_response_bytes: the gateway writes the event, then
 *   its minted `sse_cumulative` error event, and ends the stream (sse_idle_timeout_ms 300);
 * - agent `r` (control; response_deadline_ms and sse_idle_timeout_ms 60000): the same JSON
 *   and SSE answers to a host that reads once the gateway holds bytes for it;
 * - agent `p` (control; response_deadline_ms 500): a reading host pipelines a call (HTTP/1.1)
 *   behind an SSE stream the seller holds open past that deadline, then ends.
 * Expectation:
 * 1. (`j`, `e`, `c`) the exchange writes its line: outcome `local_error`, reason
 *    `host_not_reading`, status 200, upstream_status 200, bytes_to_host the whole answer
 *    handed over; counted in `adcp_gateway_limit_breaches_total{reason="host_not_reading"}`
 *    and `adcp_gateway_exchanges_total{outcome="local_error"}`; the host's connection is
 *    reset (not closed plainly: what the kernel held for the host is dropped, so it reads
 *    well under a megabyte more), and what it reads then is never a complete answer (a JSON body short of its
 *    Content-Length; a chunked SSE body without its terminating chunk and without a final
 *    event for the request).
 * 2. (`r`) a host that reads within the bound gets the whole answer (outcome `ok`).
 * 3. (`p`) the stream is not cut when the pipelined call's deadline passes behind it: the
 *    host gets both answers whole, on an open connection, the stream's `ok`. A first version
 *    of the fix cut the call's answer, ended while it waited behind the stream (and the
 *    stream with it). Since a pipelined call is sent only at its turn
 *    (src/routing/pipelined-turn.ts; a hostile new-user trial 15, H1), no answer waits so:
 *    the call, its deadline passed while it waited, is answered `pipeline_wait` without
 *    being sent.
 * Before the fix, (1) wrote no exchange line at all (for `c`, the line said `sse_cumulative`
 * once the host went away). Timeouts here are hang guards, never timings; the wait of (3)
 * (3 x its deadline) only makes the wait behind the stream real.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { startIdDispatchingSeller } from '../support/raw-seller.js';
import { expectedErrorJson, observedMsAtLeast, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { sseMessages } from '../helpers/raw.js';
import { bufferedGauge } from '../helpers/agent-metrics.js';
import { pausedHost as startPausedHost } from '../helpers/paused-host.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER_BYTES = 16 * 1024 * 1024;
const JSON_DEADLINE_MS = 4000;
const PIPELINED_DEADLINE_MS = 500;
const LARGE_LIMIT = 2 * ANSWER_BYTES;
/** Most a host can read after its connection was reset (its own receive queue); a plain close let it read ~4 MiB (see assertCut). */
const RESET_READ_MAX_BYTES = 1024 * 1024;

/** A progress notification event of exactly `bytes`, without its blank line when `open`. */
function progressEvent(n: number, bytes: number, open = false): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n},"message":"`;
  const tail = open ? '"}}\n' : '"}}\n\n';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}
/** Agent `c`'s first event, all but its blank line: the gateway holds it whole until that line comes. */
const OPEN_EVENT = progressEvent(1, ANSWER_BYTES, true);
/** Agent `c`'s limit: the first event fits (with its blank line), the next one does not. */
const C_LIMIT = OPEN_EVENT.length + 10;

/** The seller's result message for `id`: a tools/call result of one text item, ANSWER_BYTES long. */
function resultOf(id: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  return head + 'x'.repeat(ANSWER_BYTES - head.length - tail.length) + tail;
}

/** How the seller answers a request, by its JSON-RPC id. */
type Answer = (res: ServerResponse, id: number) => void;
const jsonAnswer: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(resultOf(id));
};
const sseResultAnswer: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`event: message\ndata: ${resultOf(id)}\n\n`);
};
/** Agent `c`'s rest: the first event's blank line, then an event over the limit. */
let completeOpenEvent: (() => void) | undefined;
const sseCumulativeAnswer: Answer = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(OPEN_EVENT);
  completeOpenEvent = () => void res.write('\n' + progressEvent(2, 1000));
};
/** Agent `p`'s stream (id 21): one progress event, then open until the test ends it with the result. */
let endStream: (() => void) | undefined;
const openStreamAnswer: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(progressEvent(1, 200));
  endStream = () => res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
};
const smallJsonAnswer: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'small' }] } }));
};
const ANSWERS = new Map<number, Answer>([
  [1, jsonAnswer],
  [2, sseResultAnswer],
  [3, sseCumulativeAnswer],
  [11, jsonAnswer],
  [12, sseResultAnswer],
  [21, openStreamAnswer],
  [22, smallJsonAnswer],
]);

const stack = useSellerAndGateway(() => startIdDispatchingSeller(ANSWERS), (seller) =>
  startObservedGateway(
    agentsYaml({
      j: { url: seller.url, response_deadline_ms: JSON_DEADLINE_MS, max_response_bytes: LARGE_LIMIT },
      e: { url: seller.url, sse_idle_timeout_ms: 300, max_response_bytes: LARGE_LIMIT },
      c: { url: seller.url, sse_idle_timeout_ms: 300, max_response_bytes: C_LIMIT },
      r: { url: seller.url, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000, max_response_bytes: LARGE_LIMIT },
      p: { url: seller.url, response_deadline_ms: PIPELINED_DEADLINE_MS, sse_idle_timeout_ms: 60000 },
    }),
  ),
);
const gw = (): ObservedGateway => stack.gateway;

/** The gateway's socket to each host, by the host's port. */
const hostSockets = new Map<number, net.Socket>();

/** A host that sends a tools/call and reads nothing (paused before any byte arrives). */
const pausedHost = (agent: string, id: number): Promise<net.Socket> => startPausedHost(gw().baseUrl, agent, id);

/**
 * Reads everything the host can still get, until its connection closes, or until `complete`
 * says the answer is whole (given the first chunk read, the last one, and the bytes so far).
 */
async function readRest(socket: net.Socket, complete?: (first: Buffer, last: Buffer, size: number) => boolean): Promise<{ wire: Buffer; closed: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const done = new Promise<boolean>((resolve) => {
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (complete?.(chunks[0]!, c, size) === true) resolve(false);
    });
    socket.once('close', () => resolve(true));
    socket.on('error', () => {}); // a reset: 'close' follows
  });
  socket.resume();
  try {
    const closed = await withTimeout(done, 15_000, 'the rest of the answer');
    return { wire: Buffer.concat(chunks), closed };
  } finally {
    socket.destroy();
  }
}

/** The head of a response on the wire, and its body bytes (latin1, as on the wire). */
function headAndBody(wire: Buffer): { head: string; body: string } {
  const s = wire.toString('latin1');
  const end = s.indexOf('\r\n\r\n');
  assert.ok(end !== -1, 'a response head');
  return { head: s.slice(0, end), body: s.slice(end + 4) };
}

/** The whole chunks of a chunked body cut short (utf8), and whether its terminating chunk came. */
function chunkedBody(body: string): { text: string; terminated: boolean } {
  let at = 0;
  let text = '';
  // One chunk per turn, at most one per byte.
  for (let k = 0; k < body.length; k++) {
    const eol = body.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = Number.parseInt(body.slice(at, eol), 16);
    if (size === 0) return { text: Buffer.from(text, 'latin1').toString('utf8'), terminated: true };
    if (body.length < eol + 2 + size + 2) break;
    text += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return { text: Buffer.from(text, 'latin1').toString('utf8'), terminated: false };
}

async function metricLines(prefix: string, agent: string): Promise<string[]> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(prefix) && l.includes(`agent="${agent}"`));
}

/** The bytes the gateway holds for `agent`'s in-flight responses (its buffered-bytes gauge). */
const heldBytes = (agent: string): Promise<number> => bufferedGauge(gw().baseUrl, agent);

/** Expectation 1: the exchange line, the metrics, and what the host can still read. */
async function assertCut(agent: string, id: number, socket: net.Socket): Promise<string> {
  const line = await gw().exchangeLine(agent, id, 10_000);
  assert.deepEqual(
    { outcome: line.outcome, reason: line.reason, status: line.status, upstream_status: line.upstream_status },
    { outcome: 'local_error', reason: 'host_not_reading', status: 200, upstream_status: 200 },
    'ok or sse_cumulative: the socket buffers took the whole answer (raise ANSWER_BYTES); deadline_exceeded: the answer took longer than JSON_DEADLINE_MS to arrive',
  );
  assert.ok((line.bytes_to_host as number) >= ANSWER_BYTES, `bytes_to_host ${String(line.bytes_to_host)}: the whole answer was handed over`);
  assert.deepEqual(await metricLines('adcp_gateway_limit_breaches_total{', agent), [
    `adcp_gateway_limit_breaches_total{agent="${agent}",reason="host_not_reading"} 1`,
  ]);
  assert.deepEqual(await metricLines('adcp_gateway_exchanges_total{', agent), [
    `adcp_gateway_exchanges_total{agent="${agent}",method="tools/call",outcome="local_error",status_class="2xx"} 1`,
  ]);

  const { wire, closed } = await readRest(socket);
  assert.equal(closed, true, 'the gateway closed the connection');
  // Reset, not closed plainly: a plain close left the socket buffers' worth (4,157,952 bytes
  // measured) queued for the host in the gateway's kernel; a reset drops it, and the host
  // reads only what its own kernel had received (~128 KB here). src/response/host-reset.ts
  assert.ok(wire.length < RESET_READ_MAX_BYTES, `${wire.length} bytes read after the cut: the connection was closed, not reset`);
  const { head, body } = headAndBody(wire);
  assert.match(head, /^HTTP\/1\.1 200 /);
  return head + '\r\n\r\n' + body;
}

describe('a host that never reads the answer the gateway ended', () => {
  before(() => {
    gw().app.server.on('connection', (socket: net.Socket) => hostSockets.set(socket.remotePort!, socket));
  });

  test('JSON: host_not_reading once the rest of response_deadline_ms runs out, its connection closed, the body short', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = await pausedHost('j', 1);
    const { head, body } = headAndBody(Buffer.from(await assertCut('j', 1, socket), 'latin1'));
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    assert.equal(length, ANSWER_BYTES, "content-length: the whole answer");
    assert.ok(body.length < length, `${body.length} of ${length} body bytes: a truncated body never looks complete`);
  });

  test('SSE ended with the result: host_not_reading sse_idle_timeout_ms after the end, its connection closed, the stream cut short', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = await pausedHost('e', 2);
    const { head, body } = headAndBody(Buffer.from(await assertCut('e', 2, socket), 'latin1'));
    assert.match(head, /\r\ncontent-type: text\/event-stream\r\n/i);
    const { terminated } = chunkedBody(body);
    assert.equal(terminated, false, 'a stream cut short never looks complete');
  });

  test('SSE ended with a minted error (sse_cumulative): host_not_reading, its connection closed, no final event', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = await pausedHost('c', 3);
    // At most 1000 looks, 10 ms apart (a hang guard, not a timing).
    for (let k = 0; k < 1000 && (await heldBytes('c')) < OPEN_EVENT.length; k++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok((await heldBytes('c')) >= OPEN_EVENT.length, 'the gateway holds the whole first event, waiting for its blank line');
    completeOpenEvent!();

    const { head, body } = headAndBody(Buffer.from(await assertCut('c', 3, socket), 'latin1'));
    assert.match(head, /\r\ncontent-type: text\/event-stream\r\n/i);
    const { text, terminated } = chunkedBody(body);
    assert.equal(terminated, false, 'a stream cut short never looks complete');
    const end = text.lastIndexOf('\n\n');
    const events = end === -1 ? [] : (sseMessages(text.slice(0, end + 2)) as Array<{ id?: unknown }>);
    assert.deepEqual(
      events.filter((m) => m.id !== undefined),
      [],
      'no final event for the request',
    );
  });

  test('control: a host that reads once the gateway holds bytes for it gets the whole JSON answer and SSE stream', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const id of [11, 12]) {
      const socket = await pausedHost('r', id);
      const gatewaySide = (): net.Socket | undefined => hostSockets.get(socket.localPort!);
      // At most 1000 looks, 10 ms apart (a hang guard, not a timing).
      for (let k = 0; k < 1000 && (gatewaySide()?.writableLength ?? 0) === 0; k++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok((gatewaySide()?.writableLength ?? 0) > 0, 'the gateway holds bytes for the paused host');

      // The JSON body's Content-Length read, or the SSE body's terminating chunk (the head comes first, whole).
      const complete = (first: Buffer, last: Buffer, size: number): boolean => {
        const head = first.toString('latin1', 0, first.indexOf('\r\n\r\n') + 4);
        const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
        return length !== undefined ? size >= head.length + Number(length) : last.toString('latin1', last.length - 5) === '0\r\n\r\n';
      };
      const { wire, closed } = await readRest(socket, complete);
      assert.equal(closed, false, 'the answer ended, the connection open');
      const { responses, rest } = parseResponses(wire, 1);
      assert.equal(rest, '');
      assert.equal(responses[0]!.status, 200);
      // The seller's message, unchanged (its text is no JSON: nothing to lift or dedupe).
      const messages = id === 11 ? [JSON.parse(responses[0]!.body) as unknown] : sseMessages(responses[0]!.body);
      assert.ok(JSON.stringify(messages) === `[${resultOf(id)}]`, 'the whole answer');

      const line = await gw().exchangeLine('r', id, 10_000);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    }
  });

  test('control: a call pipelined behind a stream the host reads waits for it, past its deadline; the stream is not cut, the call is answered pipeline_wait, unsent', { timeout: TEST_TIMEOUT_MS }, async () => {
    const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    // Two requests at once (HTTP/1.1 pipelining): the stream (21), then a call (22) that
    // waits for its turn behind the stream on the connection.
    socket.write(toolCallRequest(21, 'p') + toolCallRequest(22, 'p'));
    // At most 1000 looks, 10 ms apart (a hang guard, not a timing).
    const seen = (id: number): boolean => stack.seller.requests.some((r) => r.body.includes(`"id":${id}`));
    for (let k = 0; k < 1000 && !seen(21); k++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(seen(21), 'the seller got the stream\'s call');
    // The call's deadline, counted from its arrival, runs out while it waits (a lower bound:
    // only makes the wait real).
    await new Promise((resolve) => setTimeout(resolve, 3 * PIPELINED_DEADLINE_MS));
    endStream!();

    const complete = async (): Promise<{ responses: ReturnType<typeof parseResponses>['responses'] }> => {
      // At most 1000 looks, 10 ms apart (a hang guard).
      for (let k = 0; k < 1000; k++) {
        // The JSON answer comes last, and ends the wire with its closing brace.
        const wire = Buffer.concat(chunks).toString('latin1');
        if (wire.includes('"id":22') && wire.endsWith('}')) return parseResponses(Buffer.concat(chunks), 2);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.fail(`both answers: ${Buffer.concat(chunks).toString('latin1').slice(0, 400)}`);
    };
    const { responses } = await complete();
    assert.equal(socket.destroyed, false, 'the connection stays open');
    socket.destroy();
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200],
    );
    assert.deepEqual((sseMessages(responses[0]!.body).at(-1) as { id: number }).id, 21);
    const waited = observedMsAtLeast(responses[1]!.body, 3 * PIPELINED_DEADLINE_MS);
    assert.equal(
      responses[1]!.body,
      expectedErrorJson({ id: 22, method: 'tools/call', toolName: 'x', reason: 'pipeline_wait', limitMs: PIPELINED_DEADLINE_MS, observedMs: waited }),
    );
    assert.equal(seen(22), false, 'the call was not sent');
    const stream = await gw().exchangeLine('p', 21, 10_000);
    assert.deepEqual({ outcome: stream.outcome, reason: stream.reason }, { outcome: 'ok', reason: null });
    const call = await gw().exchangeLine('p', 22, 10_000);
    assert.deepEqual({ outcome: call.outcome, reason: call.reason, status: call.status }, { outcome: 'local_error', reason: 'pipeline_wait', status: 200 });
  });
});
