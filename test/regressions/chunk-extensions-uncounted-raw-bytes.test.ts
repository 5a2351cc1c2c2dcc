/**
 * Regression (review 37, F1, Medium): a seller's raw bytes were counted after undici removed
 * the HTTP/1.1 chunked framing, so chunk extensions (`1;aaaa…\r\n`: undici 7 has no limit on
 * them, where Node's own HTTP server caps them at 16 KiB since CVE-2024-22019) were never
 * counted. Measured: 800 chunks of 1 byte each, a 1 MiB extension per chunk, 839 MB on the
 * wire counted as 875 bytes, forwarded `ok`, 1.8 s of CPU. The same held for the standalone
 * GET stream, whose framing was never charged at all.
 *
 * Now (src/routing/wire-meter.ts): every byte the seller's connection delivers while a
 * response is in progress (head, chunk framing, extensions, trailers: the wire bytes) is
 * counted from that socket. A response with a total (`max_response_bytes`: every answer but an
 * SSE stream without a cumulative bound) may take at most 6 x max_response_bytes + 65,536 wire
 * bytes (the body and 5 framing bytes per body byte, what 1-byte chunks take); past that the request is aborted, its connection closed, and the host answered
 * RESPONSE_TOO_LARGE `raw_bytes`, limit_bytes max_response_bytes, observed_bytes the wire
 * bytes. The standalone GET stream (and a long-lived one) may take at most 131,072 + 5 x its body
 * bytes of framing (wire bytes minus the body bytes undici delivered); past that it ends plainly,
 * outcome `resumable_end`, reason `sse_wire_overhead`, its connection closed.
 *
 * Input: a raw HTTP seller on 127.0.0.1 (net.Server, raw bytes) behind the real gateway; agents
 * with max_response_bytes 10,000 (wire cap 125,536); a host POSTing JSON-RPC with fetch, a GET
 * stream read with fetch.
 * Expectations:
 * - 1-byte chunks with a 256 KiB extension each (a 75-byte tools/call answer, 19.7 MB on the
 *   wire): `raw_bytes`, limit_bytes 10,000, observed_bytes past 125,536 by at most two socket
 *   reads, the seller's socket closed with most of the flood unwritten; the same body in one
 *   honest chunk passes;
 * - 200 heads of `103 Early Hints` (~200 KB) before the answer: `raw_bytes` before its head;
 * - a chunked answer of exactly 125,536 wire bytes passes; of 125,537, `raw_bytes` with
 *   observed_bytes exactly 125,537, the seller's socket closed;
 * - keep-alive: two answers of 85,000 wire bytes each, one after the other on one seller
 *   connection, both pass (the second is not charged for the first);
 * - an SSE answer to a POST whose events carry 256 KiB extensions: `raw_bytes` as the
 *   request's final event, the seller's socket closed;
 * - the standalone GET stream whose events carry 256 KiB extensions: ends plainly
 *   (`resumable_end`, `sse_wire_overhead`), the seller's socket closed; the same events
 *   honestly chunked (one chunk per event): every one delivered, ends `ok`.
 * Before the fix: 5 of the 8 tests failed (every flood was read whole and forwarded `ok`, the
 * over-cap answer too); the controls and the keep-alive case passed.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { finalSseError, rawPost, sseMessages, toolCall } from '../helpers/raw.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { toolResponse } from '../support/raw-seller.js';

const LIMIT = 10_000;
/** The wire cap of a response with a total: 6 x max_response_bytes + 65,536. */
const CAP = 6 * LIMIT + 65_536;
/** The tiny-chunk case's max_response_bytes (the re-read's probe: 65,536). */
const TINY_LIMIT = 65_536;
/** Notifications of the GET stream written one byte per chunk. */
const TINY_NOTES = 400;
/** One socket read of the gateway (the meter checks between reads). */
const READ = 65_536;
/** A chunk extension of 256 KiB (`;aaaa…`). */
const EXT = 'a'.repeat(256 * 1024);
const FLOOD_EVENTS = 100;

/** One connection the seller accepted: the cases it answered, whether it closed, the bytes written. */
interface SellerConn {
  readonly cases: string[];
  closed: boolean;
  readonly closedP: Promise<void>;
  written: number;
}

interface FramingSeller {
  readonly url: string;
  readonly conns: SellerConn[];
  close(): Promise<void>;
}

type Write = (bytes: string) => Promise<boolean>;

