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
 */
import type { FastifyPluginAsync } from 'fastify';
import type { GatewayMetrics } from '../observability/metrics.js';

export const OPS_PATHS = Object.freeze({ health: '/healthz', ready: '/readyz', metrics: '/metrics' });

export interface OpsRoutesOptions {
  metrics: GatewayMetrics;
  /** Why the gateway is not ready (`not_listening`, `shutting_down`, ...), or undefined when it is ready. */
  notReadyReason(): string | undefined;
}

const NO_STORE = 'no-store';

export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, opts) => {
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
