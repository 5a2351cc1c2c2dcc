/**
 * A request waiting for its agent's backoff turn (admission/agent-guard.ts), in
 * routing/handler.ts: answered at once if its host's cancellation is accepted meanwhile, held at
 * its granted turn while a cancellation naming it awaits the seller's answer
 * (in-flight-requests.ts holdAtTurn), refused when a reload removed or moved its agent, or when
 * its turn came too late (turnVerdict: `cancel_wait`, `agent_backoff`), else sent.
 */
import type { FastifyReply } from 'fastify';
import type { GatewayConfig, Limits } from '../config/types.js';
import type { Exchange } from '../exchange.js';
import { answerCancelledUnsent, answerWithLocalError } from '../errors/local-reply.js';
import { refusalIdOf } from '../request/peek.js';
import type { Admission, AgentGuard, PendingAdmission } from '../admission/agent-guard.js';
import { awaitsCancelAnswer, type CancelHoldEnd, type InFlightRequests, turnVerdict } from './in-flight-requests.js';
import { reconfiguredReason } from './open-streams.js';
import { refuseUnknownAgent } from './unrouted.js';
import type { McpRequest } from './request-limits.js';

/** What the handler gives a request's backoff wait. */
export interface BackoffWait {
  readonly request: McpRequest;
  readonly reply: FastifyReply;
  /** The request's body as the handler reads it (a leading BOM left out). */
  readonly body: Buffer | undefined;
  readonly exchange: Exchange;
  /** Its place in its agent's queue (AgentGuard.admit). */
  readonly pending: PendingAdmission;
  readonly limits: Limits;
  /** performance.now() when it reached the handler first (its deadline runs from there). */
  readonly arrivedAt: number;
  /** Its call kind (agent-guard.ts callKind). */
  readonly kind: string;
  readonly guard: AgentGuard;
  readonly inFlight: InFlightRequests;
  /** The config in force now. */
  readonly getConfig: () => GatewayConfig;
}

/**
 * Waits for the backoff turn of `wait`'s request: its reply once answered here, or what `send`
 * returns with the turn granted in time (the handler then sends it).
 */
export function awaitBackoffTurn(wait: BackoffWait, send: (granted: Admission) => FastifyReply): Promise<FastifyReply> {
  const { request, reply, body, exchange, pending, limits, arrivedAt, kind, guard, inFlight, getConfig } = wait;
  const agent = exchange.agent;
  // Cancelled by its host while it waits (the seller accepted the cancellation): answered at
  // once, its place in the queue given up, never sent (a turn granted meanwhile is given back
  // below). A turn granted while a cancellation naming it awaits the seller's answer is held
  // for the answers to those awaited then (not to later ones), at most until too little of its
  // deadline is left to send it (InFlightRequests.holdAtTurn): the granted turn, a probe's
  // slot maybe, holds its kind's other calls back meanwhile (a review of the cancel-accept
  // fix, Medium 2: held as long as cancellations kept coming, past the deadline).
  exchange.onCancelled = () => {
    pending.cancel();
    answerCancelledUnsent(exchange, reply);
  };
  let cancelHold: CancelHoldEnd | undefined = undefined;
  const settled = (granted: Admission | undefined): Admission | undefined | Promise<Admission> => {
    // Nothing awaited (the usual case): on at once, no promise in between.
    if (granted === undefined || exchange.finished || !awaitsCancelAnswer(exchange)) return granted;
    // Held (InFlightRequests.holdAtTurn, which judges whether a cancellation is awaited) until
    // the hold ends (`cancelHold`: how). Not held (nothing awaited, or granted too late
    // already: `agent_backoff` below): on at once.
    return new Promise((resolve) => {
      const held = inFlight.holdAtTurn(exchange, limits.response_deadline_ms, arrivedAt, (end) => {
        cancelHold = end;
        resolve(granted);
      });
      if (!held) resolve(granted);
    });
  };
  return pending.admitted.then(settled).then((granted) => {
    exchange.onCancelled = undefined;
    if (exchange.finished) {
      // The host went away while waiting (or the seller accepted its cancellation); a turn granted at that moment is given back.
      if (granted !== undefined) guard.finish(granted, 'other');
      return reply;
    }
    // Its wait over (a turn granted or not), the config in force is read again: a request is
    // resolved when taken up and keeps that config (url, headers, limits) as any exchange in
    // flight does, but is never sent to a seller the config no longer gives its agent. A reload
    // removed the agent: 404 `unknown_agent`, the body a request arriving now gets (its id read
    // as the pipelined turn reads it: refusalIdOf); moved it to another url: `agent_url_changed`.
    // Not sent, a granted turn given back. The reload lets such waits go at once
    // (AgentGuard.releaseWaiters, app.ts). Hostile trial 57, F4: such a request went to the
    // removed agent's seller with the old config when its backoff ended.
    const reconfigured = reconfiguredReason(agent, getConfig());
    if (reconfigured !== undefined) {
      if (granted !== undefined) guard.finish(granted, 'other');
      if (reconfigured === 'agent_removed') refuseUnknownAgent(reply, request.params.agent, refusalIdOf(request.method, body), exchange);
      else answerWithLocalError(exchange, reply, { reason: 'agent_url_changed' });
      return reply;
    }
    if (granted !== undefined) {
      const verdict = turnVerdict(cancelHold, limits.response_deadline_ms - (performance.now() - arrivedAt), limits.response_deadline_ms);
      if (verdict === 'send') return send(granted);
      // Granted too late to finish within the deadline (or held past it for a cancellation's answer): not sent; the turn passes on.
      guard.finish(granted, 'other');
      if (verdict === 'cancel_wait') {
        answerWithLocalError(exchange, reply, { reason: 'cancel_wait', limitMs: limits.response_deadline_ms, observedMs: Math.round(performance.now() - arrivedAt) });
        return reply;
      }
    }
    // Not granted (PendingAdmission.admitted: the probe breached, the wait bound passed, the queue was full), or granted too late: `agent_backoff`.
    const retryAfterS = guard.retryAfterS(agent.name, kind);
    answerWithLocalError(exchange, reply, { reason: 'agent_backoff', ...(retryAfterS !== undefined ? { retryAfterS } : {}) });
    return reply;
  });
}
