/**
 * The answer to a request Node's HTTP parser rejects before Fastify sees it (the server's
 * `clientError` event, Fastify's `clientErrorHandler`): a refusal like every other
 * (docs/errors.md, `error.data.reason`), with id `null` (no body was read), written on the
 * socket, which is then closed (the parser's state is lost). Reasons: an oversized request
 * head -> 431 `request_header_too_large`; the request not received in time -> 408
 * `request_timeout`; anything else the parser rejects -> 400 `malformed_http`. A reset
 * connection, or one no longer writable, gets nothing. On a connection whose earlier requests
 * still have answers due (HTTP/1.1 pipelining), the refusal waits for them: they go out
 * first, in order (RFC 9112 §9.3.2; earlier-answers.ts). Never inside a response already
 * started: when the bytes cut the request whose own answer is being written, its head sent,
 * the connection is closed, nothing written, nothing reported ({@link answerClientError}).
 *
 * Reported failure: a host whose headers were over 16 KiB got Fastify's own body
 * (`{"error":"Request Header Fields Too Large",...}`, no JSON-RPC error to read) and the
 * gateway logged and counted nothing (test/integration/client-error.test.ts).
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { requestRefusal } from '../mcp/local-error.js';
import type { RefusalReason } from './codes.js';
import { afterEarlierAnswers, answerBeingWritten } from './earlier-answers.js';
import { OWN_JSON_HEAD_LINES, OWN_JSON_HEADERS } from './own-answer-headers.js';

/** The refusals made for a request Node's HTTP server rejected. */
export type ClientErrorReason = Extract<RefusalReason, 'request_header_too_large' | 'request_timeout' | 'malformed_http'>;

/** The refusal reason for a `clientError` of Node's HTTP server, by its `code`. */
export function clientErrorReason(code: string | undefined): ClientErrorReason {
  if (code === 'HPE_HEADER_OVERFLOW') return 'request_header_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADER_TIMEOUT') return 'request_timeout';
  return 'malformed_http';
}

const MESSAGES: Readonly<Record<ClientErrorReason, string>> = {
  request_header_too_large: 'Request header fields too large: the request target and the header field names and values come to 16 KiB or more (the maximum header size of the HTTP server).',
  request_timeout: 'Request timeout: the whole request did not arrive within request_timeout_ms.',
  malformed_http: 'Bad request: the HTTP request is malformed.',
};

/**
 * Called with the refusal once it is written (for its log line and count). `unused`: the
 * refusal is a `request_timeout` of a connection that sent no byte ({@link unusedConnection}):
 * no request was refused.
 */
export type ClientErrorRefused = (reason: ClientErrorReason, statusCode: number, unused: boolean) => void;

/**
 * Whether the `clientError` `reason` on `socket` is the request timeout of a connection that
 * never sent a byte: no request, only a connection opened ahead of one that never came, which
 * Node's HTTP server times out from when it accepted it (docs/configuration.md
 * request_timeout_ms). Browsers open such connections on their own: Chromium's speculative
 * preconnects, each of which left a `refused` line `request_timeout`, `http_method` null, and a
 * count (hostile trial 35, leftover 3: test/regressions/preconnect-timeout-logged-refused.test.ts).
 * Such a connection still gets the 408; app.ts logs it at debug level and counts nothing. One
 * that sent part of a request is a refused request as before.
 */
export function unusedConnection(reason: ClientErrorReason, socket: Duplex): boolean {
  return reason === 'request_timeout' && (socket as Partial<Socket>).bytesRead === 0;
}

/**
 * Connections refused, or whose refusal waits for the answers before it. Node's parser stays
 * failed: it reports every later chunk the host sends, and the connection's request timeout,
 * as another `clientError`; the connection gets one refusal.
 */
const refusedConnections = new WeakSet<Duplex>();

