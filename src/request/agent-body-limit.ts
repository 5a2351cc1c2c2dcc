/**
 * A request body against its bound (a POST's: its agent's `max_request_bytes`), before the body is read.
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
 * Now, on the MCP endpoint's routes, for a POST to a configured agent whose bound is under the
 * app's, and for any request whose body only serves its refusal (see {@link bodyBound}):
 * - a Content-Length over the bound is refused at once, nothing of the body read, with the
 *   request's own refusal (app.ts, the error handler: 413 `request_too_large` with the
 *   agent's `limit_bytes`, 404 `unknown_agent`, 405 `method_not_allowed`), id null (no body
 *   was read), `Connection: close`, since the body the head announced may still come;
 * - a chunked body is read through a counter that fails it as soon as its bytes pass the
 *   bound (refused the same way).
 * The bound counts the bytes as sent, a leading UTF-8 BOM included, as the handler's exact
 * comparison of a body read whole does (a hostile trial 20, H1: a first version allowed 3 bytes
 * more for a BOM the body might start with, so a Content-Length 1-3 bytes over was waited for,
 * 408 when the body never came).
 *
 * A request to an unknown agent, or with a method the endpoint does not take, had its body
 * read under the app's limit, the largest bound of any agent, before its 404 or 405: with one
 * agent at 1 GiB, a POST of 200 MB to `/agents/zz/mcp` got `100 Continue`, was read whole
 * (3.5 s), then 404; 300 MiB took the process from 96 to 1297 MB; `PUT` the same, then 405
 * (a hostile trial 23, H2: test/regressions/unknown-agent-body-read-to-largest-limit.test.ts).
 * Such a body is now held to `defaults.max_request_bytes`, the bound of an agent configured
 * without one: it is read only for the id of an `unknown_agent` answer. So is a DELETE's to a
 * configured agent (413 `request_too_large`, id null, over it), read the same way before: a
 * DELETE ends the session, its body is never forwarded, only its size logged
 * (test/regressions/delete-body-read-to-largest-limit.test.ts).
 *
 * A head that app.ts `continueWanted` told no `100 Continue` for a refusal the MCP handler
 * gives it from its headers (request/head-refusal.ts: a bad Origin or Host) is failed here
 * with {@link RefusedFromHead}, its body unread; the app's error handler answers it.
 *
 * While the gateway drains, the error handler answers `draining` (503, id null) in place of
 * the refusal, still from the head: the request gets `draining` as any other, and the body is
 * not read for it (a hostile trial 20, M1: it got 413; trial 23, M1: it was told 100 Continue
 * and read whole for a `draining` answer).
 * Any other request costs one hook call, one property read (the head refusal's mark) and one
 * lookup of its agent.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyRequest, RequestPayload } from 'fastify';
import type { GatewayConfig } from '../config/types.js';
import { isMcpMethod } from '../routing/unrouted.js';
import { RefusedFromHead, refusedFromHeadOf } from './head-refusal.js';

/** What refuses a body over its {@link BodyBound}: the request's own refusal (docs/errors.md). */
export type OverBoundRefusal = 'request_too_large' | 'unknown_agent' | 'method_not_allowed';

/** The bytes a request body may have before it is refused unread, and what refuses it then. */
export interface BodyBound {
  readonly bytes: number;
  readonly refusal: OverBoundRefusal;
  /** A DELETE's body (never forwarded): `bytes` is `defaults.max_request_bytes`, not its agent's bound (the refusal's message says so). */
  readonly deleteBody?: true;
}

/**
 * A body over its {@link BodyBound}, refused before it was read (or as soon as its bytes
 * passed it): the app's error handler answers `bound.refusal`, or `draining` (app.ts).
 */
export class BodyOverBound extends Error {
  constructor(readonly bound: BodyBound) {
    super(
      bound.deleteBody === true
        ? `A DELETE's body is over defaults.max_request_bytes (${bound.bytes}): a DELETE ends an MCP session and its body is never forwarded; send it without one.`
        : bound.refusal === 'request_too_large'
          ? `Request body is over this agent's max_request_bytes (${bound.bytes}).`
          : `Request body over ${bound.bytes} bytes for a ${bound.refusal} refusal.`,
    );
  }
}

