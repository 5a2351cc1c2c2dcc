/**
 * The answer to a request the gateway receives while it shuts down (draining): HTTP 503,
 * `Connection: close`, and the refusal `draining` (docs/errors.md; JSON-RPC code -32027,
 * AdCP's SERVICE_UNAVAILABLE), logged as a `refused` line and counted in
 * `adcp_gateway_refusals_total` like every refusal (errors/local-reply.ts `refuse`). The
 * seller is not contacted: the host can send the request again, to another instance or to
 * this one's successor.
 *
 * Which requests: those that reach a route once the graceful shutdown has begun (src/app.ts
 * sets {@link DrainState.draining} in its preClose hook). The listener is closed by then, so
 * they come on connections opened before: an idle keep-alive connection Node has not closed
 * yet (it keeps them while exchanges are open: app.ts), a request half sent when the signal
 * came, one pipelined behind a busy request. The ops endpoints are not refused: `/readyz`
 * answers `draining` (src/ops/routes.ts).
 *
 * Reported failure (a new user's trial, F2): such requests got Fastify's own 503 body
 * (`{"error":"Service Unavailable",...}`, Fastify's `return503OnClosing`), which an MCP
 * client cannot read as a JSON-RPC error, with no `refused` line and no count; `/readyz` on
 * the main listener got it too (test/regressions/shutdown-503-not-json-rpc.test.ts).
 *
 * No `Retry-After` (RFC 9110 §10.2.3, optional on a 503): the gateway does not know when a
 * successor will listen, and another instance can take the request at once.
 */
import type { FastifyReply } from 'fastify';
import { refuse } from '../errors/local-reply.js';
import { requestIdOf } from '../request/peek.js';

/** Whether the gateway is shutting down: set once by the app's preClose hook (src/app.ts), never cleared. */
export interface DrainState {
  draining: boolean;
}

const DRAINING_MESSAGE = 'The gateway is shutting down: the request was not sent to any seller; send it again (to another instance, or once the gateway is back).';

/**
 * Refuses a request that arrived while draining (see file comment). `body`: the request's
 * body as read (a Buffer for a POST), from which the id is read (request/peek.ts requestIdOf, as
 * for `unknown_agent`), or undefined (then, and for a body whose id cannot
 * be read, a batch, a notification, id null).
 */
export function refuseDraining(reply: FastifyReply, body: Buffer | undefined): FastifyReply {
  reply.header('connection', 'close');
  return refuse(reply, 'draining', body !== undefined && body.length > 0 ? requestIdOf(body) : null, DRAINING_MESSAGE);
}