/**
 * Writes the refusal for `err` on `socket` (a connection of Node's HTTP server, from its
 * `clientError` event) and closes it: at once, or once the answers to the connection's
 * earlier requests are all written (earlier-answers.ts). Calls `refused` when it is written;
 * never when nothing could be written (a reset or unwritable connection, closed as it is;
 * a connection that died before its turn), nor for a connection refused already, nor when
 * the request the bytes cut has its answer started (the connection closed, nothing written).
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex, refused: ClientErrorRefused): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) {
    socket.destroy();
    return;
  }
  if (refusedConnections.has(socket)) return;
  refusedConnections.add(socket);
  // The request these bytes cut has its own answer under way (its head written: a GET's
  // stream, whose body no one read; an answer that closes the connection, its body still
  // coming): a refusal now would be a second response head inside that answer's body (hostile
  // trial 54, F2: a 408 inside an open chunked SSE answer, the request counted as an exchange
  // and as a refusal). The connection closes, as Node's own clientError handler does once a
  // head is sent (lib/_http_server.js socketOnError); the answer's own exchange line and count
  // are its record (test/unit/client-error-started-response.test.ts).
  const due = answerBeingWritten(socket);
  if (due != null && !due.req.complete && due.headersSent) {
    socket.destroy();
    return;
  }
  const reason = clientErrorReason(err.code);
  // Judged now: bytes the host sends from here on (there is no parser left to read them) do not count.
  const unused = unusedConnection(reason, socket);
  afterEarlierAnswers(socket, () => {
    const statusCode = endWithRefusal(socket, reason, MESSAGES[reason]);
    if (statusCode !== undefined) refused(reason, statusCode, unused);
  });
}

/**
 * Writes the refusal `reason` (id null, `message`) as a whole HTTP/1.1 response on `socket`, a
 * connection no longer in Node's HTTP server's hands (its parser failed, or gave it to the
 * `connect` listener), with `Connection: close` and any `headers` (lower-case names), and
 * closes it once the answer is flushed, or after {@link CLIENT_ERROR_LINGER_MS} should the
 * peer not take it. Returns the status written, or undefined when the socket cannot be
 * written (it is destroyed as it is).
 */
export function endWithRefusal(socket: Duplex, reason: RefusalReason, message: string, headers: Readonly<Record<string, string>> = {}): number | undefined {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return undefined;
  }
  const { statusCode, body } = requestRefusal(reason, null, message);
  const json = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head =
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\n` +
    `${OWN_JSON_HEAD_LINES}${extra}content-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n`;
  // Closed once the answer is flushed (end), or at once should the peer not take it.
  socket.end(head + json, () => socket.destroy());
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
  return statusCode;
}

/** Longest a refused connection stays open for its answer to be flushed, ms. */
export const CLIENT_ERROR_LINGER_MS = 1000;

/** The message of the `expectation_failed` refusal. */
export const EXPECTATION_FAILED_MESSAGE = 'Expectation failed: the gateway meets no Expect header but 100-continue.';

/**
 * Answers a request whose `Expect` header asks for something other than `100-continue`, from
 * Node's HTTP server's `checkExpectation` event (app.ts), before any route: 417
 * `expectation_failed` (RFC 9110 §10.1.1: a server MAY answer 417 to an expectation it does
 * not meet; §15.5.18), a JSON-RPC error body for id `null` (the body is never read), the
 * connection closed (its body, if any, unread). Returns the status sent, for the refusal's log
 * line and count. `Expect: 100-continue` never comes here: Node answers `100 Continue` and
 * routes the request.
 *
 * Reported failure (a new user's trial, 2026-12-03): without a `checkExpectation` listener
 * Node answered a bare 417 with an empty body: no JSON-RPC error, no log line, no count
 * (test/regressions/expect-header-bare-417.test.ts).
 */
export function answerUnmetExpectation(res: ServerResponse): number {
  const { statusCode, body } = requestRefusal('expectation_failed', null, EXPECTATION_FAILED_MESSAGE);
  const json = JSON.stringify(body);
  res.writeHead(statusCode, { ...OWN_JSON_HEADERS, 'content-length': Buffer.byteLength(json), connection: 'close' });
  res.end(json);
  return statusCode;
}
