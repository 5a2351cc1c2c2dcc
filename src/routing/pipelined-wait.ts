/**
 * Requests pipelined (HTTP/1.1) behind another answer on their connection, in routing/handler.ts:
 * each waits for its turn (routing/pipelined-turn.ts), registered meanwhile among the requests in
 * flight when a cancellation could name it, held at its turn while one awaits the seller's answer
 * (in-flight-requests.ts holdAtTurn), then processed by the handler with when it first came
 * ({@link QueuedAt}).
 */
import type { FastifyReply } from 'fastify';
import type { AgentConfig } from '../config/types.js';
import { refuse } from '../errors/local-reply.js';
import { isRepeatedSessionId, sessionIdFault } from '../request/session-id-header.js';
import { peekRequest, refusalIdOf, type PeekResult } from '../request/peek.js';
import { requestJsonBounds } from '../request/request-json-bounds.js';
import { MAX_WAITING_PER_CONNECTION, type PipelinedTurns } from './pipelined-turn.js';
import { awaitsCancelAnswer, turnVerdict, type CancelHoldEnd, type InFlightRequests, type TurnVerdict } from './in-flight-requests.js';
import { limitsOf, type McpRequest } from './request-limits.js';

/**
 * When a request that waits for its turn on its connection (routing/pipelined-turn.ts) reached
 * the handler first, on each clock its processing reads, both read once there (neither derived
 * from the other): `ms`, performance.now(), which its response_deadline_ms and `pipeline_wait`
 * run from; `hr`, process.hrtime.bigint(), its exchange's `startedAt` (the exchange line's
 * duration_ms, the duration metric).
 */
export interface QueuedAt {
  readonly ms: number;
  readonly hr: bigint;
  /** The host cancelled the request while it waited, the seller accepting it (its registration: InFlightRequests.openWaiting). */
  readonly cancelled: boolean;
  /**
   * The peek of its body made when it began to wait (`waitingEntry`), under the bounds of
   * `agent` then: used again at its turn when the config still has that same agent object (no
   * reload changed it), so the body is not read twice; a reload in between makes it peek anew.
   */
  readonly peeked: WaitingPeek | undefined;
  /**
   * How its hold at its turn for the seller's answers to cancellations naming it ended
   * (InFlightRequests.holdAtTurn); undefined when it was not held. Past its time
   * (`timeout`), or too late once refused, it is answered `cancel_wait`, not `pipeline_wait`
   * (in-flight-requests.ts turnVerdict).
   */
  readonly cancelHold: CancelHoldEnd | undefined;
}

/** A body's peek under one agent config object's bounds (request/request-json-bounds.ts). */
export interface WaitingPeek {
  readonly agent: AgentConfig;
  readonly result: PeekResult;
}

/** The handler's processing of a request at its turn (routing/handler.ts mcpHandler): the reply, a promise of it, or nothing when forwarded. */
export type TurnProcessor = (request: McpRequest, reply: FastifyReply, queuedAt: QueuedAt) => FastifyReply | Promise<FastifyReply | undefined> | undefined;

/**
 * The handler's wait for a pipelined request's turn ({@link waitForTurn} below), on `turns`,
 * registered in `inFlight` while it waits, then processed by `processAtTurn`.
 */
