/**
 * The floor of our stack: a plain Fastify + @fastify/reply-from pass-through (its own
 * process), with no inspection at all. Same framework, same proxy plugin, the same undici
 * Agent settings as the gateway's upstream dispatcher (no body or headers timeout), the
 * request body kept and forwarded as bytes like the gateway does; the seller's response is
 * piped through.
 *
 * `POST /agents/<case>/mcp` -> `<seller>/c/<case>/mcp`, where `<seller>` is the attacking
 * seller for `attack-*` cases and the good one otherwise (env `BENCH_SELLER_GOOD`,
 * `BENCH_SELLER_ATTACK`).
 */
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';
import { Agent } from 'undici';
import type { AddressInfo } from 'node:net';
import { serveChild } from './child-stats.js';

const good = process.env.BENCH_SELLER_GOOD;
const attack = process.env.BENCH_SELLER_ATTACK ?? good;
if (!good) throw new Error('BENCH_SELLER_GOOD is not set');

const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024, exposeHeadRoutes: false });
const dispatcher = new Agent({ bodyTimeout: 0, headersTimeout: 0 });
await app.register(replyFrom, { undici: dispatcher as never, disableRequestLogging: true, retryMethods: [] });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post<{ Params: { agent: string } }>('/agents/:agent/mcp', (request, reply) => {
  const agent = request.params.agent;
  const base = agent.startsWith('attack-') ? attack : good;
  // The request's bytes as they came, like the gateway: without `body`, @fastify/reply-from
  // re-encodes a Buffer body of an application/json request with JSON.stringify (the seller
  // then got `{"type":"Buffer","data":[123,34,...]}`, ~4x the bytes, and the floor paid for it).
  return reply.from(`${base}/c/${encodeURIComponent(agent)}/mcp`, { body: request.body as Buffer, contentType: String(request.headers['content-type'] ?? 'application/json') });
});
app.addHook('onClose', async () => dispatcher.close());

await app.listen({ host: '127.0.0.1', port: 0 });
serveChild((app.server.address() as AddressInfo).port, async () => {
  const closed = app.close();
  app.server.closeAllConnections();
  await closed;
});
