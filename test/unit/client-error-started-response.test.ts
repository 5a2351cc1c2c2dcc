/**
 * errors/client-error.ts answerClientError never writes a refusal inside a response already
 * started (hostile trial 54, F2). Node's request timeout fires for a request whose body never
 * came whole even when that request's own response is being written (a GET, whose body no
 * one reads, answered with an open SSE stream): the 408 was written as raw bytes inside the
 * open chunked body (a second response head, no terminating chunk) and counted as a refusal
 * of a request already answered. The gateway refuses such GETs from the head now
 * (test/regressions/get-with-body-408-inside-sse-stream.test.ts); this is the rule underneath,
 * for any response: its head sent, the connection is closed as Node's own handler does
 * (lib/_http_server.js: no 408 once `_headerSent`), no refusal written or counted.
 *
 * Input: a real node:http server on 127.0.0.1 (requestTimeout 500 ms, checked every 100 ms)
 * whose `clientError` goes to answerClientError; a raw host sends `Content-Length: 10` and 5
 * bytes. Expected: to a GET answered at once with an open chunked stream, that stream's head
 * and chunk only, then the close, no refusal reported; control: to a POST whose handler waits
 * for the body, the 408 refusal as before, reported once.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { answerClientError, type ClientErrorReason } from '../../src/errors/client-error.js';
import { writeAndRead } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const refused: Array<{ reason: ClientErrorReason; status: number }> = [];
let server: Server;
let port = 0;

before(async () => {
  server = createServer({ requestTimeout: 500, headersTimeout: 500, connectionsCheckingInterval: 100 }, (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: x\n\n'); // then open; the body is never read
    }
    // A POST: answered once its body is read, which never happens here.
    req.on('end', () => res.end('done'));
  });
  server.on('clientError', (err: Error & { code?: string }, socket) => answerClientError(err, socket, (reason, status) => refused.push({ reason, status })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a request timeout behind a started response', { timeout: TEST_TIMEOUT_MS }, () => {
  test('GET answered with an open stream: the stream, then the close; no 408 inside it, no refusal', async () => {
    refused.length = 0;
    const wire = await writeAndRead(port, 'GET /s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n', ['abcde'], 8_000);
    assert.equal(wire.closed, true);
    assert.deepEqual(wire.text.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 200']);
    assert.ok(wire.text.endsWith('\r\n\r\n9\r\ndata: x\n\n\r\n'), JSON.stringify(wire.text));
    assert.deepEqual(refused, []);
  });

  test('control: a POST whose answer has not started gets the 408 refusal, reported once', async () => {
    refused.length = 0;
    const wire = await writeAndRead(port, 'POST /s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n', ['abcde'], 8_000);
    assert.equal(wire.closed, true);
    assert.deepEqual(wire.text.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 408']);
    assert.match(wire.text, /"reason":"request_timeout"/);
    assert.deepEqual(refused, [{ reason: 'request_timeout', status: 408 }]);
  });
});
