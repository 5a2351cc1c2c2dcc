/**
 * Flushes of the SSE frame batch made in one tick reach the host's socket in one write
 * (src/response/sse-encode.ts corkSocketForThisTick), on a real Node HTTP response over a
 * real socket on 127.0.0.1, and a flush followed by `end()` in the same tick sends its events
 * before the terminating chunk.
 *
 * Reported failures:
 * - bench sse-flood (issue 5): a multi-part flush corked the response and uncorked it at its
 *   end, which sent it at once (Node's own cork-until-next-tick is skipped for a socket
 *   already corked) and the next chunk's flush in the same tick in a second `writev`: 13,098
 *   `writev` calls where the pass-through made 9,840 for the same events;
 * - review of the first fix (2026-12-01): it corked the *response* to the end of the tick;
 *   on Node 22 and 24 a corked response holds its chunked writes and `end()` sends the
 *   terminating chunk before them (nodejs/node#50167), so a flush then a local error's
 *   `end()` in one tick lost the events. CI runs this file on Node 22 too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { SseFrameBatch } from '../../src/response/sse-encode.js';

/** Counts the socket-level writes (`_write` / `_writev`: one each per syscall batch) from now on. */
function countSocketWrites(socket: Socket): { count: () => number } {
  let n = 0;
  const s = socket as Socket & { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void };
  const write = s._write.bind(s);
  s._write = (...a: unknown[]) => {
    n++;
    write(...a);
  };
  if (s._writev) {
    const writev = s._writev.bind(s);
    s._writev = (...a: unknown[]) => {
      n++;
      writev(...a);
    };
  }
  return { count: () => n };
}

/** A multi-part flush: two raw blocks of one chunk around a comment (`data: 1`, `: between`, `data: 2`). */
function flushThreeParts(res: http.ServerResponse): void {
  const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
  const batch = new SseFrameBatch();
  batch.raw(chunk, 0, 9);
  batch.frame(': between\n');
  batch.raw(chunk, 9, 18);
  batch.flush(res);
}

test('a multi-part flush and the next flush in the same tick go out in one socket write (sse-flood writev count)', async () => {
  const received: Buffer[] = [];
  let writes = -1;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    setImmediate(() => {
      const counter = countSocketWrites(res.socket!);
      flushThreeParts(res);
      const second = new SseFrameBatch();
      second.frame('data: 3\n\n');
      second.flush(res);
      setImmediate(() => {
        writes = counter.count();
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/' }, (res) => {
          res.on('data', (c: Buffer) => received.push(c));
          res.on('end', resolve);
          res.on('error', reject);
        })
        .on('error', reject);
    });
  } finally {
    server.close();
  }
  assert.equal(Buffer.concat(received).toString('utf8'), 'data: 1\n\n: between\ndata: 2\n\ndata: 3\n\n');
  assert.equal(writes, 1);
});

test('a multi-part flush then end() in the same tick: the events, then the terminating chunk (nodejs/node#50167)', async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n');
    setImmediate(() => {
      flushThreeParts(res);
      res.end('data: last\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    // Raw bytes off the socket: a chunk after the terminator is a protocol error an HTTP
    // client may not surface for the response at hand.
    const wire = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.on('error', reject);
    });
    const body = wire.slice(wire.indexOf('\r\n\r\n') + 4);
    assert.ok(body.endsWith('0\r\n\r\n'), JSON.stringify(body));
    assert.equal(body.indexOf('0\r\n\r\n'), body.length - 5, `terminator before the end: ${JSON.stringify(body)}`);
    assert.equal(dechunk(body), ': open\ndata: 1\n\n: between\ndata: 2\n\ndata: last\n\n');
  } finally {
    server.close();
  }
});

/** The payload of an HTTP/1.1 chunked body (exact: throws on a malformed chunk). */
function dechunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.slice(at, eol), 16);
    assert.ok(Number.isInteger(size), `chunk size at ${at}: ${JSON.stringify(body.slice(at, at + 10))}`);
    if (size === 0) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    assert.equal(body.slice(eol + 2 + size, eol + 4 + size), '\r\n');
    at = eol + 4 + size;
  }
}
