/**
 * The SSE stage against the host's socket (src/response/sse-host-writer.ts SSE_HOST_BUFFER_BYTES),
 * through the real gateway, with a raw seller and a raw host (net.connect) on 127.0.0.1:
 * - the seller's chunks that arrive in one socket read go to the host in one socket write,
 *   though each passes the response's 16 KiB high-water mark. Reported (issue 5, bench
 *   sse-flood, strace): the stage waited for a drain after every such write, so each chunk
 *   went in its own `writev`, a turn of the event loop later; the gateway made as many
 *   `writev` calls as the pass-through, each ~17.7 KB. (Only Node 20's 16 KiB high-water
 *   mark made that happen: from Node 22 it is 64 KiB, the bound itself.)
 * - a host that stops reading stops the gateway reading the seller: the seller's writes
 *   block while the gateway's socket to the host holds at most the bound and a chunk, and
 *   once the host reads again every event arrives, intact and in order, then the result.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { startIdDispatchingSeller, type IdAnswer } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { parseResponses, toolCallRequest as post } from '../helpers/http-wire.js';
import { sseMessages } from '../helpers/raw.js';
import { SSE_HOST_BUFFER_BYTES } from '../../src/response/sse-host-writer.js';

/** A progress notification of exactly `bytes` bytes as an SSE block (no id, not the response: forwarded as the seller's bytes). */
function progress(n: number, bytes: number): string {
  const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n},"message":"`;
  const tail = '"}}\n\n';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}
const result = (id: number): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`;
const sseHead = (res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
};

/** 18,000 bytes: over Node's 16 KiB high-water mark, three of them in one 64 KiB socket read. */
const EVENT_BYTES = 18_000;

const answers = new Map<number, IdAnswer>();
const stack = useSellerAndGateway(
  () => startIdDispatchingSeller(answers),
  // The whole stream fits the response bound: only back-pressure can stop the seller.
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 1073741824\n`),
);

/**
 * The bytes the gateway's socket to each host was given, one entry per socket write
 * (`_write` / `_writev`), by the host's port.
 */
const hostWrites = new Map<number, Buffer[]>();
/** The gateway's socket to each host, by the host's port. */
const hostSockets = new Map<number, net.Socket>();

/** A raw host connection (`socket.pause()`/`resume()` stop and restart reading); `done`: the wire once the response ended. */
function host(id: number): { socket: net.Socket; connected: Promise<void>; done: Promise<Buffer> } {
  const chunks: Buffer[] = [];
  const socket = net.connect(Number(new URL(stack.gateway.baseUrl).port), '127.0.0.1');
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const done = new Promise<Buffer>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`host ${id}: no end of response within 20 s`));
    }, 20_000);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // The terminating chunk of a chunked body ends the (only) response.
      if (c.length >= 5 && c.subarray(c.length - 5).toString('latin1') === '0\r\n\r\n') {
        clearTimeout(timer);
        socket.destroy();
        resolve(Buffer.concat(chunks));
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  return { socket, connected, done };
}

