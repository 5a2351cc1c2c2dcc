/**
 * Regression (a hostile operator's trial 53, F4): `ops_listen` checked neither `Host` nor
 * `Origin`, though README says it keeps `/metrics` apart from what a rebound page can read:
 * `curl -H 'Host: rebind.evil.example:18788' http://127.0.0.1:18788/metrics` answered 200
 * with the agents' names. The ops listener now checks a request's head as the MCP endpoint
 * does (request/head-refusal.ts): `Host` against the loopback names and `allowed_hosts` when
 * `ops_listen.host` is loopback or `allowed_hosts` is not empty, `Origin` and `Sec-Fetch-Site`.
 *
 * Input: a real gateway (buildApp + listenAll) with `ops_listen` on 127.0.0.1, requests through
 * node:http so that `Host` can be set. Expected:
 * - `Host: rebind.evil.example:<port>` on GET /metrics, /healthz, /readyz and HEAD /metrics:
 *   403 `host_not_allowed` (JSON-RPC error, id null, -32600, the MCP endpoint's message), one
 *   `refused` line each (`agent` null, the `host` named), counted under `agent="_none"`;
 * - `Origin: http://evil.example`, `Sec-Fetch-Site: cross-site`: 403 `origin_not_allowed`;
 * - the same head with `Expect: 100-continue` and a body: no `100 Continue`, the refusal, closed;
 * - loopback names, a listed `allowed_hosts` name (a reload of the list applies at once): 200;
 * - `ops_listen.host: 0.0.0.0` (bound to 127.0.0.1 here) with `allowed_hosts` empty: `Host`
 *   unchecked, as on the main listener; with the list set: checked;
 * - the ops endpoints on the main port (no `ops_listen`) answer any `Host`, as documented.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { listenAll } from '../../src/ops/listen.js';
import { captureLog, type CapturedLog } from '../helpers/capture-log.js';
import { withTimeout } from '../helpers/timeout.js';

const AGENTS = 'agents:\n  secret-seller-name:\n    url: http://127.0.0.1:9/mcp\n';

interface Answer {
  status: number;
  body: string;
  nosniff: string | undefined;
}

/** One request to `base` + `path` with `headers` (Host included when given), through node:http. */
function request(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return withTimeout(
    new Promise<Answer>((resolve, reject) => {
      const req = http.request(`${base}${path}`, { method, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, nosniff: res.headers['x-content-type-options'] as string | undefined }));
      });
      req.on('error', reject);
      req.end();
    }),
    10_000,
    `${method} ${path}`,
  );
}

function refusal(message: string, reason: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message, data: { reason } } });
}

const hostRefusal = (host: string): string =>
  refusal(`Host "${host}" is not allowed: the gateway serves localhost, 127.0.0.1 and [::1] (allowed_hosts lists other host names).`, 'host_not_allowed');

