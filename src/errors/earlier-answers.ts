/**
 * The refusal of bytes Node's HTTP parser rejected waits for the answers to the requests the
 * connection carried before them (HTTP/1.1 pipelining): RFC 9112 §9.3.2, a server answers
 * pipelined requests in the order it received them, so those answers go out first, then the
 * refusal, then the connection closes.
 *
 * Reported failure (a new user's trial, 2026-12-03, F1): five valid POSTs then
 * `GARBAGE / HTTP/1.1` in one write got the 400 `malformed_http` as the first and only answer
 * on the connection, which was closed at once; the calls already forwarded (four reached
 * their sellers) were logged `host_aborted`, their answers thrown away. A host matching
 * answers by order read the 400 as its first call's and believed nothing was sent
 * (test/regressions/pipelined-bad-request-answers-first.test.ts).
 *
 * Bounded by those answers themselves: each ends by its own bounds (response_deadline_ms,
 * sse_idle_timeout_ms and sse_deadline_ms, `host_not_reading`), as it would with no refusal
 * behind it; the connection, which they hold open anyway, waits no longer than they do. An
 * answer with no deadline of its own, the standalone GET stream or a long-lived stream (MCP
 * 2026-07-28 `subscriptions/listen`), gets its agent's sse_deadline_ms once a refusal waits
 * behind it ({@link boundWhenAwaited}), counted from the stream's first start as on a
 * request's stream: at it the stream ends plainly (outcome `resumable_end`, reason
 * `sse_deadline`; the host's client reconnects with its last event id, as after
 * sse_idle_timeout_ms: docs/errors.md), then the refusal goes out and the connection closes.
 * Why not wait as long as the stream lives: it lives until the host closes it, and the
 * connection can carry nothing more (its parser has failed), so the refusal would never go
 * out. Why not end it at once: it is the host's live channel, and the bytes behind it are the
 * host's mistake, not the stream's, so it keeps the time any stream of its agent is given.
 * Reported failure (a hostile trial, Finding 9): a refusal pipelined behind a standalone GET
 * stream waited as long as the stream lived, with no bound
 * (test/regressions/pipelined-bad-request-behind-get-stream-unbounded.test.ts). What the host
 * sends meanwhile is dropped by Node's failed parser.
 *
 * The same bound holds for any answer the gateway queues behind such a stream: a valid
 * request pipelined behind it (it waits for its turn, not sent to its seller until the stream
 * has ended: routing/pipelined-turn.ts), a refusal a route makes, an ops endpoint's answer
 * ({@link boundAnswersAhead}: routing/pipelined-turn.ts, errors/local-reply.ts `refuse`,
 * app.ts, ops/routes.ts).
 * At the stream's sse_deadline_ms it ends plainly and the queued answer goes out, then the
 * connection carries on (keep-alive). Reported failure (Defect B of a hostile review): a
 * call pipelined behind a standalone GET stream waited as long as the stream lived
 * (test/regressions/pipelined-call-behind-get-stream-unbounded.test.ts); so did a `GET /healthz`
 * (test/regressions/pipelined-ops-request-behind-get-stream-unbounded.test.ts).
 *
 * How the answers due are found: Node's HTTP server gives a connection's responses its
 * socket one at a time, in request order. The one being written is the socket's
 * `_httpMessage`; the later ones wait in a queue that is not reachable (the connection's
 * state, a closure). When one emits 'finish', Node's own 'finish' listener, its first
 * (lib/_http_server.js `resOnFinish`), detaches it and assigns the socket to the next at
 * once, before any listener added later runs. So `_httpMessage` is set exactly while an
 * answer is due on the connection, and following it from 'finish' to 'finish' walks them
 * all in order. `_httpMessage` is an internal, undocumented field, only read here; checked
 * on Node 20.20, 22.23 and 24.21 (`parserOnIncoming`, `resOnFinish`,
 * `ServerResponse.prototype.assignSocket` / `detachSocket`, the same in all three). No public
 * API names a connection's queued responses without a cost on every request (the
 * `http.server.response.finish` diagnostics channel publishes an object per response).
 * Should a Node version drop the field, the refusal goes out at once, as before this rule,
 * and an answer queued behind a stream bounds nothing, as before {@link boundAnswersAhead}.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** A server connection as Node's HTTP server keeps it: the response now being written, if any. */
