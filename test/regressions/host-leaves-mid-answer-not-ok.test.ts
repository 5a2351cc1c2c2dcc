/**
 * Regression: a host that left in the middle of receiving a large JSON answer was logged
 * `ok`. Once the gateway has handed the answer to the host's response (`reply.send`), Node
 * writes what the socket takes and queues the rest; when the host goes away then, the
 * failed write still ends the response normally ('finish', then 'close', with
 * `writableFinished` true: Node 20 and 22 alike), so the exchange kept the outcome it was
 * given when the answer was settled.
 *
 * Input: seller (node:http) -> gateway -> raw host (net.connect), all on 127.0.0.1. The seller
 * answers a tools/call with ANSWER_BYTES (16 MiB: several times what loopback socket buffers
 * hold, ~4 MiB measured, see host-never-reads-the-answer.test.ts) of JSON, or the same
 * result as one SSE event. The host reads at least LEAVE_AFTER_BYTES (1 MiB) of the answer,
 * then destroys its socket (unread bytes in its receive buffer: the kernel resets the
 * connection).
 * Expectation:
 * 1. JSON: outcome `host_aborted`, status 200, upstream_status 200, reason null, counted as
 *    `adcp_gateway_exchanges_total{outcome="host_aborted"}`; bytes_to_host is what the
 *    gateway handed to the host's connection, the whole body (ANSWER_BYTES), not what the
 *    host read (Node cannot tell how much of a failed write the kernel took: README, Logs).
 *    Before the fix: outcome `ok`.
 * 2. SSE, the same host: `host_aborted`, bytes_to_host between the event bytes the host read
 *    and the whole stream. Before the fix: `ok` too (the gateway holds an event until it is
 *    whole, so it had written this one, and ended the stream, before the host left).
 * 3. Controls: a host that reads the whole answer (JSON, SSE) and a small answer: `ok`, with
 *    bytes_to_host exactly the body the host read; a gateway-made answer (RESPONSE_TOO_LARGE,
 *    `raw_bytes`: the seller's chunked body over max_response_bytes) stays `local_error`.
 * Timeouts are hang guards, never timings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const ANSWER_BYTES = 16 * 1024 * 1024;
const LEAVE_AFTER_BYTES = 1024 * 1024;
const SMALL_LIMIT = 64 * 1024;

/** The seller's result message for `id`: a tools/call result of one text item (not JSON: nothing to lift or dedupe), `bytes` long. */
function resultOf(id: number, bytes: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}
/** The seller's one SSE event carrying the result for `id` (no id: the gateway forwards it as it is). */
function sseFrameOf(id: number): string {
  return `event: message\ndata: ${resultOf(id, ANSWER_BYTES)}\n\n`;
}

/** How the seller answers a request, by its JSON-RPC id. */
type Answer = (res: ServerResponse, id: number) => void;
const bigJson: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(resultOf(id, ANSWER_BYTES));
};
const bigSse: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(sseFrameOf(id));
};
const smallJson: Answer = (res, id) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(resultOf(id, 200));
};
const ANSWERS = new Map<number, Answer>([
  [1, bigJson],
  [2, bigSse],
  [11, bigJson],
  [12, bigSse],
  [13, smallJson],
  [14, bigJson],
]);

const stack = useSellerAndGateway(
  (): Promise<RawSeller> =>
    startRawSeller((req, res) => {
      const id = (JSON.parse(req.body.toString('utf8')) as { id: number }).id;
      ANSWERS.get(id)!(res, id);
    }),
  (seller) =>
    startObservedGateway(
      agentsYaml({
        // Deadlines far past any run: the drain bound (host_not_reading) never comes into it.
        j: { url: seller.url, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000, max_response_bytes: 2 * ANSWER_BYTES },
        s: { url: seller.url, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000, max_response_bytes: 2 * ANSWER_BYTES },
        r: { url: seller.url, response_deadline_ms: 60000, sse_idle_timeout_ms: 60000, max_response_bytes: 2 * ANSWER_BYTES },
        t: { url: seller.url, max_response_bytes: SMALL_LIMIT },
      }),
    ),
);
const gw = (): ObservedGateway => stack.gateway;

/** Says when a host has read enough: given the first chunk read, the last one, and the bytes so far. */
type Enough = (first: Buffer, last: Buffer, size: number) => boolean;

/**
 * A host that sends a tools/call, reads until `enough` says so, then destroys its socket
 * (`leave`) or not; returns the bytes read.
 */
async function host(agent: string, id: number, enough: Enough, leave: boolean): Promise<Buffer> {
  const socket = net.connect(Number(new URL(gw().baseUrl).port), '127.0.0.1');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const done = new Promise<void>((resolve, reject) => {
      socket.once('connect', () => socket.write(toolCallRequest(id, agent)));
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (enough(chunks[0]!, c, size)) {
          if (leave) socket.destroy();
          resolve();
        }
      });
      socket.once('close', () => reject(new Error(`the connection closed after ${size} bytes`)));
      socket.on('error', () => {}); // 'close' follows
    });
    await withTimeout(done, 15_000, `host of ${agent}/${id}`);
    return Buffer.concat(chunks, size);
  } finally {
    socket.destroy();
  }
}

