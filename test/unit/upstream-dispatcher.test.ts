/**
 * The upstream dispatcher (routing/dispatcher.ts) ties a request to its exchange through
 * the hooks its header object carries (withUpstreamHooks): the seller never sees them, the
 * exchange's hooks get the start (with a working abort) and the end, on undici's legacy
 * handler API (what undici's `request()` and so @fastify/reply-from use) and on its new one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { Readable } from 'node:stream';
import { createUpstreamDispatcher, withUpstreamHooks } from '../../src/routing/dispatcher.js';
import { LightBody } from '../../src/routing/light-body.js';

let server: http.Server;
let origin: string;
const seen: http.IncomingHttpHeaders[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url?.startsWith('/kind/')) {
      const [, , status, type, coding] = req.url.split('/');
      res.writeHead(Number(status), { 'content-type': decodeURIComponent(type!), ...(coding ? { 'content-encoding': coding } : {}) });
      res.end('{"ok":true}');
      return;
    }
    if (req.url === '/hang') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function recorder(): { events: string[]; abort: ((reason: Error) => void) | undefined; hooks: { onStart(abort: (reason: Error) => void): void; onEnd(): void } } {
  const rec = {
    events: [] as string[],
    abort: undefined as ((reason: Error) => void) | undefined,
    hooks: {
      onStart(abort: (reason: Error) => void) {
        rec.events.push('start');
        rec.abort = abort;
      },
      onEnd() {
        rec.events.push('end');
      },
    },
  };
  return rec;
}

test('legacy handler (undici request()): hooks see start and end; the seller gets the headers alone', async () => {
  const upstream = createUpstreamDispatcher();
  const rec = recorder();
  // As @fastify/reply-from passes them: a copy (Object.assign) of what rewriteRequestHeaders returned.
  const headers = Object.assign({}, withUpstreamHooks({ 'x-other': 'y' }, rec.hooks));
  const res = await upstream.dispatcher.request({ origin, path: '/ok', method: 'POST', headers, body: '{}' });
  assert.equal(await res.body.text(), '{"ok":true}');
  assert.deepEqual(rec.events, ['start', 'end']);
  const { host, connection, 'content-length': length, ...rest } = seen.at(-1)!;
  assert.deepEqual([host, connection, length, rest], [new URL(origin).host, 'keep-alive', '2', { 'x-other': 'y' }]);
  await upstream.close();
});

test('legacy handler: the abort given at the start ends the request with its reason', async () => {
  const upstream = createUpstreamDispatcher();
  const rec = recorder();
  const res = await upstream.dispatcher.request({ origin, path: '/hang', method: 'GET', headers: withUpstreamHooks({}, rec.hooks) });
  const reason = new Error('gateway stops it');
  rec.abort!(reason);
  rec.abort!(new Error('twice is a no-op'));
  await assert.rejects(res.body.text(), (err: unknown) => err === reason);
  assert.deepEqual(rec.events, ['start', 'end']);
  await upstream.close();
});

test('no hooks: the request goes as is', async () => {
  const upstream = createUpstreamDispatcher();
  const res = await upstream.dispatcher.request({ origin, path: '/ok', method: 'GET', headers: { 'x-other': 'z' } });
  assert.equal(await res.body.text(), '{"ok":true}');
  assert.equal(seen.at(-1)!['x-other'], 'z');
  await upstream.close();
});

test('new-API handler (onRequestStart ...): hooks see start and end', async () => {
  const upstream = createUpstreamDispatcher();
  const rec = recorder();
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart() {},
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        resolve();
      },
      onResponseError(_c, err) {
        reject(err);
      },
    };
    upstream.dispatcher.dispatch({ origin, path: '/ok', method: 'GET', headers: withUpstreamHooks({}, rec.hooks) }, handler);
  });
  assert.equal(Buffer.concat(chunks).toString(), '{"ok":true}');
  assert.deepEqual(rec.events, ['start', 'end']);
  await upstream.close();
});

/** `request(opts, callback)`, as @fastify/reply-from calls it. */
function requestWithCallback(dispatcher: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => dispatcher.request(opts, (err, data) => (err ? reject(err) : resolve(data))));
}

async function readAll(body: NodeJS.EventEmitter): Promise<string> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    body.on('data', (c: Buffer) => chunks.push(c));
    body.on('end', resolve);
    body.on('error', reject);
  });
  return Buffer.concat(chunks).toString();
}

