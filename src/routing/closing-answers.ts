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
 * errors/client-error.ts). Each registers itself here ({@link closeConnectionAfter},
 * {@link closesConnection}). (A refusal of bytes Node's parser rejected closes it too, but
 * the parser then emits no further request; nor does it after a request that carries
 * `Connection: close` itself: "Data after `Connection: close`", HPE_CLOSED_CONNECTION.)
 *
 * Reported failure (Defect A of a hostile review): a POST with no Host pipelined behind a
 * slow call, then valid calls in the same write: the 400 went out after the slow call's
 * answer with `Connection: close`, and the calls behind it had been routed and forwarded to
 * their seller all the same; Node's HTTP server destroys the connection once a `close`
 * answer is written, so their answers were never written (routing/draining.ts explains what
 * Node does). A `create_media_buy` ran at the seller while the host, seeing no answer, would
 * send it again (test/regressions/pipelined-behind-closing-refusal-forwarded.test.ts).
 *
 * Which requests can be behind such an answer: one whose answer is queued behind another on
 * its connection (its response has no socket yet), and one Node emits after the closing
 * answer was written: Node parses a read's requests one callback at a time and runs the
 * nextTick queue between its callbacks, so an earlier request's handler can run, and its
 * closing answer be written, before Node emits the next request of the same read; Node then
 * gives that request the connection it has ended (`writableEnded`), and writes nothing more
 * on it. Any other request has the connection, open: it is processed at once, as ever (the
 * MCP handler reads its response's socket and that socket's `writableEnded`, no more).
 *
 * When: the handler decides every closing answer in its first run, before this check
 * (routing/handler.ts). A request that may be behind one is decided a turn of the event loop
 * later ({@link whenProcessable}, `setImmediate`), for every request Node parsed before it on
 * the connection has had that first run by then: Node parses requests in order, and the
 * handler of one runs either as Node emits it (no body to read) or once its body has ended,
 * which Node emits on `process.nextTick` once the body is whole, and it is whole before the
 * next request is parsed (HTTP/1.1 framing). The nextTick queue drains before the check
 * phase, where `setImmediate` callbacks run. So a POST with no Host followed in the same
 * write by a DELETE (no body: its handler runs first) still counts for the DELETE.
 *
 * Behind which: answers go out in the order of their requests, and a closing answer made for
 * a request parsed after this one does not count. Which of two queued answers comes first is
 * not known (Node's queue is not reachable: a closure), but the connection tells: an answer
 * that has it, or that is written, is ahead of every answer still queued. So a request is
 * processed when its answer has the connection, open (every answer ahead of it was written,
 * none closing), or when no closing answer was made on its connection; not when the
 * connection is ended or gone, nor when a closing answer has the connection or was written;
 * and when both wait in the queue, it waits until one of them gets the connection (at each
 * 'finish' of the answer being written, when Node gives the connection to the next:
 * errors/earlier-answers.ts explains `_httpMessage`, an internal field, only read). That wait
 * holds only a request pipelined on a connection where the host sent a request with no Host
 * (or several) or an unmet Expect, or during a shutdown. Should a Node version drop
 * `_httpMessage`, such a waiting request is not processed (the host sends it again).
 *
 * The log says nothing of such a request: the closing answer's own `refused` line is the
 * record (docs/errors.md, `malformed_http`). A refusal made for a request behind it on
 * another route (a 404, a 405), or in the MCP handler's first run, is never written either:
 * a refusal queued behind another answer, or made on an ended connection, is logged and
 * counted once written ({@link whenWritten}, app.ts), as a `draining` one is.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { answerBeingWritten } from '../errors/earlier-answers.js';

/** Per connection: the answers made on it that close it (usually one). */
const closers = new WeakMap<Duplex, ServerResponse[]>();

/** A queued request waiting to learn whether it comes before or after a closing answer. */
interface Waiter {
  res: ServerResponse;
  then: (processable: boolean) => void;
}

/** Per connection: its waiters, while any waits (one 'finish' listener per connection, on the answer being written). */
const waiting = new WeakMap<Duplex, Waiter[]>();

/** Registers `res`, an answer on `socket` (its connection) that carries `Connection: close`. */
export function closesConnection(socket: Duplex, res: ServerResponse): void {
  const list = closers.get(socket);
  if (list === undefined) closers.set(socket, [res]);
  else list.push(res);
}

/** Sets `Connection: close` on `reply` (not sent yet) and registers it as closing its connection. */
export function closeConnectionAfter(reply: FastifyReply): void {
  reply.header('connection', 'close');
  closesConnection(reply.request.raw.socket, reply.raw);
}

/**
 * Calls `then` with whether the request answered by `res`, on `socket` (its connection: its
 * response had no socket when its handler ran, or the socket was ended), may be processed:
 * false when an answer ahead of it closes the connection, or the connection is ended or gone
 * (see file comment). Called a turn of the event loop later, or once the connection tells;
 * never when the connection dies first.
 */
export function whenProcessable(socket: Duplex, res: ServerResponse, then: (processable: boolean) => void): void {
  setImmediate(() => {
    const processable = verdict(socket, res);
    if (processable !== undefined) then(processable);
    else wait(socket, { res, then });
  });
}

/**
 * Whether the request answered by `res` is processed (see file comment); undefined while
 * both it and every closing answer of `socket` wait in the connection's queue.
 */
function verdict(socket: Duplex, res: ServerResponse): boolean | undefined {
  // Gone, or ended after a closing answer: nothing more is written on it.
  if (socket.destroyed || socket.writableEnded) return false;
  if (res.socket !== null) return true;
  const closing = closers.get(socket);
  if (closing === undefined) return true;
  for (const closer of closing) {
    if (closer.socket !== null || closer.writableFinished) return false;
  }
  return undefined;
}

function wait(socket: Duplex, waiter: Waiter): void {
  const list = waiting.get(socket);
  if (list !== undefined) {
    list.push(waiter);
    return;
  }
  waiting.set(socket, [waiter]);
  watch(socket);
}

/** Decides the waiters of `socket` again once the answer being written is written (Node has then given the connection to the next). */
function watch(socket: Duplex): void {
  const due = answerBeingWritten(socket);
  if (due == null) {
    // Nothing on the connection while answers wait in its queue: it is closing.
    settle(socket, () => false);
    return;
  }
  due.once('finish', () => {
    settle(socket, (res) => verdict(socket, res));
    if (waiting.has(socket)) watch(socket);
  });
}

/**
 * Gives each waiter of `socket` its verdict, keeping those still undecided (a waiter is only
 * added from a `setImmediate` callback, never while this runs).
 */
function settle(socket: Duplex, judge: (res: ServerResponse) => boolean | undefined): void {
  const list = waiting.get(socket) ?? [];
  waiting.delete(socket);
  const still: Waiter[] = [];
  for (const waiter of list) {
    const processable = judge(waiter.res);
    if (processable === undefined) still.push(waiter);
    else waiter.then(processable);
  }
  if (still.length > 0) waiting.set(socket, still);
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
