/**
 * The answer to a `CONNECT` request (RFC 9110 §9.3.6: a client asking a proxy for a tunnel;
 * the gateway is no proxy and routes no CONNECT): the refusal any other method the gateway does
 * not take gets (routing/unrouted.ts `unroutedRefusal`: 405 `method_not_allowed` with `Allow` on an MCP
 * endpoint's path, else 404 `not_found`), id null, `Connection: close`, then the connection
 * closes. Logged as a `refused` line and counted, as every refusal.
 *
 * Why here and not in a route: Node's HTTP server never routes a CONNECT. It hands the
 * request and its connection, taken out of HTTP, to the server's `connect` listener, and
 * without one it destroys the connection (lib/_http_server.js `onParserExecuteCommon`, Node
 * 20.20, the same on 22 and 24). The connection can carry no other request after it (its
 * parser is gone), so the refusal closes it; bytes the host sent after the CONNECT head are
 * not read. Requests pipelined before it are answered first, in order, as before any refusal
 * written on a connection (errors/earlier-answers.ts; RFC 9112 §9.3.2).
 *
 * Reported failure (a hostile new user's trial 15, L3): `CONNECT 127.0.0.1:4100` on the main
 * port got its connection closed with no response, no `refused` line and no count, while the
 * README says every method, one Fastify does not route included, gets a `refused` line
 * (test/regressions/connect-closed-without-refusal.test.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RefusalReason } from './codes.js';
import { endWithRefusal } from './client-error.js';
import { afterEarlierAnswers } from './earlier-answers.js';

/** What a request the gateway does not route is refused with. */
export interface UnroutedRefusal {
  readonly reason: RefusalReason;
  readonly message: string;
  /** Header fields besides the refusal's own (lower-case names): `allow` for a 405. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Answers the CONNECT `req` on `socket` (the server's `connect` event) with `refusal` once the
 * connection's earlier answers are out, then closes it. Calls `refused` with the status once
 * the refusal is written; never when the connection died first. Errors on the connection (a
 * host resetting it) destroy it: Node's HTTP server no longer listens for them.
 */
export function answerConnect(req: IncomingMessage, socket: Duplex, refusal: UnroutedRefusal, refused: (statusCode: number) => void): void {
  socket.on('error', () => socket.destroy());
  req.on('error', () => socket.destroy());
  afterEarlierAnswers(socket, () => {
    const status = endWithRefusal(socket, refusal.reason, refusal.message, refusal.headers);
    if (status !== undefined) refused(status);
  });
}
