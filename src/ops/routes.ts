/**
 * Operations endpoints, outside `/agents/` so they never clash with an agent:
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process runs and its port accepts connections (liveness; during a graceful shutdown the main port refuses new connections, the `ops_listen` one does not: README, "Probes during a graceful shutdown");
 * - `GET /readyz`: 200 `{"status":"ready"}` when the config is loaded and the gateway is
 *   listening, else 503 `{"status":"not_ready","reason":...}` (readiness: before listen,
 *   during shutdown, or when marked not ready);
 * - `GET /metrics`: the Prometheus text exposition of the gateway's registry.
 *
 * Each also answers HEAD, with the GET's status and header fields and no body (RFC 9110 §9.1:
 * a general-purpose server MUST support GET and HEAD; §9.3.2). Both apps are built with
 * `exposeHeadRoutes: false` (HEAD on an MCP endpoint is refused 405), so each route asks for
 * its own (`HEAD_TOO`). Reported failure (a new user's hostile trial, F11): load balancers'
 * `HEAD /healthz` got 404 `not_found` and a `refused` line
 * (test/regressions/head-healthz-not-found.test.ts).
 *
 * Each answer carries `X-Content-Type-Options: nosniff` (a page cannot run one as a script), as
 * does every answer the gateway writes itself, the listener's 404 and 405 refusals of an ops
 * path included (errors/own-answer-headers.ts).
 *
 * Registered on the main app, or on the separate ops app when `ops_listen` is set (src/app.ts).
 *
 * An ops answer queued behind another on its connection (HTTP/1.1 pipelining: no socket yet)
 * bounds an answer ahead of it that has no deadline of its own (the standalone GET stream: its
 * agent's sse_deadline_ms, then it ends plainly, `resumable_end` `sse_deadline`), as an MCP
 * answer does (errors/earlier-answers.ts `boundAnswersAhead`). Reported failure (a carried
 * defect): a `GET /healthz` pipelined behind a standalone GET stream waited as long as the
 * stream lived (test/regressions/pipelined-ops-request-behind-get-stream-unbounded.test.ts).
 * The hook is this plugin's own (Fastify encapsulation): the MCP routes do not run it.
 *
 * On the `ops_listen` listener the same hook refuses a browser's or a rebound page's request
 * from its head (`headCheck`: ops/head-check.ts; a hostile operator's trial 53, F4), before the
 * route answers; a head that declares a body gets `Connection: close` (the body is never read).
 */
import type { FastifyPluginAsync } from 'fastify';
import { boundAnswersAhead } from '../errors/earlier-answers.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { NOSNIFF_NAME, NOSNIFF_VALUE } from '../errors/own-answer-headers.js';
import { answerHeadRefusal } from '../request/head-refusal.js';
import type { OpsHeadCheck } from './head-check.js';

export const OPS_PATHS = Object.freeze({ health: '/healthz', ready: '/readyz', metrics: '/metrics' });
/**
 * The methods each ops path takes (its `Allow`); any other is refused 405 `method_not_allowed`
 * by the listener's not-found handler (routing/unrouted.ts).
 */
export const OPS_METHODS = ['GET', 'HEAD'] as const;

export interface OpsRoutesOptions {
  metrics: GatewayMetrics;
  /** Why the gateway is not ready (`not_listening`, `shutting_down`, ...), or undefined when it is ready. */
  notReadyReason(): string | undefined;
  /** On the `ops_listen` listener: its browser and DNS-rebinding check (ops/head-check.ts); undefined on the main listener. */
  headCheck?: OpsHeadCheck;
}

const NO_STORE = 'no-store';
/** Route option: Fastify adds the route's HEAD route (its handler, the body dropped, Content-Length kept). */
const HEAD_TOO = { exposeHeadRoute: true } as const;

export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, opts) => {
  app.addHook('onRequest', (request, reply, done) => {
    if (reply.raw.socket === null) boundAnswersAhead(request.raw.socket, reply.raw);
    // A page's <script src="/metrics"> is not run as a script (hostile trial 33, F4: it loaded,
    // 200 text/plain; Fetch: a nosniff response of a non-script type is blocked as a script).
    // The ops endpoints' answers are the gateway's own (errors/own-answer-headers.ts).
    reply.header(NOSNIFF_NAME, NOSNIFF_VALUE);
    const refusal = opts.headCheck?.(request.raw);
    if (refusal !== undefined) {
      const headers = request.headers;
      const length = headers['content-length'];
      // Answered here, so `done` is not called: the route never runs.
      answerHeadRefusal(reply, refusal, (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined);
      return;
    }
    done();
  });

  app.get(OPS_PATHS.health, HEAD_TOO, (_request, reply) => reply.header('cache-control', NO_STORE).send({ status: 'ok' }));

  app.get(OPS_PATHS.ready, HEAD_TOO, (_request, reply) => {
    const reason = opts.notReadyReason();
    reply.header('cache-control', NO_STORE);
    return reason === undefined ? reply.send({ status: 'ready' }) : reply.code(503).send({ status: 'not_ready', reason });
  });

  app.get(OPS_PATHS.metrics, HEAD_TOO, async (_request, reply) => {
    const text = await opts.metrics.render();
    return reply.header('cache-control', NO_STORE).type(opts.metrics.contentType).send(text);
  });
};