/** True once the host has read at least LEAVE_AFTER_BYTES. */
const pastLeavePoint: Enough = (_first, _last, size) => size >= LEAVE_AFTER_BYTES;

/**
 * True once the host holds one whole response: its Content-Length body, or its chunked body's
 * terminating chunk (the gateway's head comes first, whole, in the first chunk).
 */
const wholeResponse: Enough = (first, last, size) => {
  const headEnd = first.indexOf('\r\n\r\n');
  if (headEnd === -1) return false;
  const length = /\r\ncontent-length: (\d+)/i.exec(first.toString('latin1', 0, headEnd))?.[1];
  if (length !== undefined) return size >= headEnd + 4 + Number(length);
  return last.toString('latin1', last.length - 5) === '0\r\n\r\n';
};

/** The body bytes of a chunked body cut short (whole chunks and the read part of the last one). */
function chunkedPayloadBytes(body: Buffer): number {
  let at = 0;
  let payload = 0;
  // One chunk per turn, at most one per byte.
  for (let k = 0; k < body.length && at < body.length; k++) {
    const eol = body.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = Number.parseInt(body.toString('latin1', at, eol), 16);
    if (size === 0) break;
    payload += Math.min(size, body.length - (eol + 2));
    at = eol + 2 + size + 2;
  }
  return payload;
}

async function exchangeMetric(agent: string): Promise<string[]> {
  const text = await (await fetch(`${gw().baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('adcp_gateway_exchanges_total{') && l.includes(`agent="${agent}"`));
}

describe('a host that leaves while the gateway is still writing the answer', () => {
  test('JSON: host_aborted, not ok; bytes_to_host is the body handed to the connection', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = await host('j', 1, pastLeavePoint, true);
    assert.match(wire.toString('latin1', 0, 16), /^HTTP\/1\.1 200 /);
    const line = await gw().exchangeLine('j', 1, 10_000);
    assert.deepEqual(
      { outcome: line.outcome, reason: line.reason, status: line.status, upstream_status: line.upstream_status },
      { outcome: 'host_aborted', reason: null, status: 200, upstream_status: 200 },
      'ok: the fix is gone, or the socket buffers took the whole answer before the host left (raise ANSWER_BYTES)',
    );
    assert.equal(line.bytes_from_seller, ANSWER_BYTES);
    // Handed to the connection whole (reply.send); the host read only `wire` of it.
    assert.equal(line.bytes_to_host, ANSWER_BYTES);
    assert.ok(wire.length < ANSWER_BYTES, `the host read ${wire.length} bytes: less than the answer`);
    assert.deepEqual(await exchangeMetric('j'), ['adcp_gateway_exchanges_total{agent="j",method="tools/call",outcome="host_aborted",status_class="2xx"} 1']);
  });

  test('SSE: host_aborted; bytes_to_host between the event bytes the host read and the whole stream', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = await host('s', 2, pastLeavePoint, true);
    const headEnd = wire.indexOf('\r\n\r\n');
    assert.match(wire.toString('latin1', 0, headEnd), /\r\ncontent-type: text\/event-stream/i);
    const read = chunkedPayloadBytes(wire.subarray(headEnd + 4));
    const line = await gw().exchangeLine('s', 2, 10_000);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, status: line.status }, { outcome: 'host_aborted', reason: null, status: 200 });
    const toHost = line.bytes_to_host as number;
    assert.ok(toHost >= read && toHost <= Buffer.byteLength(sseFrameOf(2)), `bytes_to_host ${toHost}: at least the ${read} event bytes read, at most the whole stream`);
  });

  test('control: a host that reads the whole answer gets it, ok, bytes_to_host exactly its body (JSON, SSE, small JSON)', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const id of [11, 12, 13]) {
      const wire = await host('r', id, wholeResponse, false);
      const { responses, rest } = parseResponses(wire, 1);
      assert.equal(rest, '');
      assert.equal(responses[0]!.status, 200);
      const expected = id === 11 ? resultOf(id, ANSWER_BYTES) : id === 12 ? sseFrameOf(id) : resultOf(id, 200);
      assert.ok(responses[0]!.body === expected, `${id}: the seller's answer, byte for byte`);
      const line = await gw().exchangeLine('r', id, 10_000);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(expected) });
    }
  });

  test('control: a gateway-made answer (RESPONSE_TOO_LARGE) the host reads stays local_error', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = await host('t', 14, wholeResponse, false);
    const { responses } = parseResponses(wire, 1);
    assert.match(responses[0]!.body, /RESPONSE_TOO_LARGE/);
    const line = await gw().exchangeLine('t', 14, 10_000);
    assert.deepEqual(
      { outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host },
      { outcome: 'local_error', reason: 'raw_bytes', bytes_to_host: Buffer.byteLength(responses[0]!.body) },
    );
  });
});
