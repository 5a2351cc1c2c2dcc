/**
 * A request the host pipelined on its connection (HTTP/1.1) behind an answer still being
 * written is sent to its seller only when its own turn comes: once Node's HTTP server gives
 * its response the connection, after every answer ahead of it was written. So one connection
 * has at most one answer being received from a seller or held for the host at a time (the
 * one being written: it counts under its agent's max_buffered_response_bytes while received,
 * and ends by its own bounds, host_not_reading included), and the requests waiting for their
 * turn hold only their bodies (each within max_request_bytes: the largest one configured, as
 * Fastify reads bodies before the agent is known), at most
 * {@link MAX_WAITING_PER_CONNECTION} of them per connection.
 *
 * Reported failure (a hostile new-user trial 15, H1): every pipelined request was forwarded at
 * once, and its whole answer then waited in its queued response's output buffer behind the
 * answer ahead, outside max_buffered_response_bytes (which counts bytes only while they are
 * received) and outside any bound: 3 connections x 100 pipelined `tools/call` with 2 MB
 * answers took the gateway from 94 MB to 1.2 GB; a slow call (12 s) at the head of one
 * connection and 100 calls of 3 MB behind it, 682 MB; 100 calls behind a standalone GET
 * stream, 674 MB held as long as the stream lived
 * (test/regressions/pipelined-answers-unbounded-memory.test.ts).
 *
 * The turn: Node's HTTP server keeps a connection's later responses in a queue and gives the
 * connection to the next one when the one being written emits 'finish' (the kernel took its
 * last byte): `ServerResponse.assignSocket`, which emits the response's 'socket' event
 * (lib/_http_server.js `resOnFinish`, `parserOnIncoming`; the same on Node 20, 22 and 24, and
 * a public event). An answer that closes the connection (`Connection: close`: malformed_http,
 * expectation_failed, draining) gives no turn to the responses behind it: Node destroys the
 * connection once it is written, and those requests are never processed (RFC 9112 §9.6:
 * routing/closing-answers.ts). The request is processed a turn of the event loop after its
 * 'socket' (`setImmediate`: not inside Node's 'finish' handling), unless its connection is
 * gone or ended by then.
 *
 * How many wait: each waiting request holds its body and its request objects, and produces no
 * output, so Node's own guard against a flood of pipelined requests (it stops reading a
 * connection once the answers queued on it hold a socket's high-water mark of bytes:
 * `parserOnIncoming`) does not see it. So at most {@link MAX_WAITING_PER_CONNECTION} requests
 * wait per connection; a further MCP request is refused at once, `pipeline_too_deep` (503,
 * JSON-RPC -32027, its id: docs/errors.md), without keeping its body. That refusal waits for
 * its own turn as any answer does, and its bytes are queued output, which Node's guard does
 * count: past its high-water mark (16 KiB on Node 20, 64 KiB on 22 and 24, some 35 to 140
 * refusals) Node stops reading the connection until the queue drains. Why a refusal for each
 * rather than one that closes the connection (RFC 9112 §9.3.2: a client retries the
 * pipelined requests a close leaves unanswered): a client should not send a non-idempotent
 * request (a POST: every MCP call) again on its own (RFC 9110 §9.2.2), and one whose
 * pipelined POSTs are cut by a close cannot tell which were processed; a refusal for its id
 * says this one was not sent, and the host keeps its connection. Why not stop reading the
 * connection ourselves: Node's server keeps that state in `socket._paused`, written by its own
 * code (`socketOnDrain` resumes reading whenever the queued output drains, a request body's
 * read resumes the socket unless that flag is set), so pausing from outside means writing an
 * internal field, and would stall the body of a request already being received.
 *
 * Why 16: the waiting requests of one connection hold at most 16 bodies (16 x 4 MiB at the
 * default max_request_bytes, the size of the default max_buffered_response_bytes; a few KiB
 * for MCP requests as hosts send them), and MCP clients do not pipeline (the SDKs' HTTP
 * clients, fetch and httpx, send one request per connection at a time); a client that does
 * pipeline rarely keeps more than a handful of requests outstanding. Fixed, not a setting.
 *
 * While a request waits: nothing of it has reached a seller, it holds no backoff turn
 * (admission/agent-guard.ts admits it at its turn) and no exchange (no line, no count, no
 * entry in the open exchanges); a POSTed single request in a session is registered among the
 * requests in flight (routing/in-flight-requests.ts openWaiting), so that a host's cancellation
 * can name it, and one cancelled meanwhile is not sent at its turn (hostile trial 55, F2). An
 * answer ahead of it that has no deadline of its own (the standalone GET stream) is bounded by
 * its agent's sse_deadline_ms
 * (errors/earlier-answers.ts `boundAnswersAhead`), and its response_deadline_ms runs from its
 * arrival, the wait included: granted its turn too late to finish within it, it is answered
 * `pipeline_wait` without being sent (routing/handler.ts). When the connection closes first
 * (the host leaves, an answer ahead closes it, the gateway resets it: host_not_reading), it
 * is not processed at all: nothing sent, no line, its entry released at the connection's
 * close (one 'close' listener per connection with waiting requests).
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { boundAnswersAhead } from '../errors/earlier-answers.js';

/** How many requests may wait for their turn on one connection (see file comment). */
export const MAX_WAITING_PER_CONNECTION = 16;

