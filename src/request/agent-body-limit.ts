/**
 * A POST's body against its agent's `max_request_bytes`, before the body is read.
 *
 * Fastify reads a body against one limit, the app's (config/resolve.ts requestBodyLimit: the
 * largest bound of the defaults and the agents, 4 MiB by default): a Content-Length over it is
 * refused at once, unread, and a chunked body as soon as its bytes pass it. The agent's own,
 * smaller bound was compared with the body only once the whole of it had been read
 * (routing/handler.ts). So a host announcing more than its agent takes had its body waited
 * for: 300 bytes announced to an agent taking 200, 250 sent, got 408 `request_timeout` after
 * request_timeout_ms (a chunked body with no end too), and a whole one was read before its 413.
 * Reported failure: a hostile new user's trial 19, L2
 * (test/regressions/declared-body-over-agent-limit-waited-for.test.ts).
 *
 * Now, on the MCP route, for a POST to a configured agent whose bound is under the app's:
 * - a Content-Length over the bound is refused at once, nothing of the body read, as Fastify
 *   refuses one over the app's limit (the same error, {@link AgentBodyTooLarge}, to the app's
 *   error handler: 413 `request_too_large`, id null, `limit_bytes` the agent's, `Connection:
 *   close`, since the body the head announced may still come);
 * - a body without Content-Length (chunked) is read through a counter that fails it as soon
 *   as its bytes pass the bound (Fastify then refuses it the same way).
 * The bound counts the bytes as sent, a leading UTF-8 BOM included, as the handler's exact
 * comparison of a body read whole does (a hostile trial 20, H1: a first version allowed 3 bytes
 * more for a BOM the body might start with, so a Content-Length 1-3 bytes over was waited for,
 * 408 when the body never came). While the gateway drains, nothing is refused here: the
 * request gets `draining` (503) as any other (trial 20, M1: it got 413).
 * Any other request costs one hook call and, for a POST, one lookup in a per-config table of
 * the agents with such a bound; a chunked one to such an agent a Transform stream.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import type { GatewayConfig } from '../config/types.js';
import { closeConnectionAfter } from '../routing/closing-answers.js';

/**
 * A body over its agent's `max_request_bytes`, refused before it was read: Fastify's own code
 * for a body over its limit, so the app's error handler refuses both alike, with
 * `limitBytes`, the agent's bound (app.ts).
 */
export class AgentBodyTooLarge extends Error {
  readonly code = 'FST_ERR_CTP_BODY_TOO_LARGE';
  readonly statusCode = 413;
  constructor(readonly limitBytes: number) {
    super(`Request body is over this agent's max_request_bytes (${limitBytes}).`);
  }
}

/**
 * Per config, the agents whose `max_request_bytes` is under the app's body limit (the others'
 * bound is the app's, which Fastify applies): most configs have none, and a request then
 * costs the hook one lookup of this table.
 */
const boundedAgents = new WeakMap<GatewayConfig, ReadonlyMap<string, number>>();

function boundedAgentsOf(config: GatewayConfig, appLimit: number): ReadonlyMap<string, number> {
  let table = boundedAgents.get(config);
  if (table === undefined) {
    const bounded = new Map<string, number>();
    for (const agent of config.agents.values()) if (agent.max_request_bytes < appLimit) bounded.set(agent.name, agent.max_request_bytes);
    boundedAgents.set(config, (table = bounded));
  }
  return table;
}

/**
 * The most bytes a request body may have before it is refused unread: for a POST to agent
 * `agentName` (as configured in `config`), its `max_request_bytes` when that is under
 * `appLimit` (the app's body limit); else `appLimit`, which Fastify applies.
 */
export function bodyBytesBound(config: GatewayConfig, method: string | undefined, agentName: string | undefined, appLimit: number): number {
  if (method !== 'POST' || agentName === undefined) return appLimit;
  return boundedAgentsOf(config, appLimit).get(agentName) ?? appLimit;
}

/** Whether a request's `Content-Length` field declares more than `bound` bytes (one written as digits; any other is Node's and Fastify's to refuse). */
export function declaresOver(contentLength: string | undefined, bound: number): boolean {
  return contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > bound;
}

/**
 * The MCP route's preParsing hook (see file comment). `getConfig`: the config in force (a
 * reload applies to the next request); `appLimit`: the app's body limit; `drain.draining`:
 * true once the gateway shuts down.
 */
export function agentBodyLimit(getConfig: () => GatewayConfig, appLimit: number, drain: { readonly draining: boolean }) {
  return function agentBodyLimitHook(request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (err: Error | null, payload?: RequestPayload) => void): void {
    const bound = bodyBytesBound(getConfig(), request.method, (request.params as { agent?: string }).agent, appLimit);
    if (bound >= appLimit || drain.draining) return done(null, payload);
    const declared = request.headers['content-length'];
    if (declared === undefined) return done(null, countedBody(payload, bound));
    if (!declaresOver(declared, bound)) return done(null, payload);
    // The body the head announced may still come: nothing else can follow it on this connection.
    closeConnectionAfter(reply);
    done(new AgentBodyTooLarge(bound));
  };
}

/** `payload` read through a counter that fails with {@link AgentBodyTooLarge} once more than `bound` bytes passed. */
function countedBody(payload: RequestPayload, bound: number): Transform {
  let received = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
      received += chunk.length;
      if (received > bound) {
        (payload as Readable).unpipe(counted);
        callback(new AgentBodyTooLarge(bound));
      } else callback(null, chunk);
    },
  });
  // The request's own failure (the host left, request_timeout_ms ran out) reaches Fastify as before.
  (payload as Readable).once('error', (err) => counted.destroy(err));
  (payload as Readable).pipe(counted);
  return counted;
}