export function createTurnWaiter(
  turns: PipelinedTurns,
  inFlight: InFlightRequests,
  processAtTurn: TurnProcessor,
): (request: McpRequest, reply: FastifyReply, body: Buffer | undefined, agent: AgentConfig) => FastifyReply | Promise<FastifyReply | undefined> {
  /**
   * A request whose answer is queued behind another on its connection (HTTP/1.1 pipelining):
   * processed at its turn (a promise of its reply, as for a request that waits for its backoff
   * turn), its wait counted in its response_deadline_ms and its duration (`queuedAt`), or left
   * unanswered when the connection closes first (an answer ahead of it closed it, the host
   * left): hijacked (Fastify sends nothing for it), nothing sent to a seller, no line, no count
   * (routing/pipelined-turn.ts). With {@link MAX_WAITING_PER_CONNECTION} waiting on the
   * connection already, refused `pipeline_too_deep` at once, for its id (a POST's, null for a
   * GET or a DELETE: request/peek.ts refusalIdOf; its body is not kept while the refusal waits
   * for its own turn). Reported failure (a hostile new-user trial 15, H1):
   * test/regressions/pipelined-answers-unbounded-memory.test.ts.
   *
   * While it waits, a POSTed single request in a session is registered among the requests in
   * flight ({@link waitingEntry}), so that a host's cancellation can name it: one cancelled
   * meanwhile is not sent at its turn (hostile trial 55, F2:
   * test/regressions/cancelled-while-held-still-sent.test.ts).
   */
  function waitForTurn(request: McpRequest, reply: FastifyReply, body: Buffer | undefined, agent: AgentConfig): FastifyReply | Promise<FastifyReply | undefined> {
    const socket = request.raw.socket;
    if (!turns.hasRoom(socket)) {
      (request as { body: unknown }).body = undefined;
      return refuse(
        reply,
        'pipeline_too_deep',
        refusalIdOf(request.method, body),
        `Too many requests pipelined on one connection: ${MAX_WAITING_PER_CONNECTION} already wait for the answers before them. This one was not sent to any seller: send it again once earlier answers have arrived, or on another connection.`,
        undefined,
        { limit_requests: MAX_WAITING_PER_CONNECTION },
      );
    }
    const ms = performance.now();
    const hr = process.hrtime.bigint();
    const { waiting, peeked } = waitingEntry(request, body, agent);
    return new Promise((resolve, reject) => {
      const atTurn = (processable: boolean, cancelHold: CancelHoldEnd | undefined): void => {
        if (waiting !== undefined) inFlight.close(waiting.slot, waiting.entry);
        if (!processable) {
          reply.hijack();
          resolve(undefined);
          return;
        }
        try {
          // Nothing returned: forwarded (sent by the handler itself); the reply then stands for it.
          resolve(processAtTurn(request, reply, { ms, hr, cancelled: waiting?.entry.cancelAccepted === true, cancelHold, peeked }) ?? reply);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      };
      turns.whenTurnComes(socket, reply.raw, (processable) => {
        // Its turn came while a cancellation naming it awaits the seller's answer: it waits for
        // the answers to those awaited now (not to later ones), at most until too little of its
        // deadline is left to send it (InFlightRequests.holdAtTurn; a review of the
        // cancel-accept fix, Medium 2), its connection checked again then. Too late already: on
        // at once (`pipeline_wait`). Not counted in the pipelined_requests_waiting gauge meanwhile.
        // The hold needs only its response_deadline_ms, which X-Max-Response-Bytes never
        // changes: the level of the agent it came to (the config when it arrived: a reload
        // lowering response_deadline_ms while it is held does not shorten the hold, a review
        // Low left as is) for the peeked request (limitsOf: the level's object, resolved once
        // per agent config object in config/resolve.ts). The handler resolves
        // its limits at its turn under the config then in force: a reload while it is held
        // applies (a re-read, M1: they were cached here, QueuedAt.limits;
        // test/regressions/held-pipelined-request-keeps-limits-from-before-reload.test.ts).
        const entry = waiting?.entry;
        if (processable && entry !== undefined && awaitsCancelAnswer(entry)) {
          const then = (end: CancelHoldEnd): void => atTurn(!socket.destroyed && !socket.writableEnded, end);
          if (inFlight.holdAtTurn(entry, limitsOf(agent, entry.rpc, undefined).response_deadline_ms, ms, then)) return;
        }
        atTurn(processable, undefined);
      });
    });
  }

  /**
   * The registration of a request about to wait for its turn on its connection
   * (InFlightRequests.openWaiting), when it is a POSTed single request (peeked under its agent's
   * structure bounds) with one `Mcp-Session-Id` a server can have issued; undefined for any
   * other (nothing a cancellation could name: a refusal at its turn, a notification, a batch, a
   * GET). The checks before the peek run again at its turn; the peek made here is handed on
   * (`peeked`, QueuedAt.peeked) and used then when its agent's config object is still the one
   * in force, so the body is read once (it was read twice before).
   */
  function waitingEntry(
    request: McpRequest,
    body: Buffer | undefined,
    agent: AgentConfig,
  ): { waiting: ReturnType<InFlightRequests['openWaiting']>; peeked: WaitingPeek | undefined } {
    if (request.method !== 'POST' || body === undefined || body.length === 0 || body.length > agent.max_request_bytes) return { waiting: undefined, peeked: undefined };
    const header = request.headers['mcp-session-id'];
    if (typeof header !== 'string' || isRepeatedSessionId(request.raw, header) || sessionIdFault(header) !== undefined) return { waiting: undefined, peeked: undefined };
    const result = peekRequest(body, requestJsonBounds(agent));
    return { waiting: result.ok ? inFlight.openWaiting(agent, header, result.peek) : undefined, peeked: { agent, result } };
  }

  return waitForTurn;
}

/**
 * How a request is judged when the handler takes it up (`queuedAt`: given when it waited for
 * its turn on its connection; `deadlineMs`: its response_deadline_ms; `nowMs`:
 * performance.now()). `maxWaitMs`: how long its backoff wait may still take (ms, whole,
 * rounded up; the whole deadline for a request that did not wait). `turn`: `send`, or not sent
 * (too little of its deadline left, or held at its turn past its time for a cancellation's
 * answer: in-flight-requests.ts turnVerdict). The verdict is judged on the exact time left, as
 * InFlightRequests.holdAtTurn judged whether to hold: on the rounded-up time, a request with a
 * cancellation still awaiting the seller's answer was neither held nor refused when its send
 * window was between -1 and 0 ms (a review of the one cancel-hold mechanism, Low;
 * test/unit/pipelined-turn-sliver-sent-while-cancel-awaited.test.ts).
 */
export function queuedTurn(queuedAt: Pick<QueuedAt, 'ms' | 'cancelHold'> | undefined, deadlineMs: number, nowMs: number): { readonly maxWaitMs: number; readonly turn: TurnVerdict } {
  if (queuedAt === undefined) return { maxWaitMs: deadlineMs, turn: 'send' };
  const remainingMs = deadlineMs - (nowMs - queuedAt.ms);
  return { maxWaitMs: Math.max(0, Math.ceil(remainingMs)), turn: turnVerdict(queuedAt.cancelHold, remainingMs, deadlineMs) };
}
