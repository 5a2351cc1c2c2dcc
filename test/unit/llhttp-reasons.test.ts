/**
 * llhttp-reasons.ts, proven against the parsers themselves: a raw server on 127.0.0.1 writes
 * each malformed response; Node's own http client (llhttp, `process.versions.llhttp`) gives
 * the code and reason, undici (its own llhttp build, WebAssembly) the reason alone, in the
 * message of an HTTPParserError whose `code` is undefined. For each case llhttpCodeOfMessage
 * must map undici's message to Node's code. Cases where undici reports something else (its
 * length mismatch, a socket error, a complete answer) are asserted too: those reasons are not
 * in the table because undici never carries them on a response.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { LLHTTP_REASON_CODES, llhttpCodeOfMessage } from '../../src/routing/llhttp-reasons.js';

const OK = 'HTTP/1.1 200 OK\r\n';
const CHUNKED = `${OK}Transfer-Encoding: chunked\r\n\r\n`;

interface Case { bytes: string; code: string; reason: string }

/** Node's code and reason = undici's reason; the table maps it to that code. */
const PARSER_CASES: Record<string, Case> = {
  'invalid chunk size': { bytes: `${CHUNKED}zz\r\n`, code: 'HPE_INVALID_CHUNK_SIZE', reason: 'Invalid character in chunk size' },
  'chunk size overflow': { bytes: `${CHUNKED}ffffffffffffffffff\r\n`, code: 'HPE_INVALID_CHUNK_SIZE', reason: 'Chunk size overflow' },
  'TE then CL': { bytes: `${OK}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n`, code: 'HPE_INVALID_CONTENT_LENGTH', reason: "Content-Length can't be present with Transfer-Encoding" },
  'TE gzip then CL': { bytes: `${OK}Transfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello`, code: 'HPE_INVALID_CONTENT_LENGTH', reason: "Content-Length can't be present with Transfer-Encoding" },
  // With a Content-Length of 0 undici's own length check (client-h1.js createError) passes,
  // so llhttp's reason reaches the message; any other length gives the mismatch (below).
  'CL 0 then TE': { bytes: `${OK}Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n`, code: 'HPE_INVALID_TRANSFER_ENCODING', reason: "Transfer-Encoding can't be present with Content-Length" },
  'duplicate CL 0': { bytes: `${OK}Content-Length: 0\r\nContent-Length: 0\r\n\r\n`, code: 'HPE_UNEXPECTED_CONTENT_LENGTH', reason: 'Duplicate Content-Length' },
  'invalid character in CL 0x': { bytes: `${OK}Content-Length: 0x\r\n\r\n`, code: 'HPE_INVALID_CONTENT_LENGTH', reason: 'Invalid character in Content-Length' },
  'empty CL': { bytes: `${OK}Content-Length: \r\n\r\nhello`, code: 'HPE_INVALID_CONTENT_LENGTH', reason: 'Empty Content-Length' },
  'invalid header token': { bytes: `${OK}X(y: 1\r\nContent-Length: 0\r\n\r\n`, code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header token' },
  'space before colon': { bytes: `${OK}X-y : 1\r\nContent-Length: 0\r\n\r\n`, code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header token' },
  'space before colon, special header': { bytes: `${OK}Content-Length : 0\r\n\r\n`, code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header field char' },
  'invalid header value char': { bytes: `${OK}X-y: a\x01b\r\nContent-Length: 0\r\n\r\n`, code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header value char' },
  'invalid char in Transfer-Encoding': { bytes: `${OK}Transfer-Encoding: chunked\x01\r\n\r\n0\r\n\r\n`, code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header value char' },
  'invalid status': { bytes: 'HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_STATUS', reason: 'Invalid status code' },
  'four-digit status': { bytes: 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_STATUS', reason: 'Invalid response status' },
  'invalid HTTP version': { bytes: 'HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_VERSION', reason: 'Invalid HTTP version' },
  'invalid major version': { bytes: 'HTTP/x.1 200 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_VERSION', reason: 'Invalid major version' },
  'invalid minor version': { bytes: 'HTTP/1.x 200 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_VERSION', reason: 'Invalid minor version' },
  'not HTTP': { bytes: 'HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_CONSTANT', reason: 'Expected HTTP/, RTSP/ or ICE/' },
  'bare LF after status line': { bytes: 'HTTP/1.1 200 OK\nContent-Length: 0\n\n', code: 'HPE_CR_EXPECTED', reason: 'Missing expected CR after response line' },
  'bare CR in header value': { bytes: `${OK}X-y: a\rb\r\nContent-Length: 0\r\n\r\n`, code: 'HPE_LF_EXPECTED', reason: 'Missing expected LF after header value' },
  'chunk data without CRLF': { bytes: `${CHUNKED}5\r\nhelloXX0\r\n\r\n`, code: 'HPE_STRICT', reason: 'Expected LF after chunk data' },
  'invalid chunk extension name': { bytes: `${CHUNKED}5;a\x01=b\r\nhello\r\n0\r\n\r\n`, code: 'HPE_STRICT', reason: 'Invalid character in chunk extensions name' },
};

/** undici does not report llhttp's reason for these bytes: what it reports, and Node's code. */
const OTHER_CASES: Record<string, { bytes: string; node: string; undici: string }> = {
  // undici checks its own Content-Length first: the parser's reason is lost.
  'CL 5 then TE': { bytes: `${OK}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n`, node: 'HPE_INVALID_TRANSFER_ENCODING', undici: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' },
  'duplicate CL 5': { bytes: `${OK}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`, node: 'HPE_UNEXPECTED_CONTENT_LENGTH', undici: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' },
  'invalid character in CL 5x': { bytes: `${OK}Content-Length: 5x\r\n\r\nhello`, node: 'HPE_INVALID_CONTENT_LENGTH', undici: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' },
  // Any overflowing length differs from the bytes read: "Content-Length overflow" never reaches undici's message.
  'CL overflow': { bytes: `${OK}Content-Length: 99999999999999999999999\r\n\r\n`, node: 'HPE_INVALID_CONTENT_LENGTH', undici: 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' },
  // undici ends the message at its end and closes: "Data after `Connection: close`" is not raised.
  'data after Connection: close': { bytes: `${OK}Connection: close\r\nContent-Length: 2\r\n\r\nhiEXTRA`, node: 'HPE_CLOSED_CONNECTION', undici: 'ok' },
  // Node reports a truncated chunked body as an abort; undici calls llhttp_finish (below).
  'EOF inside a chunk, keep-alive': { bytes: `${CHUNKED}5\r\nhel`, node: 'ECONNRESET', undici: 'UND_ERR_SOCKET' },
};

let server: net.Server;
let port = 0;
let answer = '';

before(async () => {
  server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(Buffer.from(answer, 'latin1')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Outcome { code: string | undefined; text: string }

function nodeGet(): Promise<Outcome> {
  return new Promise((resolve) => {
    const fail = (e: NodeJS.ErrnoException & { reason?: string }): void => resolve({ code: e.code, text: e.reason ?? e.message });
    const req = http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ code: 'ok', text: String(res.statusCode) }));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
}

async function undiciGet(): Promise<Outcome & { name: string }> {
  try {
    const res = await request(`http://127.0.0.1:${port}/`, { reset: true });
    await res.body.text();
    return { name: 'ok', code: 'ok', text: String(res.statusCode) };
  } catch (e) {
    const err = e as Error & { code?: string };
    return { name: err.name, code: err.code, text: err.message };
  }
}

describe('llhttp reason table, against Node http and undici on the same bytes', () => {
  for (const [name, c] of Object.entries(PARSER_CASES)) {
    test(name, async () => {
      answer = c.bytes;
      assert.deepEqual(await nodeGet(), { code: c.code, text: c.reason });
      const u = await undiciGet();
      assert.deepEqual(u, { name: 'HTTPParserError', code: undefined, text: `Response does not match the HTTP/1.1 protocol (${c.reason})` });
      assert.equal(llhttpCodeOfMessage(u.text), c.code);
    });
  }

  for (const [name, c] of Object.entries(OTHER_CASES)) {
    test(`${name}: undici reports ${c.undici}`, async () => {
      answer = c.bytes;
      assert.equal((await nodeGet()).code, c.node);
      assert.equal((await undiciGet()).code, c.undici);
    });
  }

  test('EOF inside a chunk after Connection: close: undici says Invalid EOF state, Node an abort', async () => {
    answer = `${OK}Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel`;
    assert.deepEqual(await nodeGet(), { code: 'ECONNRESET', text: 'aborted' });
    const u = await undiciGet();
    assert.deepEqual(u, { name: 'HTTPParserError', code: undefined, text: 'Response does not match the HTTP/1.1 protocol (Invalid EOF state)' });
    // llhttp_finish's code for it (llhttp api.c), which Node's client does not surface.
    assert.equal(llhttpCodeOfMessage(u.text), 'HPE_INVALID_EOF_STATE');
  });

  test('every code of the table is one a case above produces', () => {
    const produced = new Set([...Object.values(PARSER_CASES).map((c) => c.code), 'HPE_INVALID_EOF_STATE']);
    assert.deepEqual([...LLHTTP_REASON_CODES].sort(), [...produced].sort());
  });

  test('an unlisted reason or no reason maps to nothing', () => {
    assert.equal(llhttpCodeOfMessage('Response does not match the HTTP/1.1 protocol (Expected HTTP/)'), undefined);
    assert.equal(llhttpCodeOfMessage('Response does not match the HTTP/1.1 protocol (Content-Length overflow)'), undefined);
    assert.equal(llhttpCodeOfMessage('other side closed'), undefined);
    assert.equal(llhttpCodeOfMessage(undefined), undefined);
  });
});
