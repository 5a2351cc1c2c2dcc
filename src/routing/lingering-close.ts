/**
 * Lingering close: an answer that closes its connection (`Connection: close`: a 413
 * `request_too_large`, a 404/405 refused from its head, a 503 `draining`, a 400
 * `malformed_http`: routing/closing-answers.ts) reaches the host even while the host is still
 * sending the request's body.
 *
 * Reported failure (hostile trial 23, H1): a host that sends an oversized body without waiting
 * (a plain `fetch` POST of 8 MB to an agent with the default 4 MiB max_request_bytes; a raw
 * socket writing head and 60 MB body at once) usually never got its 413: fetch failed
 * EPIPE/ECONNRESET 9 times in 10. Node's HTTP server destroys the connection as soon as a
 * `close` answer is written (lib/_http_server.js `resOnFinish` -> `socket.destroySoon()`: end,
 * then destroy once 'finish'), and the kernel answers the body bytes still arriving on a
 * closed socket with RST, which discards the 413 the host had not read yet
 * (test/regressions/oversized-body-413-lost-to-reset.test.ts). RFC 9112 §9.6: a server that
 * closes with request bytes unread should half-close and keep reading, so the client reads
 * the answer (nginx's lingering_close).
 *
 * How: each connection of the server gets its own `destroySoon` (the one method Node's HTTP
 * server calls to close a connection after a `close` answer). It half-closes (FIN after the
 * answer's bytes), stops the HTTP parser (its 'data' listener removed: no request after the
 * closing answer is parsed, let alone processed: closing-answers.ts), and reads and discards
 * what the host still sends, then destroys the connection at the first of: the host closes
 * its side once the answer is out, {@link LINGER_MS} after the answer, or
 * {@link LINGER_MAX_BYTES} read. A connection the host has closed already is closed as Node
 * does. `destroyLingering` ends every lingering connection at once: the gateway's close calls
 * it (each time it closes idle connections: app.ts), so no lingering connection outlives the
 * close start by more than {@link LINGER_MS} (one whose answer goes out while draining).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** Longest a connection lingers after its closing answer, in milliseconds (nginx: lingering_time). */
export const LINGER_MS = 2_000;
/** Most request body bytes read and discarded while lingering, in bytes (64 MiB). */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/** The lingering connections of one server. */
export interface LingeringClose {
  /** Destroys every connection lingering now (the gateway closes). */
  destroyLingering(): void;
}

/** Makes every connection `server` accepts from now on linger after a closing answer (see file comment). */
export function lingerAfterClosingAnswers(server: Server): LingeringClose {
  const lingering = new Set<Socket>();
  // Each connection's latest request: the one whose answer closes it (Node dumps its body).
  const latest = new WeakMap<Socket, IncomingMessage>();
  server.on('request', (req: IncomingMessage) => latest.set(req.socket, req));
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => linger(socket, latest.get(socket), lingering);
  });
  return {
    destroyLingering() {
      for (const socket of lingering) socket.destroy();
    },
  };
}

/**
 * Half-closes `socket`; while `req` (the request answered) is still arriving, Node's parser
 * reads and discards its body until it ends, the host closes, or the bounds (file comment).
 */
function linger(socket: Socket, req: IncomingMessage | undefined, lingering: Set<Socket>): void {
  if (socket.destroyed) return;
  const destroyOnceWritten = (): void => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  if (socket.writable) socket.end();
  // Nothing more of the request comes (or the host closed its side already): close as Node does.
  if (req === undefined || req.complete || req.destroyed || !socket.readable || socket.readableEnded) {
    destroyOnceWritten();
    return;
  }
  lingering.add(socket);
  let bytes = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  // Node dumps the body (req._dump: nothing else reads it); counted here, as it is discarded.
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > LINGER_MAX_BYTES) socket.destroy();
  });
  req.once('end', destroyOnceWritten);
  socket.once('end', destroyOnceWritten);
  socket.once('close', () => {
    clearTimeout(timer);
    lingering.delete(socket);
  });
}