/** Methods of the MCP endpoint's routes whose body Fastify never reads. */
const BODYLESS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * The bound of a request's body on an MCP endpoint (the one rule, for the preParsing hook and
 * for `Expect: 100-continue`, app.ts `continueWanted`); `agentName`: the endpoint's agent as
 * the route gives it (undefined: not an MCP endpoint); `appLimit`: the app's body limit.
 * - a method the endpoint does not take (405 `method_not_allowed`), or any method to an agent
 *   `config` does not have (404 `unknown_agent`): `defaults.max_request_bytes` (an agent's
 *   bound when configured without one), at most `appLimit`;
 * - a POST to a configured agent whose `max_request_bytes` is under `appLimit`: that (413
 *   `request_too_large`);
 * - a DELETE to a configured agent, when `defaults.max_request_bytes` is under `appLimit`:
 *   that (413 `request_too_large`, `deleteBody`): its body is never forwarded, only its size
 *   logged (routing/handler.ts), so it is read no further than an unknown agent's;
 * - else undefined: the app's limit, which Fastify applies (413 `request_too_large`).
 */
export function bodyBound(config: GatewayConfig, method: string | undefined, agentName: string | undefined, appLimit: number): BodyBound | undefined {
  if (agentName === undefined) return undefined;
  if (!isMcpMethod(method)) return { bytes: Math.min(config.defaults.max_request_bytes, appLimit), refusal: 'method_not_allowed' };
  const agent = config.agents.get(agentName);
  if (agent === undefined) return { bytes: Math.min(config.defaults.max_request_bytes, appLimit), refusal: 'unknown_agent' };
  if (method === 'POST') return agent.max_request_bytes < appLimit ? { bytes: agent.max_request_bytes, refusal: 'request_too_large' } : undefined;
  return method === 'DELETE' && config.defaults.max_request_bytes < appLimit ? { bytes: config.defaults.max_request_bytes, refusal: 'request_too_large', deleteBody: true } : undefined;
}

/** Whether a request's `Content-Length` field declares more than `bound` bytes (one written as digits; any other is Node's and Fastify's to refuse). */
export function declaresOver(contentLength: string | undefined, bound: number): boolean {
  return contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > bound;
}

/**
 * The MCP endpoint's preParsing hook (see file comment), on its routes for every method.
 * `getConfig`: the config in force (a reload applies to the next request); `appLimit`: the
 * app's body limit.
 */
export function agentBodyLimit(getConfig: () => GatewayConfig, appLimit: number) {
  return function agentBodyLimitHook(request: FastifyRequest, _reply: unknown, payload: RequestPayload, done: (err: Error | null, payload?: RequestPayload) => void): void {
    // A head `Expect: 100-continue` told no 100 for its refusal (request/head-refusal.ts): refused now, its body unread.
    const refusedByHead = refusedFromHeadOf(request.raw);
    if (refusedByHead !== undefined) return done(new RefusedFromHead(refusedByHead));
    const bound = bodyBound(getConfig(), request.method, (request.params as { agent?: string }).agent, appLimit);
    if (bound === undefined) return done(null, payload);
    const declared = request.headers['content-length'];
    // A chunked body is counted where Fastify reads one (not a GET's or a HEAD's: Node discards it).
    if (declared === undefined) return done(null, request.headers['transfer-encoding'] === undefined || BODYLESS.has(request.method) ? payload : countedBody(payload, bound));
    if (!declaresOver(declared, bound.bytes)) return done(null, payload);
    done(new BodyOverBound(bound));
  };
}

/** `payload` read through a counter that fails with {@link BodyOverBound} once more than `bound.bytes` passed. */
function countedBody(payload: RequestPayload, bound: BodyBound): Transform {
  let received = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
      received += chunk.length;
      if (received > bound.bytes) {
        (payload as Readable).unpipe(counted);
        callback(new BodyOverBound(bound));
      } else callback(null, chunk);
    },
  });
  // The request's own failure (the host left, request_timeout_ms ran out) reaches Fastify as before.
  (payload as Readable).once('error', (err) => counted.destroy(err));
  (payload as Readable).pipe(counted);
  return counted;
}