test('request() with a callback: a plain 2xx JSON answer of an exchange gets a LightBody, other answers undici\'s Readable', async () => {
  const upstream = createUpstreamDispatcher();
  const cases: Array<[path: string, light: boolean]> = [
    ['/kind/200/application%2Fjson', true],
    ['/kind/200/application%2Fjson%3B%20charset%3Dutf-8', true],
    ['/kind/202/application%2Fvnd.x%2Bjson', true],
    ['/kind/200/text%2Fevent-stream', false],
    ['/kind/200/application%2Fjson/gzip', false], // not decodable as sent: only the class matters here
    ['/kind/404/application%2Fjson', false],
    ['/kind/200/text%2Fhtml', false],
  ];
  for (const [path, light] of cases) {
    const rec = recorder();
    const res = await requestWithCallback(upstream.dispatcher, { origin, path, method: 'POST', headers: withUpstreamHooks({}, rec.hooks), body: '{}' });
    assert.equal(res.body instanceof LightBody, light, path);
    assert.equal(res.body instanceof Readable, !light, path);
    assert.equal(await readAll(res.body), '{"ok":true}', path);
    assert.deepEqual(rec.events, ['start', 'end'], path);
    assert.equal(typeof res.headers['content-type'], 'string', path);
  }
  // Without an exchange's hooks, and in the promise form: undici's own body.
  const plain = await requestWithCallback(upstream.dispatcher, { origin, path: '/ok', method: 'GET', headers: {} });
  assert.ok(plain.body instanceof Readable);
  await plain.body.text();
  const promised = await upstream.dispatcher.request({ origin, path: '/ok', method: 'GET', headers: withUpstreamHooks({}, recorder().hooks) });
  assert.ok(promised.body instanceof Readable);
  await promised.body.text();
  await upstream.close();
});

test('LightBody: the abort given at the start ends the request; the body errors with its reason', async () => {
  const upstream = createUpstreamDispatcher();
  const rec = recorder();
  const res = await requestWithCallback(upstream.dispatcher, { origin, path: '/hang', method: 'GET', headers: withUpstreamHooks({}, rec.hooks) });
  assert.ok(res.body instanceof LightBody);
  const read = readAll(res.body);
  const reason = new Error('gateway stops it');
  rec.abort!(reason);
  await assert.rejects(read, (err: unknown) => err === reason);
  assert.deepEqual(rec.events, ['start', 'end']);
  await upstream.close();
});

test('LightBody: destroying it before its end aborts the upstream request (the seller sees the connection close)', async () => {
  const upstream = createUpstreamDispatcher();
  const rec = recorder();
  const res = await requestWithCallback(upstream.dispatcher, { origin, path: '/hang', method: 'GET', headers: withUpstreamHooks({}, rec.hooks) });
  const closed = new Promise<void>((r) => res.body.on('close', () => r()));
  res.body.destroy();
  await closed;
  // undici reports the aborted request to the exchange's hooks as its end.
  for (let i = 0; i < 50 && rec.events.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(rec.events, ['start', 'end']);
  await upstream.close();
});

test("legacy handler with onFailure: a failure before the head goes there, not to request()'s callback; without it, to the callback", async () => {
  const upstream = createUpstreamDispatcher();
  // A port nothing listens on: bind, read the port, close.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise((r) => probe.close(r));

  const failures: Error[] = [];
  let calledBack = 0;
  const failed = new Promise<void>((resolve) => {
    const hooks = { ...recorder().hooks, onFailure: (err: Error) => void (failures.push(err), resolve()) };
    upstream.dispatcher.request({ origin: closed, path: '/mcp', method: 'POST', headers: withUpstreamHooks({}, hooks), body: '{}' }, () => void calledBack++);
  });
  await failed;
  // The wrapped handler's callback would have been queued with it: a macrotask later it has not run.
  await new Promise((r) => setImmediate(r));
  assert.deepEqual([failures.length, (failures[0] as NodeJS.ErrnoException).code, calledBack], [1, 'ECONNREFUSED', 0]);

  await assert.rejects(requestWithCallback(upstream.dispatcher, { origin: closed, path: '/mcp', method: 'POST', headers: withUpstreamHooks({}, recorder().hooks), body: '{}' }), { code: 'ECONNREFUSED' });
  await upstream.close();
});