interface HttpConnection {
  _httpMessage?: ServerResponse | null;
}

/**
 * The response Node's HTTP server is writing on `socket` (its connection) now, if any: its
 * internal `_httpMessage` (see file comment), only read. The one place that reads it
 * (routing/closing-answers.ts uses it too).
 */
export function answerBeingWritten(socket: Duplex): ServerResponse | null | undefined {
  return (socket as HttpConnection)._httpMessage;
}

/** Answers another answer waits behind: a refusal, or any answer queued (a WeakSet: an entry goes with its response). */
const awaited = new WeakSet<ServerResponse>();

/** Per answer with no deadline of its own (an SSE stream that answers no request): what bounds it. */
const bounders = new WeakMap<ServerResponse, () => void>();

/**
 * Registers `bound` for `res`, an answer with no deadline of its own (the standalone GET
 * stream, a long-lived stream: response/sse-stage.ts): it is called once a refusal or
 * another answer waits behind `res` on its connection (at once when one does already), and starts the bound (the
 * stream's sse_deadline_ms). `bound` must do nothing once the answer is over. Made once per
 * such stream, when it first waits; never for a request's answer (it has its deadline).
 */
export function boundWhenAwaited(res: ServerResponse, bound: () => void): void {
  if (awaited.has(res)) bound();
  else bounders.set(res, bound);
}

/**
 * Calls `then` once no answer to an earlier, whole request is due on `socket` (a connection
 * of Node's HTTP server): at once when none is; else after the last such response's
 * 'finish' (the kernel took every byte of it). The request the rejected bytes cut (a
 * malformed chunk of its body, its body not in within request_timeout_ms) is never whole
 * (`complete` false): its own response is not waited for, the refusal is its answer. Never
 * called when the connection dies first (no 'finish' comes): there is nothing to answer on.
 * One listener per answer waited for; nothing on a connection with none. An answer with no
 * deadline of its own is bounded from then on (see file comment).
 */
export function afterEarlierAnswers(socket: Duplex, then: () => void): void {
  const due = answerBeingWritten(socket);
  if (due == null || !due.req.complete) {
    then();
    return;
  }
  markAwaited(due);
  due.once('finish', () => afterEarlierAnswers(socket, then));
}

/** Per connection: the queued answers registered by {@link boundAnswersAhead} that have not had their turn yet. */
const queuedAnswers = new WeakMap<Duplex, Set<ServerResponse>>();

/**
 * Registers `res`, an answer queued on `socket` (its connection: HTTP/1.1 pipelining, `res`
 * has no socket yet), as waiting behind the answers ahead of it: each of them that has no
 * deadline of its own is bounded (see file comment) once it is being written, until `res`
 * has its turn. One 'finish' listener per connection at a time, on the answer being written
 * (its 'finish' gives the connection to the next: see file comment), however many answers
 * wait; nothing for a request whose answer has the connection.
 */
export function boundAnswersAhead(socket: Duplex, res: ServerResponse): void {
  const queued = queuedAnswers.get(socket);
  if (queued !== undefined) {
    queued.add(res);
    return;
  }
  const fresh = new Set([res]);
  queuedAnswers.set(socket, fresh);
  walkAhead(socket, fresh);
}

/** Bounds the answer being written on `socket` while a registered answer waits behind it, then the next, in turn. */
function walkAhead(socket: Duplex, queued: Set<ServerResponse>): void {
  const due = answerBeingWritten(socket);
  // Its turn has come: no longer behind anything.
  if (due != null) queued.delete(due);
  if (due == null || queued.size === 0) {
    queuedAnswers.delete(socket);
    return;
  }
  markAwaited(due);
  due.once('finish', () => walkAhead(socket, queued));
}

/** `due` has an answer waiting behind it: bounded now if it registered a bound (boundWhenAwaited), else as soon as it does. */
function markAwaited(due: ServerResponse): void {
  awaited.add(due);
  const bound = bounders.get(due);
  if (bound !== undefined) {
    bounders.delete(due);
    bound();
  }
}
