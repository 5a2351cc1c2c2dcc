/**
 * Did any byte of the exchange's answer reach the host's connection? The exchange line must
 * not log as delivered (`status`, `bytes_to_host`, outcome) an answer none of which went out.
 *
 * Reported failure (hostile trial 43, F1): a host that sent a complete request and then
 * half-closed its side (a FIN: `nc -N`, Python `socket.shutdown(SHUT_WR)`) got 0 bytes, while
 * its line said `status` 200 (outcome `host_aborted`, `bytes_to_host` 103) for a forwarded
 * answer, and `status` 200, `bytes_to_host` 611, outcome `local_error`, reason
 * `upstream_unreachable` with the seller down
 * (test/regressions/half-closed-host-logged-delivered.test.ts). Node's HTTP server ends the
 * connection when the client's FIN arrives (lib/_http_server.js `socketOnEnd`: unless
 * `server.httpAllowHalfOpen` is set it calls `socket.end()`: so in the Node 20 installed
 * here and in Node's main branch, the code unchanged between). An answer made after that (the seller's SSE head or answer arriving, a minted error)
 * is not written: `ServerResponse` keeps its bytes in its own buffer once its socket is no
 * longer writable (`_writeRaw`), and drops them once the socket is destroyed, yet
 * `headersSent` is true, `statusCode` is the status set, and the gateway has counted the
 * body it handed over. The connection's 'close' then comes, its exchange ends, and nothing
 * else says the bytes never left.
 *
 * The measure: `socket.bytesWritten` (public: the bytes the socket was given to send, those
 * still queued in it included) when the exchange starts and when it ends. The connection is
 * this answer's alone meanwhile: a request pipelined behind another is processed only at its
 * turn, once the answers ahead of it were all written (routing/pipelined-turn.ts), and the
 * ones behind it wait for this answer's 'finish'. When it did not grow, and the answer never
 * finished, no byte of it reached the host. One read of the
 * getter per exchange (it walks the socket's write queue, empty when an exchange starts:
 * some 60 ns), a second only for an answer that did not finish.
 *
 * Why the FIN stays the host's leaving (the gateway does not set `httpAllowHalfOpen`):
 * - a FIN is what every host that goes away sends: a closed socket, an aborted fetch, an
 *   exited process. The server cannot tell a half-close from a full close until it writes
 *   and gets a reset back. Keeping the connection open after a FIN would keep the seller's
 *   work (the upstream request, which the gateway aborts when the host leaves), and an open
 *   SSE stream (the standalone GET stream has no answer to end it), going for hosts that are
 *   gone, until a write to them fails: up to `response_deadline_ms`, `sse_idle_timeout_ms`
 *   per stream, or for good for a stream the seller keeps busy. A socket kept open by a peer
 *   that sent a FIN is also what slowloris-style holders count on.
 * - `httpAllowHalfOpen` is no public API: not in Node's http documentation, a
 *   property set in the `Server` constructor with the comment "Too lazy to write my own docs"
 *   pointing at squid's `half_closed_clients`.
 * - proxies do the same: nginx, by default (`proxy_ignore_client_abort off`), ends a
 *   proxied request whose client's connection reports EOF ("epoll_wait() reported that
 *   client prematurely closed connection, so upstream connection is closed too") and logs
 *   499; Envoy closes the downstream connection on a client's half-close
 *   (envoyproxy/envoy#17160: "The client does not get any response").
 * - MCP clients never half-close: the SDKs' HTTP clients (fetch/undici, httpx) keep their
 *   side open until they have the answer.
 * A host that half-closes after its request therefore gets no answer; its request may still
 * have reached the seller, and run there, before the gateway saw the FIN (the gateway then
 * aborts it); a request pipelined behind it on the connection is not processed. Its line
 * says `host_aborted`, `status` null, `bytes_to_host` 0 (README, Logs).
 */
import type { IncomingMessage } from 'node:http';

/**
 * The bytes the connection of `request` (the host's HTTP request) had been given to send
 * ({@link answerUnreached}); undefined when it has no socket or the socket cannot say (an
 * injected request's fake one).
 */
export function connectionBytesWritten(request: IncomingMessage): number | undefined {
  // `socket` is typed non-null but is not guaranteed for every request object (e.g. a fake one).
  const socket = request.socket as IncomingMessage['socket'] | null;
  const bytes = socket?.bytesWritten;
  return typeof bytes === 'number' ? bytes : undefined;
}

/**
 * True when no byte of the answer to `request` reached its connection: `response` never
 * finished and the connection was given nothing since it had `bytesBefore`
 * ({@link connectionBytesWritten} when the exchange started). False when either count is
 * unknown. Read once, when the exchange ends (routing/handler.ts `end`).
 */
export function answerUnreached(request: IncomingMessage, response: { readonly writableFinished: boolean }, bytesBefore: number | undefined): boolean {
  if (response.writableFinished || bytesBefore === undefined) return false;
  const bytesNow = connectionBytesWritten(request);
  return bytesNow !== undefined && bytesNow <= bytesBefore;
}
