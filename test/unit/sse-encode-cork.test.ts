/**
 * Flushes of the SSE frame batch made in one tick reach the host's socket in one write
 * (src/response/sse-encode.ts corkForThisTick), on a real Node HTTP response over a real
 * socket on 127.0.0.1.
 *
 * Reported failure (bench sse-flood, issue 5): a multi-part flush corked the response and
 * uncorked it at its end, which sent it at once (Node's own cork-until-next-tick is skipped
 * for a socket already corked) and the next chunk's flush in the same tick in a second
 * `writev`: 13,098 `writev` calls where the pass-through made 9,840 for the same events.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
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

test('a multi-part flush and the next flush in the same tick go out in one socket write', async () => {
  const received: Buffer[] = [];
  let writes = -1;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    setImmediate(() => {
      const counter = countSocketWrites(res.socket!);
      const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
      const first = new SseFrameBatch();
      first.raw(chunk, 0, 9);
      first.frame(': between\n');
      first.raw(chunk, 9, 18);
      first.flush(res);
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
