/**
 * Operations endpoints, outside `/agents/` so they never clash with an agent:
 *
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process runs (liveness);
 * - `GET /readyz`: 200 `{"status":"ready"}` when the config is loaded and the gateway is
 *   listening, else 503 `{"status":"not_ready","reason":...}` (readiness: before listen,
 *   during shutdown, or when marked not ready);
 * - `GET /metrics`: the Prometheus text exposition of the gateway's registry.
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
 */
import type { FastifyPluginAsync } from 'fastify';
import { boundAnswersAhead } from '../errors/earlier-answers.js';
import type { GatewayMetrics } from '../observability/metrics.js';

export const OPS_PATHS = Object.freeze({ health: '/healthz', ready: '/readyz', metrics: '/metrics' });

export interface OpsRoutesOptions {
  metrics: GatewayMetrics;
  /** Why the gateway is not ready (`not_listening`, `shutting_down`, ...), or undefined when it is ready. */
  notReadyReason(): string | undefined;
}

const NO_STORE = 'no-store';

export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, opts) => {
  app.addHook('onRequest', (request, reply, done) => {
    if (reply.raw.socket === null) boundAnswersAhead(request.raw.socket, reply.raw);
    done();
  });

  app.get(OPS_PATHS.health, (_request, reply) => reply.header('cache-control', NO_STORE).send({ status: 'ok' }));

  app.get(OPS_PATHS.ready, (_request, reply) => {
    const reason = opts.notReadyReason();
    reply.header('cache-control', NO_STORE);
    return reason === undefined ? reply.send({ status: 'ready' }) : reply.code(503).send({ status: 'not_ready', reason });
  });

  app.get(OPS_PATHS.metrics, async (_request, reply) => {
    const text = await opts.metrics.render();
    return reply.header('cache-control', NO_STORE).type(opts.metrics.contentType).send(text);
  });
};