describe('SSE host back-pressure (SSE_HOST_BUFFER_BYTES)', () => {
  before(() => {
    stack.gateway.app.server.on('connection', (socket: net.Socket) => {
      const writes: Buffer[] = [];
      hostWrites.set(socket.remotePort!, writes);
      hostSockets.set(socket.remotePort!, socket);
      type Chunk = { chunk: Buffer | string; encoding: BufferEncoding };
      const s = socket as unknown as {
        _write(chunk: Buffer | string, encoding: BufferEncoding, cb: (err?: Error) => void): void;
        _writev(chunks: Chunk[], cb: (err?: Error) => void): void;
      };
      const write = s._write.bind(socket);
      const writev = s._writev.bind(socket);
      s._write = (chunk, encoding, cb) => {
        writes.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding));
        write(chunk, encoding, cb);
      };
      s._writev = (chunks, cb) => {
        writes.push(Buffer.concat(chunks.map((c) => (Buffer.isBuffer(c.chunk) ? c.chunk : Buffer.from(c.chunk, c.encoding)))));
        writev(chunks, cb);
      };
    });
  });

  test('the bound is 64 KiB', () => {
    assert.equal(SSE_HOST_BUFFER_BYTES, 64 * 1024);
  });

  test('chunks read in one turn go to the host in one socket write (issue 5, sse-flood writev)', async () => {
    const id = 1;
    const events = [1, 2, 3].map((n) => progress(n, EVENT_BYTES));
    answers.set(id, (res) => {
      sseHead(res);
      // Three writes in one turn: one writev from the seller, three HTTP chunks, each over 16 KiB.
      for (const e of events) res.write(e);
      setTimeout(() => res.end(result(id)), 100);
    });
    const h = host(id);
    await h.connected;
    const port = h.socket.localPort!;
    h.socket.write(post(id));
    const wire = await h.done;

    const { responses, rest } = parseResponses(wire, 1);
    assert.equal(rest, '');
    assert.equal(responses[0]!.status, 200);
    assert.equal(responses[0]!.body, events.join('') + result(id));
    // The head and the three events in the first socket write; the result (and the end) after.
    const writes = hostWrites.get(port)!;
    const first = writes[0]!.toString('latin1');
    assert.ok(first.startsWith('HTTP/1.1 200'), 'the head leaves with the first events');
    for (let n = 1; n <= 3; n++) assert.ok(first.includes(`"progress":${n},`), `event ${n} in the first write (${writes.map((w) => w.length).join(', ')} bytes per write)`);
    assert.ok(!first.includes('"result"'), 'the result came later');
  });

  test('a host that stops reading stops the gateway reading the seller; nothing is lost', async () => {
    const id = 2;
    /** At most this much is offered; the gateway must stop reading well before. */
    const OFFER_BYTES = 192 * 1024 * 1024;
    let written = 0;
    let eventsWritten = 0;
    let blocked!: (bytes: number) => void;
    const blockedAt = new Promise<number>((resolve) => (blocked = resolve));
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    answers.set(id, (res) => {
      sseHead(res);
      void (async () => {
        while (written < OFFER_BYTES) {
          const e = progress(eventsWritten + 1, EVENT_BYTES);
          eventsWritten++;
          written += e.length;
          if (res.write(e)) continue;
          // Blocked when no drain comes within 500 ms (the gateway stopped reading).
          const drained = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => {
              res.off('drain', onDrain);
              resolve(false);
            }, 500);
            const onDrain = (): void => {
              clearTimeout(timer);
              resolve(true);
            };
            res.once('drain', onDrain);
          });
          if (!drained) {
            blocked(written);
            await finishing;
            break;
          }
        }
        blocked(written); // never blocked: everything was read
        res.end(result(id));
      })();
    });
    const h = host(id);
    await h.connected;
    const port = h.socket.localPort!;
    h.socket.pause();
    h.socket.write(post(id));
    const at = await blockedAt;
    // What can wait between the seller's writes and the paused host is kernel socket buffers
    // (a few MiB each way on loopback) and, in the gateway, at most this bound plus a chunk.
    assert.ok(at < 64 * 1024 * 1024, `the seller wrote ${at} bytes before blocking (of ${OFFER_BYTES} offered)`);
    const held = hostSockets.get(port)!.writableLength;
    assert.ok(held > 0 && held <= SSE_HOST_BUFFER_BYTES + 64 * 1024, `the gateway holds ${held} bytes for the paused host`);
    finish();
    h.socket.resume();
    const { responses, rest } = parseResponses(await h.done, 1);
    assert.equal(rest, '');
    const messages = sseMessages(responses[0]!.body) as Array<{ id?: number; params?: { progress: number } }>;
    assert.equal(messages.length, eventsWritten + 1);
    messages.slice(0, -1).forEach((m, k) => assert.equal(m.params?.progress, k + 1));
    assert.equal(messages.at(-1)!.id, id);
  });
});
