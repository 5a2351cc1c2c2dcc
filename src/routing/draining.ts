/**
 * The answer to a request the gateway receives while it shuts down (draining): HTTP 503,
 * `Connection: close`, and the refusal `draining` (docs/errors.md; JSON-RPC code -32027,
 * AdCP's SERVICE_UNAVAILABLE), logged as a `refused` line and counted in
 * `adcp_gateway_refusals_total` like every refusal (errors/local-reply.ts `refuse`), once it is
 * written (below). The
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
 * Requests pipelined behind a draining refusal (HTTP/1.1, in one write on one connection) get
 * no answer: the host gets the first 503, then the close, and retries the others (RFC 9112
 * §9.3.2: a client retries the pipelined requests left unanswered when the connection
 * closes). RFC 9112 §9.6: a server that sends `close` "MUST NOT process any further requests
 * received on that connection". What Node's HTTP server does with them: it parses every
 * request of the write and emits each (a route refuses each, while draining), queues their
 * responses behind the one being written, and once a response carrying `Connection: close`
 * is written, destroys the connection: the queued responses are never written, and emit
 * neither 'finish' nor 'close' (lib/_http_server.js `resOnFinish`: a response with `_last`
 * set ends the socket instead of handing it to the next; seen on Node 20.20, the same code
 * on Node's main branch). Fastify sets `Connection: close` on the response to every request
 * it routes while the app closes, so the same holds behind any answer made while draining
 * (`/readyz` included).
 * Answering each with its own 503 instead would keep the connection open, against §9.6,
 * Node and Fastify, for as long as the host keeps writing, while the gateway shuts down. So a
 * draining refusal is logged and counted once Node has written it (its response's 'finish':
 * closing-answers.ts `whenWritten`, app.ts), never when it stayed queued: the log and the
 * metric say what the wire carried. A request on an MCP endpoint pipelined behind a draining
 * refusal is not even refused: it is not processed at all (routing/closing-answers.ts). Reported failure (a hostile trial, Finding 6): requests
 * in one write behind a draining refusal were each logged `refused` and counted, the host
 * got only the first 503 (test/regressions/pipelined-after-draining-unanswered.test.ts).
 *
 * A resume is not refused: a GET on an MCP endpoint carrying `Last-Event-ID` is handled as
 * usual (a token that does not verify still gets `resume_token_invalid`), and the stream it
 * resumes runs under the drain's rules (src/shutdown-streams.ts): a request's stream is kept
 * during the grace and ended at its margin, and counted in flight, so the process waits for
 * it. Only a connection opened before the signal can send one (the listener is closed).
 * Reported failure (a hostile operator's trial 51, finding 1): a seller closed a call's stream
 * during the drain (SEP-1699 polling: an event with an id, then the close) while another call
 * kept the process up; the MCP SDK client's resume on its keep-alive connection got 503
 * `draining`, its next a refused connection, and it gave up: the call hung to the client's
 * timeout though the seller answered 2 s later
 * (test/regressions/resume-during-drain-refused-draining.test.ts).
 *
 * No `Retry-After` (RFC 9110 §10.2.3, optional on a 503): the gateway does not know when a
 * successor will listen, and another instance can take the request at once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { refuse } from '../errors/local-reply.js';
import { refusalIdOf } from '../request/peek.js';
import { closeConnectionAfter } from './closing-answers.js';

/** Whether the gateway is shutting down: set once by the app's preClose hook (src/app.ts), never cleared. */
export interface DrainState {
  draining: boolean;
  /**
   * Whether this process's resume tokens outlive it (a configured secret), set by the
   * shutdown's first `endStreams` (app.ts), at the signal, a turn before `draining` (the
   * preClose hook); undefined while no shutdown has begun. An SSE stage reads it when its
   * seller ends the stream (pipeline.ts PipelineHooks.shutdownTokensOutlive).
   */
  tokensOutlive?: boolean;
}

const DRAINING_MESSAGE = 'The gateway is shutting down: the request was not sent to any seller; send it again (to another instance, or once the gateway is back).';

/**
 * Refuses a request that arrived while draining (see file comment). `method` and `body`: the
 * request's HTTP method and body as read (a Buffer, or undefined), from which the id is read
 * (request/peek.ts refusalIdOf, as for `unknown_agent`): a POST's, else (and for a body whose id
 * cannot be read, a batch, a notification) id null.
 */
export function refuseDraining(reply: FastifyReply, method: string, body: Buffer | undefined): FastifyReply {
  closeConnectionAfter(reply);
  return refuse(reply, 'draining', refusalIdOf(method, body), DRAINING_MESSAGE);
}

/** Whether `request` resumes a stream (a GET carrying `Last-Event-ID`): served while draining (see file comment). */
export function isResume(request: FastifyRequest): boolean {
  return request.method === 'GET' && request.headers['last-event-id'] !== undefined;
}
