/**
 * Requests Node's HTTP parser rejects before the gateway's routes see them get a JSON-RPC
 * refusal like every other (src/errors/client-error.ts, docs/errors.md): an oversized request
 * head (431 `request_header_too_large`), a malformed request (400 `malformed_http`); the
 * connection is closed, the refusal is counted, and the gateway serves the next request.
 * Reported failure (new-user trial): a host with headers over 16 KiB got Fastify's own body,
 * with nothing logged or counted. Real gateway, raw TCP client on 127.0.0.1.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { clientErrorReason } from '../../src/errors/client-error.js';
import { refusalCount as refusalCountAt } from '../helpers/refusal-count.js';

const stack = useSellerAndGateway(
  () => startRawSeller((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [{ type: 'text', text: 'ok' }] }))),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n`),
);

/** Sends `raw` on a new connection; resolves with everything the gateway wrote once it closed the connection (bounded: 5 s). */
function exchangeRaw(raw: string): Promise<string> {
  const { port } = new URL(stack.gateway.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway did not close the connection; got ${Buffer.concat(chunks).toString()}`));
    }, 5000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset after the answer is fine: the answer is what counts
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    socket.write(raw);
  });
}

function refusalBody(reason: string, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason } } });
}

function expectedAnswer(status: string, body: string): string {
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

const refusalCount = (reason: string): Promise<number> => refusalCountAt(stack.gateway.baseUrl, reason);

describe('requests the HTTP parser rejects', () => {
  test('a request head over 16 KiB: 431 with a JSON-RPC refusal (id null), the connection closed, counted', async () => {
    const before = await refusalCount('request_header_too_large');
    const head = `POST /agents/s/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-big: ${'a'.repeat(20_000)}\r\ncontent-length: 2\r\n\r\n{}`;
    const answer = await exchangeRaw(head);
    const body = refusalBody('request_header_too_large', 'Request header fields too large: the request target and the header field names and values come to 16 KiB or more (the maximum header size of the HTTP server).');
    assert.equal(answer, expectedAnswer('431 Request Header Fields Too Large', body));
    assert.equal(await refusalCount('request_header_too_large'), before + 1);
  });

  test('a malformed request line: 400 malformed_http, and the gateway serves the next request', async () => {
    const answer = await exchangeRaw('NOT A REQUEST\r\n\r\n');
    assert.equal(answer, expectedAnswer('400 Bad Request', refusalBody('malformed_http', 'Bad request: the HTTP request is malformed.')));
    const ok = await rawPost(stack.gateway.agentUrl('s'), toolCall(1, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(ok.status, 200);
    assert.match(ok.text(), /"text":"ok"/);
  });

  test('parser error codes map to their reasons', () => {
    assert.equal(clientErrorReason('HPE_HEADER_OVERFLOW'), 'request_header_too_large');
    assert.equal(clientErrorReason('ERR_HTTP_REQUEST_TIMEOUT'), 'request_timeout');
    assert.equal(clientErrorReason('HPE_INVALID_METHOD'), 'malformed_http');
    assert.equal(clientErrorReason(undefined), 'malformed_http');
  });
});
