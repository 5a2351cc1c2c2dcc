/**
 * The upstream pools (routing/upstream-pools.ts): one pool per (origin, TLS settings), kept
 * across a reload while some agent still has that profile, retired (closed once idle) when
 * none has; a request of an agent from an older config whose pool is retired goes on a
 * connection of its own, closed when it is over. (A new user's trial 9, F2; the end-to-end
 * case with a self-signed seller: test/regressions/tls-skip-verify-shared-pool.test.ts.)
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import type { AgentConfig } from '../../src/config/types.js';
import { createUpstreamDispatcher, withUpstreamHooks, type UpstreamDispatcher } from '../../src/routing/dispatcher.js';
import { UPSTREAM_POOL_OPTIONS, connectionProfile } from '../../src/routing/upstream-pools.js';
import { MeteredClient } from '../../src/routing/wire-meter.js';
import type { buildConnector } from 'undici';

/** The agents of a config with these `name: {url, tls_insecure_skip_verify}` entries. */
function agents(entries: Record<string, [url: string, skipVerify: boolean]>): Map<string, AgentConfig> {
  const yaml = ['agents:', ...Object.entries(entries).map(([name, [url, skip]]) => `  ${name}: { url: "${url}", tls_insecure_skip_verify: ${skip} }`), ''].join('\n');
  return new Map(parseConfig(yaml, { env: {} }).agents);
}

describe('connectionProfile', () => {
  test('https: the origin and whether certificates are verified; http: the origin alone', () => {
    const a = agents({ strict: ['https://127.0.0.1:9443/a', false], lab: ['https://127.0.0.1:9443/b', true], plain: ['http://127.0.0.1:9080/mcp', true] });
    assert.deepEqual(connectionProfile(a.get('strict')!), { origin: 'https://127.0.0.1:9443', tls: { rejectUnauthorized: true }, key: 'https://127.0.0.1:9443 {"rejectUnauthorized":true}' });
    assert.deepEqual(connectionProfile(a.get('lab')!), { origin: 'https://127.0.0.1:9443', tls: { rejectUnauthorized: false }, key: 'https://127.0.0.1:9443 {"rejectUnauthorized":false}' });
    assert.deepEqual(connectionProfile(a.get('plain')!), { origin: 'http://127.0.0.1:9080', tls: {}, key: 'http://127.0.0.1:9080 {}' });
  });
});

describe('pools by origin and TLS settings', () => {
  let upstream: UpstreamDispatcher;
  before(() => {
    upstream = createUpstreamDispatcher();
  });
  after(() => upstream.close());

  test('agents at one origin share a pool only with the same TLS settings', () => {
    const a = agents({
      strict: ['https://127.0.0.1:9443/a', false],
      strict2: ['https://127.0.0.1:9443/b', false],
      lab: ['https://127.0.0.1:9443/c', true],
      other: ['https://127.0.0.1:9444/a', false],
      plain: ['http://127.0.0.1:9080/a', false],
      plain2: ['http://127.0.0.1:9080/b', true],
    });
    upstream.configure(a.values());
    const pool = (name: string) => upstream.poolFor(a.get(name)!);
    assert.equal(pool('strict'), pool('strict2'));
    assert.notEqual(pool('strict'), pool('lab'));
    assert.notEqual(pool('strict'), pool('other'));
    // Plain HTTP has no TLS: the flag does not split the pool.
    assert.equal(pool('plain'), pool('plain2'));
    assert.equal(new Set(['strict', 'lab', 'other', 'plain'].map(pool)).size, 4);
  });

  test('a reload keeps the pool of a profile still in use and retires (closes) the others', () => {
    const first = agents({ strict: ['https://127.0.0.1:9443/a', false], lab: ['https://127.0.0.1:9443/b', true] });
    upstream.configure(first.values());
    const strictPool = upstream.poolFor(first.get('strict')!);
    const labPool = upstream.poolFor(first.get('lab')!);

    const second = agents({ strict: ['https://127.0.0.1:9443/a', false], lab: ['https://127.0.0.1:9443/b', false] });
    upstream.configure(second.values());
    assert.equal(upstream.poolFor(second.get('strict')!), strictPool);
    assert.equal(upstream.poolFor(second.get('lab')!), strictPool);
    // No request went to either: neither undici Pool was made (trial 21, H1), so nothing to close.
    assert.deepEqual([strictPool.retired, strictPool.made], [false, undefined]);
    assert.deepEqual([labPool.retired, labPool.made], [true, undefined]);
    // An agent of the older config keeps the pool it was given (its requests: below).
    assert.equal(upstream.poolFor(first.get('lab')!), labPool);

    // Back to skip-verify: a new pool, never the closed one.
    const third = agents({ lab: ['https://127.0.0.1:9443/b', true] });
    upstream.configure(third.values());
    const again = upstream.poolFor(third.get('lab')!);
    assert.notEqual(again, labPool);
    assert.deepEqual([again.retired, strictPool.retired], [false, true]);
  });
});