const JSON_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
const SSE_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n';
const chunk = (data: string, ext = ''): string => `${Buffer.byteLength(data).toString(16)}${ext ? `;${ext}` : ''}\r\n${data}\r\n`;
const LAST = '0\r\n\r\n';
/** A 103 Early Hints head of ~1 KB; {@link HINTS} of them come before the hints case's answer (~200 KB). */
const HINT = `HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload; x=${'a'.repeat(1000)}\r\n\r\n`;
const HINTS = 200;
/** The tools/call answer the seller writes (id 1: the flood's). */
const okAnswer = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
/** The tiny-chunk case's answer: 40,000 bytes. */
const tinyAnswer = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'x'.repeat(40_000 - okAnswer(id).length + 2) }] });
/** The flood's wire bytes, were it read whole: its body's bytes, one chunk each with the extension. */
const FLOOD_BYTES = okAnswer(1).length * (EXT.length + 7);
const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${n}}}\n\n`;

/**
 * A chunked JSON answer of exactly `total` wire bytes: the head, one chunk holding `body` whose
 * extension pads the total, the last chunk.
 */
function answerOfWireBytes(body: string, total: number): string {
  const fixed = JSON_HEAD.length + chunk(body, 'x').length + LAST.length;
  const answer = JSON_HEAD + chunk(body, 'x'.repeat(1 + total - fixed)) + LAST;
  assert.equal(Buffer.byteLength(answer), total);
  return answer;
}

/** Answers one request by its `case` query parameter; resolves once the answer is written (or the socket closed). */
async function answer(kind: string, id: number | undefined, write: Write): Promise<void> {
  const body = okAnswer(id ?? 0);
  switch (kind) {
    case 'flood':
      await write(JSON_HEAD);
      for (const byte of body) if (!(await write(chunk(byte, EXT)))) return;
      await write(LAST);
      return;
    case 'hints':
      for (let n = 0; n < HINTS; n++) if (!(await write(HINT))) return;
      await write(JSON_HEAD + chunk(body) + LAST);
      return;
    case 'honest':
      await write(JSON_HEAD + chunk(body) + LAST);
      return;
    case 'at-cap':
      await write(answerOfWireBytes(body, CAP));
      return;
    case 'past-cap':
      await write(answerOfWireBytes(body, CAP + 1));
      return;
    case 'keepalive':
      await write(answerOfWireBytes(body, 85_000));
      return;
    case 'sse-flood':
      await write(SSE_HEAD);
      for (let n = 1; n <= FLOOD_EVENTS; n++) if (!(await write(chunk(note(n), EXT)))) return;
      await write(chunk(`event: message\ndata: ${body}\n\n`) + LAST);
      return;
    case 'get-flood':
      await write(SSE_HEAD);
      for (let n = 1; n <= FLOOD_EVENTS; n++) if (!(await write(chunk(note(n), EXT)))) return;
      await write(LAST);
      return;
    case 'tiny': {
      // A 40,000-byte answer (61% of TINY_LIMIT) one byte per chunk: 6 wire bytes per body byte.
      const big = tinyAnswer(id ?? 0);
      await write(JSON_HEAD + [...big].map((c) => chunk(c)).join('') + LAST);
      return;
    }
    case 'get-tiny': {
      let all = '';
      for (let n = 1; n <= TINY_NOTES; n++) all += note(n);
      await write(SSE_HEAD + [...all].map((c) => chunk(c)).join('') + LAST);
      return;
    }
    case 'get-honest':
      await write(SSE_HEAD);
      for (let n = 1; n <= FLOOD_EVENTS; n++) if (!(await write(chunk(note(n))))) return;
      await write(LAST);
      return;
    default:
      await write('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n');
  }
}

/** A seller that reads HTTP/1.1 requests (Content-Length bodies) one after the other on each connection and answers them raw. */
async function startFramingSeller(): Promise<FramingSeller> {
  const conns: SellerConn[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let closeNow: () => void = () => undefined;
    const conn: SellerConn = { cases: [], closed: false, written: 0, closedP: new Promise<void>((resolve) => (closeNow = resolve)) };
    conns.push(conn);
    socket.on('close', () => {
      sockets.delete(socket);
      conn.closed = true;
      closeNow();
    });
    socket.on('error', () => undefined);
    const write: Write = (bytes) =>
      new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(false);
        conn.written += Buffer.byteLength(bytes);
        if (socket.write(bytes)) return resolve(true);
        const done = (): void => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve(!socket.destroyed);
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    let pending = Buffer.alloc(0);
    let busy = false;
    const serveNext = async (): Promise<void> => {
      if (busy) return;
      busy = true;
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) break;
        const body = pending.subarray(end + 4, end + 4 + length).toString('utf8');
        pending = pending.subarray(end + 4 + length);
        const kind = new URL(head.split(' ')[1]!, 'http://x').searchParams.get('case') ?? '';
        conn.cases.push(kind);
        const id = body ? (JSON.parse(body) as { id?: number }).id : undefined;
        await answer(kind, id, write);
      }
      busy = false;
    };
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      void serveNext();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    conns,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

const CASES = ['flood', 'honest', 'hints', 'at-cap', 'past-cap', 'keepalive', 'sse-flood', 'get-flood', 'get-honest', 'tiny', 'get-tiny'] as const;
const stack = useSellerAndGateway(startFramingSeller, (seller) =>
  startObservedGateway(agentsYaml(Object.fromEntries(CASES.map((c) => [c, { url: `${seller.url}?case=${c}`, max_response_bytes: c === 'tiny' ? TINY_LIMIT : LIMIT, response_deadline_ms: 10_000 }])))),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
type AdcpError = { code: string; details: Record<string, unknown> };
type ToolAnswer = { id: number; result: { isError?: boolean; content: { text: string }[]; structuredContent?: { adcp_error?: AdcpError } } };

const call = async (agent: string, id: number): Promise<ToolAnswer> => {
  const r = await rawPost(stack.gateway.agentUrl(agent), toolCall(id, 'get_products'), HEADERS);
  assert.equal(r.status, 200);
  return r.json() as ToolAnswer;
};
/** The seller connection that answered `kind` (the only one: each agent has its own case; the agents share one origin, so a connection may have answered other cases before). */
const connOf = (kind: string): SellerConn => {
  const found = stack.seller.conns.filter((c) => c.cases.includes(kind));
  assert.equal(found.length, 1, `${kind}: one seller connection`);
  return found[0]!;
};

describe('chunk extensions count as raw (wire) bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('1-byte chunks with 256 KiB extensions: raw_bytes, observed_bytes the wire bytes, the seller socket closed (was forwarded ok, 875 bytes counted)', async () => {
    const got = await call('flood', 1);
    assert.equal(got.result.isError, true, JSON.stringify(got).slice(0, 300));
    const err = got.result.structuredContent!.adcp_error!;
    assert.equal(err.code, 'RESPONSE_TOO_LARGE');
    assert.equal(err.details.reason, 'raw_bytes');
    assert.equal(err.details.limit_bytes, LIMIT);
    const observed = err.details.observed_bytes as number;
    assert.ok(observed > CAP && observed <= CAP + 2 * READ, `observed_bytes ${observed}`);
    const conn = connOf('flood');
    await withTimeout(conn.closedP, 5_000, 'the seller socket closes');
    // What the seller wrote before its socket closed: what the gateway read, and the socket buffers (a few MB on loopback).
    assert.ok(conn.written < FLOOD_BYTES / 2, `the seller stopped early: ${conn.written} of ${FLOOD_BYTES} bytes written`);
    const line = await stack.gateway.exchangeLine('flood', 1);
    assert.deepEqual([line.outcome, line.reason], ['local_error', 'raw_bytes']);
  });

  test('control: the same body in one honest chunk passes', async () => {
    const got = await call('honest', 2);
    assert.equal(got.result.isError, undefined);
    assert.equal(got.result.content[0]!.text, 'ok');
    assert.equal((await stack.gateway.exchangeLine('honest', 2)).outcome, 'ok');
  });

  test('200 heads of 103 Early Hints (~200 KB) before the answer: raw_bytes before its head (was forwarded ok)', async () => {
    const got = await call('hints', 8);
    const err = got.result.structuredContent?.adcp_error;
    assert.equal(err?.details.reason, 'raw_bytes', JSON.stringify(got).slice(0, 300));
    assert.equal(err.details.limit_bytes, LIMIT);
    const observed = err.details.observed_bytes as number;
    assert.ok(observed > CAP && observed <= CAP + 2 * READ, `observed_bytes ${observed}`);
    await withTimeout(connOf('hints').closedP, 5_000, 'the seller socket closes');
    const line = await stack.gateway.exchangeLine('hints', 8);
    assert.deepEqual([line.outcome, line.reason], ['local_error', 'raw_bytes']);
    // A bound broken, not a failure of the gateway's: no `unexpected error` warning.
    assert.deepEqual(stack.gateway.lines.filter((l) => l.agent === 'hints' && l.msg !== 'exchange').map((l) => l.msg), []);
  });

  test('exactly 6 x max_response_bytes + 65,536 wire bytes pass; one byte more is raw_bytes, observed_bytes exactly that', async () => {
    const at = await call('at-cap', 3);
    assert.equal(at.result.content[0]!.text, 'ok');
    const past = await call('past-cap', 4);
    assert.deepEqual(past.result.structuredContent?.adcp_error?.details, { limit_bytes: LIMIT, observed_bytes: CAP + 1, reason: 'raw_bytes' });
    await withTimeout(connOf('past-cap').closedP, 5_000, 'the seller socket closes');
  });

  test('keep-alive: the second answer on a seller connection is not charged for the first', async () => {
    const first = await call('keepalive', 5);
    const second = await call('keepalive', 6);
    assert.deepEqual([first.result.content[0]!.text, second.result.content[0]!.text], ['ok', 'ok']);
    // One seller connection answered both, one after the other (the agents share one origin, so
    // one pool: the answers before them may have used it too).
    assert.deepEqual(connOf('keepalive').cases.slice(-2), ['keepalive', 'keepalive']);
  });

  test("an SSE answer to a POST whose events carry 256 KiB extensions: raw_bytes as the request's final event", async () => {
    const r = await rawPost(stack.gateway.agentUrl('sse-flood'), toolCall(7, 'get_products'), HEADERS);
    assert.equal(r.status, 200);
    const { err } = finalSseError(r.text(), 7, LIMIT, 'raw_bytes');
    const observed = err.details.observed_bytes as number;
    assert.ok(observed > CAP && observed <= CAP + 2 * READ, `observed_bytes ${observed}`);
    await withTimeout(connOf('sse-flood').closedP, 5_000, 'the seller socket closes');
  });

  test('the standalone GET stream whose events carry 256 KiB extensions ends sse_wire_overhead, its seller socket closed (was read to its end, ok)', async () => {
    const res = await fetch(stack.gateway.agentUrl('get-flood'), { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 200);
    const text = await withTimeout(res.text(), 10_000, 'the GET stream');
    const delivered = sseMessages(text).length;
    assert.ok(delivered < FLOOD_EVENTS, `${delivered} events delivered`);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'get-flood');
    assert.deepEqual([line.outcome, line.reason], ['resumable_end', 'sse_wire_overhead']);
    const conn = connOf('get-flood');
    await withTimeout(conn.closedP, 5_000, 'the seller socket closes');
    assert.ok(conn.written < (FLOOD_EVENTS * EXT.length) / 2, `the seller stopped early: ${conn.written} bytes written`);
  });

  test('control: the same GET stream honestly chunked delivers every event and ends ok', async () => {
    const res = await fetch(stack.gateway.agentUrl('get-honest'), { headers: { accept: 'text/event-stream' } });
    const text = await withTimeout(res.text(), 10_000, 'the GET stream');
    assert.equal(sseMessages(text).length, FLOOD_EVENTS);
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'get-honest');
    assert.equal(line.outcome, 'ok');
  });

  // A re-read of the fix (Low-Medium): at 2 x max_response_bytes + 64 KiB (framing up to 64 KiB +
  // the body bytes on a GET stream), honest 1-byte chunks were refused: a 40,000-byte answer at
  // max_response_bytes 65,536 got raw_bytes, and a GET stream written byte by byte ended
  // sse_wire_overhead after ~16 KiB. Both failed before.
  test('control: an answer at 61% of max_response_bytes sent one byte per chunk passes whole', async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('tiny'), toolCall(21, 'x'), HEADERS), undefined, 'the POST');
    assert.equal(r.status, 200);
    assert.equal(r.text(), tinyAnswer(21));
    assert.equal(r.text().length, 40_000);
    const line = await stack.gateway.exchangeLine('tiny', 21);
    assert.deepEqual([line.outcome, line.reason], ['ok', null]);
  });

  test('control: a GET stream written one byte per chunk delivers every event and ends ok', async () => {
    const res = await fetch(stack.gateway.agentUrl('get-tiny'), { headers: { accept: 'text/event-stream' } });
    const text = await withTimeout(res.text(), 10_000, 'the GET stream');
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.agent === 'get-tiny');
    assert.deepEqual([sseMessages(text).length, line.outcome, line.reason], [TINY_NOTES, 'ok', null]);
  });
});
