/**
 * Reported failure (a new user's hostile trial, F11): `HEAD /healthz` and `HEAD /readyz`
 * answered 404 `not_found` with `Connection: close`, and logged a `refused` line each time.
 * RFC 9110 §9.1: "All general-purpose servers MUST support the methods GET and HEAD"; §9.3.2:
 * HEAD is GET without content, "the server SHOULD send the same header fields". Load balancers
 * and uptime checkers probe with HEAD. The app is built with `exposeHeadRoutes: false` (HEAD
 * on an MCP endpoint is refused 405 on purpose), and the ops routes did not ask for one.
 * Now (src/ops/routes.ts) each GET ops route has its HEAD route (Fastify `exposeHeadRoute`).
 *
 * Input: a gateway on 127.0.0.1 without `ops_listen`, and one with it (the ops endpoints on
 * their own port); HEAD and GET, over raw node:http, on /healthz, /readyz, /metrics, and
 * /readyz while marked not ready.
 * Expectation: HEAD has the GET's status and header fields (Date aside; for /metrics
 * Content-Length too, as the exposition may change between the two), no body bytes; no
 * `refused` line. Controls: HEAD on an MCP endpoint stays 405 `method_not_allowed`; HEAD on
 * another path stays 404 `not_found`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import type { FastifyInstance } from 'fastify';

const AGENTS = 'agents:\n  s:\n    url: http://127.0.0.1:9/mcp\n';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request on its own connection; the body as received. */
function request(method: string, url: string): Promise<Answer> {
  return withTimeout(
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(url, { method, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    }),
    undefined,
    `${method} ${url}`,
  );
}

/** The header fields HEAD must repeat: all of GET's but Date (and those named in `besides`). */
function fields(headers: http.IncomingHttpHeaders, besides: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers)) if (k !== 'date' && !besides.includes(k)) out[k] = v;
  return out;
}

/** HEAD `path` answers as GET does, without a body. */
async function headLikeGet(base: string, path: string, status: number): Promise<void> {
  const besides = path === '/metrics' ? ['content-length'] : [];
  const get = await request('GET', base + path);
  const head = await request('HEAD', base + path);
  assert.equal(get.status, status);
  assert.ok(get.body.length > 0);
  assert.equal(head.status, status, `HEAD ${path}`);
  assert.deepEqual(fields(head.headers, besides), fields(get.headers, besides), `HEAD ${path}`);
  if (path !== '/metrics') assert.equal(head.headers['content-length'], String(get.body.length));
  else assert.match(String(head.headers['content-length']), /^[1-9][0-9]*$/);
  assert.equal(head.body.length, 0);
}

function refusedLines(log: CapturedLog): number {
  return log.entries.filter((e) => e.msg === 'refused').length;
}

for (const opsListen of [false, true]) {
  describe(`HEAD on the ops endpoints (${opsListen ? 'ops_listen' : 'main port'})`, { timeout: TEST_TIMEOUT_MS }, () => {
    let app: FastifyInstance;
    let ops: string;
    let main: string;
    const log = captureLog('info');
    before(async () => {
      const head = opsListen ? 'listen: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\n' : 'listen: { host: 127.0.0.1, port: 0 }\n';
      const config = parseConfig(`log_level: info\n${head}${AGENTS}`, { env: {} });
      app = await buildApp(config, { logger: log.logger });
      const addresses = await listenAll(app, config);
      main = addresses.address;
      ops = addresses.opsAddress ?? main;
    });
    after(async () => {
      await app.close();
    });

    test('HEAD /healthz, /readyz, /metrics: the GET status and fields, no body, no refused line', async () => {
      await headLikeGet(ops, '/healthz', 200);
      await headLikeGet(ops, '/readyz', 200);
      await headLikeGet(ops, '/metrics', 200);
      assert.equal(refusedLines(log), 0);
    });

    test('HEAD /readyz when not ready: 503, as GET', async () => {
      app.gateway.setReady(false);
      try {
        await headLikeGet(ops, '/readyz', 503);
      } finally {
        app.gateway.setReady(true);
      }
      assert.equal(refusedLines(log), 0);
    });

    // Hostile trial 33, F4 (metrics-loads-as-cross-site-script): a page's <script src> of
    // /metrics loaded (200 text/plain, no nosniff): a browser runs a text/plain script unless
    // told not to sniff.
    test('GET and HEAD of /healthz, /readyz, /metrics carry X-Content-Type-Options: nosniff', async () => {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        for (const method of ['GET', 'HEAD']) assert.equal((await request(method, ops + path)).headers['x-content-type-options'], 'nosniff', `${method} ${path}`);
      }
    });

    test('controls: HEAD on an MCP endpoint stays 405, on another path 404', async () => {
      const mcp = await request('HEAD', `${main}/agents/s/mcp`);
      assert.equal(mcp.status, 405);
      assert.equal(mcp.body.length, 0);
      const other = await request('HEAD', `${ops}/healthzz`);
      assert.equal(other.status, 404);
      assert.equal(other.body.length, 0);
    });
  });
}