/** Told whether the waiting request may be processed now (its turn came, its connection open) or never (the connection closed first). */
export type TurnVerdict = (processable: boolean) => void;

interface Waiter {
  readonly res: ServerResponse;
  readonly then: TurnVerdict;
  /** The waiter's 'socket' listener on `res`. */
  readonly onTurn: () => void;
}

/** One connection's waiting requests, and its one 'close' listener while any waits. */
interface Queue {
  readonly waiters: Set<Waiter>;
  readonly onClose: () => void;
}

/** The requests waiting for their turn on the connections of one gateway (app.ts makes one). */
export class PipelinedTurns {
  private readonly queues = new WeakMap<Duplex, Queue>();
  private count = 0;

  /** Requests waiting for their turn right now, on every connection (the `pipelined_requests_waiting` gauge). */
  get size(): number {
    return this.count;
  }

  /** Whether one more request may wait on `socket` (fewer than {@link MAX_WAITING_PER_CONNECTION} wait on it). */
  hasRoom(socket: Duplex): boolean {
    const queue = this.queues.get(socket);
    return queue === undefined || queue.waiters.size < MAX_WAITING_PER_CONNECTION;
  }

  /**
   * Calls `then` once for the request answered by `res`, queued on `socket` (its connection:
   * `res.socket` is null): `true` a turn of the event loop after Node gives `res` the
   * connection, if it is still open; `false` when the connection closes (or is gone) first.
   * Bounds the answers ahead of it meanwhile (errors/earlier-answers.ts).
   */
  whenTurnComes(socket: Duplex, res: ServerResponse, then: TurnVerdict): void {
    if (socket.destroyed) {
      setImmediate(then, false);
      return;
    }
    let queue = this.queues.get(socket);
    if (queue === undefined) {
      const fresh: Queue = { waiters: new Set(), onClose: () => this.closed(socket, fresh) };
      socket.once('close', fresh.onClose);
      this.queues.set(socket, fresh);
      queue = fresh;
    }
    const waiting = queue;
    const waiter: Waiter = {
      res,
      then,
      onTurn: () => {
        this.leave(socket, waiting, waiter);
        setImmediate(() => then(!socket.destroyed && !socket.writableEnded));
      },
    };
    waiting.waiters.add(waiter);
    this.count++;
    res.once('socket', waiter.onTurn);
    boundAnswersAhead(socket, res);
  }

  /** `waiter` has its turn: it waits no more (the connection's listener goes with its last waiter). */
  private leave(socket: Duplex, queue: Queue, waiter: Waiter): void {
    if (!queue.waiters.delete(waiter)) return;
    this.count--;
    if (queue.waiters.size > 0) return;
    socket.off('close', queue.onClose);
    if (this.queues.get(socket) === queue) this.queues.delete(socket);
  }

  /** The connection closed before these requests had their turn: none is processed. */
  private closed(socket: Duplex, queue: Queue): void {
    if (this.queues.get(socket) === queue) this.queues.delete(socket);
    const waiters = [...queue.waiters];
    queue.waiters.clear();
    this.count -= waiters.length;
    for (const waiter of waiters) {
      waiter.res.off('socket', waiter.onTurn);
      waiter.then(false);
    }
  }
}
