/**
 * A request pipelined behind an answer that closes its connection is never processed: not
 * sent to any seller, not refused, not logged, not counted. RFC 9112 §9.6: a server that
 * sends the `close` connection option "MUST NOT process any further requests received on
 * that connection"; §9.3.2: the host sends again the pipelined requests left unanswered when
 * the connection closes.
 *
 * The answers that close a connection (`Connection: close`): the 400 `malformed_http` the MCP
 * handler gives a request with no Host header or with several (routing/handler.ts), a 503
 * `draining` (routing/draining.ts), the 417 `expectation_failed` (app.ts,
 * errors/client-error.ts), each with `Connection: close` ({@link closeConnectionAfter}, or
 * set by the HTTP server's own answer). (A refusal of bytes Node's parser rejected closes it too, but
 * the parser then emits no further request; nor does it after a request that carries
 * `Connection: close` itself: "Data after `Connection: close`", HPE_CLOSED_CONNECTION.)
 *
 * Reported failure (Defect A of a hostile review): a POST with no Host pipelined behind a
 * slow call, then valid calls in the same write: the 400 went out after the slow call's
 * answer with `Connection: close`, and the calls behind it had been routed and forwarded to
 * their seller all the same (each pipelined request was then processed at once); Node's HTTP server destroys the connection once a `close`
 * answer is written, so their answers were never written (routing/draining.ts explains what
 * Node does). A `create_media_buy` ran at the seller while the host, seeing no answer, would
 * send it again (test/regressions/pipelined-behind-closing-refusal-forwarded.test.ts).
 *
 * How: an MCP request whose answer is queued behind another on its connection (its response
 * has no socket yet) is processed only at its turn, once Node gives its response the
 * connection (routing/pipelined-turn.ts), and Node gives none after a closing answer: it
 * destroys the connection once that answer is written (lib/_http_server.js `resOnFinish`, a
 * response with `_last` set), so the waiting requests are released, unprocessed, at the
 * connection's close. A request whose answer has the connection is behind no closing answer:
 * every answer ahead of it was written, and one that closed would have ended the connection.
 * One Node emits after the closing answer was written (Node parses a read's requests one
 * callback at a time, so an earlier request's handler can run, and its closing answer be
 * written, before Node emits the next request of the same read) gets the connection Node has
 * ended (`writableEnded`), and the MCP handler does not process it (one property read).
 *
 * The log says nothing of such a request: the closing answer's own `refused` line is the
 * record (docs/errors.md, `malformed_http`). A refusal made for a request behind it on
 * another route (a 404, a 405), or in the MCP handler's first run, is never written either:
 * a refusal queued behind another answer, or made on an ended connection, is logged and
 * counted once written ({@link whenWritten}, app.ts), as a `draining` one is.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Sets `Connection: close` on `reply` (not sent yet): Node closes the connection once it is
 * written, and the requests pipelined behind it get no turn (see file comment). While the
 * request's body still arrives, the connection first lingers, bounded, reading and discarding
 * it, so the host reads the answer instead of a reset (routing/lingering-close.ts).
 */
export function closeConnectionAfter(reply: FastifyReply): void {
  reply.header('connection', 'close');
}

/**
 * Calls `record` (a refusal's `refused` line and count: app.ts) once Node has written the
 * refusal `res` to its connection ('finish': the kernel took every byte of it); never when
 * it is not written: queued behind an answer that closed the connection, or the connection
 * gone first. For a `draining` refusal (routing/draining.ts) and any refusal queued behind
 * another answer (see file comment). One listener per such refusal.
 */
export function whenWritten(res: ServerResponse, record: () => void): void {
  res.once('finish', record);
}