describe('a request on a retired pool', () => {
  let server: http.Server;
  let url: string;
  /** Remote port of each request's connection, and the connections closed so far. */
  const ports: number[] = [];
  const closedPorts: number[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      ports.push(req.socket.remotePort!);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    server.keepAliveTimeout = 30_000;
    server.on('connection', (socket: Socket) => {
      const port = socket.remotePort!;
      socket.on('close', () => closedPorts.push(port));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const hooks = (pool: ReturnType<UpstreamDispatcher['poolFor']>) => ({ onStart() {}, onEnd() {}, pool });

  test('goes on a connection of its own, closed once it is over; once the dispatcher is closed, it is refused', async () => {
    const upstream = createUpstreamDispatcher();
    const old = agents({ a: [url, false] });
    upstream.configure(old.values());
    const pool = upstream.poolFor(old.get('a')!);
    const send = () => upstream.dispatcher.request({ origin: new URL(url).origin, path: '/mcp', method: 'POST', headers: withUpstreamHooks({}, hooks(pool)), body: '{}' });

    const first = await send();
    assert.equal(await first.body.text(), '{"ok":true}');
    // A reload leaves no agent at this origin: the pool retires, its idle connection closes.
    upstream.configure(agents({ b: ['http://127.0.0.1:9/mcp', false] }).values());
    assert.equal(pool.retired, true);
    for (let i = 0; i < 200 && closedPorts.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(closedPorts, [ports[0]]);

    // The older config's agent, dispatched late: answered on a new connection, which then closes.
    const late = await send();
    assert.equal(await late.body.text(), '{"ok":true}');
    for (let i = 0; i < 200 && closedPorts.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(ports.length, 2);
    assert.notEqual(ports[1], ports[0]);
    assert.deepEqual(closedPorts, ports);

    await upstream.close();
    // The retired pool's close is over: it is destroyed (a transport failure, upstream-failure.ts).
    await assert.rejects(send(), { code: 'UND_ERR_DESTROYED' });
    assert.equal(ports.length, 2);
  });
});

describe('one response at a time per metered connection (wire-meter.ts METERED_CONNECTION_OPTIONS)', () => {
  const connect: buildConnector.connector = (_options, callback) => callback(new Error('not connected'), null);
  test('the pools\' options carry pipelining 1 and no HTTP/2; a MeteredClient refuses options that allow more', async () => {
    assert.equal(UPSTREAM_POOL_OPTIONS.pipelining, 1);
    assert.equal(UPSTREAM_POOL_OPTIONS.allowH2, false);
    const made = new MeteredClient('http://127.0.0.1:9', { ...UPSTREAM_POOL_OPTIONS, connect });
    assert.equal(made.pipelining, 1);
    await made.close();
    const refused = /^MeteredClient: one response at a time per socket \(pipelining 1, allowH2 false\)$/;
    assert.throws(() => new MeteredClient('http://127.0.0.1:9', { pipelining: 2, connect }), { name: 'TypeError', message: refused });
    assert.throws(() => new MeteredClient('http://127.0.0.1:9', { allowH2: true, connect }), { name: 'TypeError', message: refused });
  });
});