/** A gateway from `yaml`, its ops app listening on 127.0.0.1 (whatever `ops_listen.host` says: the check follows the config). */
async function start(yaml: string, log: CapturedLog) {
  const config = parseConfig(yaml, { env: {} });
  const app = await buildApp(config, { logger: log.logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const ops = app.gateway.opsApp;
  const opsAddress = ops === undefined ? undefined : await ops.listen({ host: '127.0.0.1', port: 0 });
  return { app, config, ops: opsAddress ?? '', main: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
}

describe('ops_listen on 127.0.0.1: the ops endpoints refuse a rebound Host and a page', () => {
  const log = captureLog('info');
  let gw: Awaited<ReturnType<typeof start>>;
  let rebind: string;
  before(async () => {
    const config = parseConfig(`listen: { host: 127.0.0.1, port: 0 }\nops_listen: { host: 127.0.0.1, port: 0 }\n${AGENTS}`, { env: {} });
    const app = await buildApp(config, { logger: log.logger });
    const { opsAddress } = await listenAll(app, config);
    gw = { app, config, ops: opsAddress!, main: '' };
    rebind = `rebind.evil.example:${new URL(gw.ops).port}`;
  });
  after(async () => {
    await withTimeout(gw.app.close(), 5_000, 'close');
  });

  test('Host rebind.evil.example: 403 host_not_allowed on every ops path, HEAD included, each refused and counted', async () => {
    const before = log.entries.length;
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      assert.deepEqual(await request(gw.ops, path, { host: rebind }), { status: 403, body: hostRefusal(rebind), nosniff: 'nosniff' }, path);
    }
    assert.deepEqual(await request(gw.ops, '/metrics', { host: rebind }, 'HEAD'), { status: 403, body: '', nosniff: 'nosniff' });
    const refused = log.entries.slice(before).filter((e) => e.msg === 'refused');
    assert.deepEqual(
      refused.map((e) => ({ agent: e.agent, http_method: e.http_method, status: e.status, reason: e.reason, host: e.host, origin: e.origin, level: e.level })),
      ['GET', 'GET', 'GET', 'HEAD'].map((m) => ({ agent: null, http_method: m, status: 403, reason: 'host_not_allowed', host: rebind, origin: null, level: 30 })),
    );
    const metrics = await request(gw.ops, '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /^adcp_gateway_refusals_total\{agent="_none",reason="host_not_allowed"\} 4$/m);
    assert.ok(!(await request(gw.ops, '/metrics', { host: rebind })).body.includes('secret-seller-name'));
  });

  test('Expect: 100-continue with a rebound Host: no 100, the refusal, the connection closed (its body never read)', async () => {
    const wire = await withTimeout(
      new Promise<string>((resolve) => {
        const s = net.connect(Number(new URL(gw.ops).port), '127.0.0.1');
        let got = '';
        s.setEncoding('latin1');
        s.on('data', (d: string) => (got += d));
        s.on('error', () => {});
        s.on('close', () => resolve(got));
        s.write(`GET /metrics HTTP/1.1\r\nHost: ${rebind}\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n`);
      }),
      10_000,
      'the refusal and the close',
    );
    assert.match(wire, /^HTTP\/1\.1 403 /);
    assert.match(wire, /\r\nconnection: close\r\n/i);
    assert.ok(wire.endsWith(hostRefusal(rebind)), wire);
  });

  test("a page's request (Origin not served, Sec-Fetch-Site cross-site): 403 origin_not_allowed", async () => {
    const origin = await request(gw.ops, '/metrics', { origin: 'http://evil.example' });
    assert.equal(origin.status, 403);
    assert.equal(JSON.parse(origin.body).error.data.reason, 'origin_not_allowed');
    const site = await request(gw.ops, '/metrics', { 'sec-fetch-site': 'cross-site' });
    assert.equal(site.status, 403);
    assert.equal(JSON.parse(site.body).error.data.reason, 'origin_not_allowed');
  });

  test('loopback names are served; an allowed_hosts name once a reload lists it', async () => {
    const port = new URL(gw.ops).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`]) assert.equal((await request(gw.ops, '/metrics', { host })).status, 200, host);
    assert.equal((await request(gw.ops, '/healthz', { host: `gw.internal:${port}` })).status, 403);
    gw.app.gateway.setConfig(parseConfig(`listen: { host: 127.0.0.1, port: 0 }\nops_listen: { host: 127.0.0.1, port: 0 }\nallowed_hosts: [gw.internal]\n${AGENTS}`, { env: {} }));
    assert.equal((await request(gw.ops, '/healthz', { host: `gw.internal:${port}` })).status, 200);
    assert.equal((await request(gw.ops, '/healthz', { host: rebind })).status, 403);
  });
});

describe('ops_listen on 0.0.0.0: Host checked only once allowed_hosts lists names, as on the main listener', () => {
  test('allowed_hosts empty: served whatever its Host; set: a name not listed refused, an IP literal served', async () => {
    const head = 'listen: { host: 127.0.0.1, port: 0 }\nops_listen: { host: 0.0.0.0, port: 0 }\n';
    const open = await start(`${head}${AGENTS}`, captureLog('silent'));
    const listed = await start(`${head}allowed_hosts: [gw.internal]\n${AGENTS}`, captureLog('silent'));
    try {
      assert.equal((await request(open.ops, '/metrics', { host: 'rebind.evil.example' })).status, 200);
      assert.equal((await request(listed.ops, '/metrics', { host: 'rebind.evil.example' })).body, hostRefusal('rebind.evil.example'));
      assert.equal((await request(listed.ops, '/metrics', { host: 'gw.internal' })).status, 200);
      // A probe or a scrape by pod IP names no host: served (DNS rebinding always names one).
      for (const host of ['10.1.2.3:9464', '10.1.2.3', '[fd00::5]:9464', '[fd00::5]']) assert.equal((await request(listed.ops, '/healthz', { host })).status, 200, host);
      for (const host of ['10.1.2.3.evil.example', '[fd00::5', '10.1.2:9464', '0x0a010203']) assert.equal((await request(listed.ops, '/healthz', { host })).status, 403, host);
    } finally {
      await withTimeout(Promise.all([open.app.close(), listed.app.close()]), 5_000, 'close');
    }
  });
});

describe('no ops_listen: the ops endpoints on the main port answer any Host (README: serve them on ops_listen to keep them apart)', () => {
  test('Host rebind.evil.example: 200', async () => {
    const gw = await start(`listen: { host: 127.0.0.1, port: 0 }\n${AGENTS}`, captureLog('silent'));
    try {
      assert.equal((await request(gw.main, '/metrics', { host: 'rebind.evil.example' })).status, 200);
    } finally {
      await withTimeout(gw.app.close(), 5_000, 'close');
    }
  });
});
