/**
 * /healthz, /readyz and /metrics: on the main port by default; on their own port with
 * `ops_listen` (the main port then answers them 404 not_found, like any non-MCP path).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { withTakenPort } from '../helpers/ports.js';
import { withTimeout } from '../helpers/timeout.js';

const AGENTS = 'agents:\n  s:\n    url: http://127.0.0.1:9/mcp\n';
const EXPOSITION = 'text/plain; version=0.0.4; charset=utf-8';

async function get(url: string): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

function notFoundBody(text: string): void {
  const body = JSON.parse(text) as { jsonrpc: string; id: unknown; error: { code: number; data: { reason: string } } };
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32600);
  assert.equal(body.error.data.reason, 'not_found');
}

describe('ops endpoints on the main port (no ops_listen)', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway(`log_level: silent\n${AGENTS}`);
  });
  after(async () => {
    await gw.close();
  });

  test('GET /healthz is 200 {"status":"ok"}', async () => {
    const r = await get(`${gw.baseUrl}/healthz`);
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { status: 'ok' });
  });

  test('GET /readyz is 200 while listening, 503 draining when marked not ready, 200 again after', async () => {
    assert.deepEqual([(await get(`${gw.baseUrl}/readyz`)).status, JSON.parse((await get(`${gw.baseUrl}/readyz`)).text)], [200, { status: 'ready' }]);
    gw.app.gateway.setReady(false);
    try {
      const r = await get(`${gw.baseUrl}/readyz`);
      assert.equal(r.status, 503);
      assert.deepEqual(JSON.parse(r.text), { status: 'not_ready', reason: 'draining' });
      assert.equal((await get(`${gw.baseUrl}/healthz`)).status, 200, 'liveness is unaffected');
    } finally {
      gw.app.gateway.setReady(true);
    }
    assert.equal((await get(`${gw.baseUrl}/readyz`)).status, 200);
  });

  test('GET /metrics is the text exposition with its content type', async () => {
    const r = await get(`${gw.baseUrl}/metrics`);
    assert.equal(r.status, 200);
    assert.equal(r.contentType, EXPOSITION);
    assert.match(r.text, /^# HELP adcp_gateway_exchanges_total /m);
    assert.match(r.text, /^adcp_gateway_sse_streams_open 0$/m);
  });

  test('other methods on the ops paths are 405 method_not_allowed (Allow: GET, HEAD), other paths 404 not_found', async () => {
    // 404 until trial 19, L1 (test/regressions/ops-listen-unknown-path-fastify-404.test.ts).
    const post = await fetch(`${gw.baseUrl}/healthz`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal((JSON.parse(await post.text()) as { error: { data: { reason: string } } }).error.data.reason, 'method_not_allowed');
    const other = await get(`${gw.baseUrl}/metricsz`);
    assert.equal(other.status, 404);
    notFoundBody(other.text);
  });
});

describe('readiness before listening', () => {
  test('a built app that is not listening answers /readyz 503 not_listening and /healthz 200', async () => {
    const app = await buildApp(parseConfig(`log_level: silent\n${AGENTS}`, { env: {} }), { logger: false });
    try {
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), { status: 'not_ready', reason: 'not_listening' });
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});

describe('ops_listen: the ops endpoints on their own port', () => {
  const config = parseConfig(`log_level: silent\nlisten: { host: 127.0.0.1, port: 0 }\nops_listen: { port: 0 }\n${AGENTS}`, { env: {} });
  let app: Awaited<ReturnType<typeof buildApp>>;
  let main: string;
  let ops: string;
  before(async () => {
    app = await buildApp(config, { logger: false });
    const addresses = await listenAll(app, config);
    assert.ok(addresses.opsAddress);
    main = addresses.address;
    ops = addresses.opsAddress;
  });
  after(async () => {
    await withTimeout(app.close(), 5_000, 'close');
  });

  test('config: ops_listen.host defaults to listen.host', () => {
    assert.deepEqual(config.ops_listen, { host: '127.0.0.1', port: 0 });
  });

  test('the ops port serves /healthz, /readyz and /metrics', async () => {
    assert.notEqual(ops, main);
    const health = await get(`${ops}/healthz`);
    assert.deepEqual([health.status, JSON.parse(health.text)], [200, { status: 'ok' }]);
    const ready = await get(`${ops}/readyz`);
    assert.deepEqual([ready.status, JSON.parse(ready.text)], [200, { status: 'ready' }]);
    const metrics = await get(`${ops}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.contentType, EXPOSITION);
    assert.match(metrics.text, /^adcp_gateway_sse_streams_open 0$/m);
  });

  test('the main port answers the ops paths 404 with a JSON-RPC not_found body', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const r = await get(`${main}${path}`);
      assert.equal(r.status, 404, path);
      notFoundBody(r.text);
    }
  });

  test('the ops port does not serve agents', async () => {
    const r = await fetch(`${ops}/agents/s/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    assert.equal(r.status, 404);
    await r.text();
  });

  test('/readyz on the ops port follows the gateway: 503 when marked not ready', async () => {
    app.gateway.setReady(false);
    try {
      const r = await get(`${ops}/readyz`);
      assert.deepEqual([r.status, JSON.parse(r.text)], [503, { status: 'not_ready', reason: 'draining' }]);
    } finally {
      app.gateway.setReady(true);
    }
  });

  test('closing the gateway closes the ops listener too', async () => {
    const other = await buildApp(config, { logger: false });
    await listenAll(other, config);
    const opsApp = other.gateway.opsApp;
    assert.ok(opsApp);
    assert.equal(opsApp.server.listening, true);
    await withTimeout(other.close(), 5_000, 'close');
    assert.equal(other.server.listening, false);
    assert.equal(opsApp.server.listening, false);
  });
});

describe('listenAll', () => {
  test('without ops_listen it listens on the main port only', async () => {
    const config = parseConfig(`log_level: silent\nlisten: { host: 127.0.0.1, port: 0 }\n${AGENTS}`, { env: {} });
    const app = await buildApp(config, { logger: false });
    try {
      const addresses = await listenAll(app, config);
      assert.equal(addresses.opsAddress, undefined);
      assert.equal(app.gateway.opsApp, undefined);
      assert.equal((await get(`${addresses.address}/healthz`)).status, 200);
    } finally {
      await withTimeout(app.close(), 5_000, 'close');
    }
  });

  test('an ops port in use fails the start and closes the main listener', async () => {
    await withTakenPort(async (port) => {
      const config = parseConfig(`log_level: silent\nlisten: { host: 127.0.0.1, port: 0 }\nops_listen: { port: ${port} }\n${AGENTS}`, { env: {} });
      const app = await buildApp(config, { logger: false });
      await assert.rejects(listenAll(app, config), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
      assert.equal(app.server.listening, false);
    });
  });
});

describe('ops_listen in the config', () => {
  test('port is required, unknown keys are errors', () => {
    assert.throws(
      () => parseConfig(`ops_listen: { host: 127.0.0.1, prot: 9464 }\n${AGENTS}`, { env: {} }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(
          err.problems.map((p) => [p.path, p.message]),
          [
            ['ops_listen.port', 'missing required key `port`'],
            ['ops_listen.prot', 'unknown key `prot` (did you mean `port`?)'],
          ],
        );
        return true;
      },
    );
  });

  test('absent means undefined (the endpoints stay on the main port)', () => {
    assert.equal(parseConfig(AGENTS, { env: {} }).ops_listen, undefined);
  });
});
