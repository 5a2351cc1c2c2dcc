/**
 * The answer to a request Node's HTTP parser rejects before Fastify sees it (the server's
 * `clientError` event, Fastify's `clientErrorHandler`): a refusal like every other
 * (docs/errors.md, `error.data.reason`), with id `null` (no body was read), written on the
 * socket, which is then closed (the parser's state is lost). Reasons: an oversized request
 * head -> 431 `request_header_too_large`; the request not received in time -> 408
 * `request_timeout`; anything else the parser rejects -> 400 `malformed_http`. A reset
 * connection, or one no longer writable, gets nothing.
 *
 * Reported failure: a host whose headers were over 16 KiB got Fastify's own body
 * (`{"error":"Request Header Fields Too Large",...}`, no JSON-RPC error to read) and the
 * gateway logged and counted nothing (test/integration/client-error.test.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { requestRefusal } from '../mcp/local-error.js';
import type { RefusalReason } from './codes.js';

/** The refusals made for a request Node's HTTP server rejected. */
export type ClientErrorReason = Extract<RefusalReason, 'request_header_too_large' | 'request_timeout' | 'malformed_http'>;

/** The refusal reason for a `clientError` of Node's HTTP server, by its `code`. */
export function clientErrorReason(code: string | undefined): ClientErrorReason {
  if (code === 'HPE_HEADER_OVERFLOW') return 'request_header_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADER_TIMEOUT') return 'request_timeout';
  return 'malformed_http';
}

const MESSAGES: Readonly<Record<ClientErrorReason, string>> = {
  request_header_too_large: 'Request header fields too large: the request line and headers are over the HTTP server maximum.',
  request_timeout: 'Request timeout: the whole request did not arrive within request_timeout_ms.',
  malformed_http: 'Bad request: the HTTP request is malformed.',
};

/**
 * Writes the refusal for `err` on `socket` and closes it; returns the reason and status, or
 * undefined when nothing could be written (a reset or unwritable connection, closed as it is).
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): { reason: ClientErrorReason; statusCode: number } | undefined {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return undefined;
  }
  const reason = clientErrorReason(err.code);
  const { statusCode, body } = requestRefusal(reason, null, MESSAGES[reason]);
  const json = JSON.stringify(body);
  const head =
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\n` +
    `content-type: application/json\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n`;
  // Closed once the answer is flushed (end), or at once should the peer not take it.
  socket.end(head + json, () => socket.destroy());
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
  return { reason, statusCode };
}

/** Longest a refused connection stays open for its answer to be flushed, ms. */
export const CLIENT_ERROR_LINGER_MS = 1000;
