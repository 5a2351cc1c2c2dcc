/**
 * Reported failure (review of the LightBody, 9482ffc): the response pipeline of a plain JSON
 * answer ran in the async context of the pooled seller socket, i.e. of whichever host request
 * had opened that connection, instead of the host request it answers (undici's `request()`
 * runs its callback through its handler's `runInAsyncScope`). AsyncLocalStorage users
 * (OpenTelemetry, a pino mixin) then credited request B's pipeline work to request A.
 * Observed through a pino mixin on the discovery warning the JSON stage logs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';

const als = new AsyncLocalStorage<{ rid: string }>();

test('the JSON pipeline runs in the async context of the host request it answers', { timeout: 20_000 }, async (t) => {
  // A seller answering tools/list with a page over 128 KiB (a discovery warning, logged from the pipeline).
  const seller = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: number };
      const body = JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [{ name: 't', description: 'd'.repeat(140_000), inputSchema: { type: 'object' } }] } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  seller.keepAliveTimeout = 5000;
  await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
  t.after(() => {
    seller.closeAllConnections();
    seller.close();
  });
  const sellerUrl = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/mcp`;

  const warnings: { rid?: string; msg: string }[] = [];
  const logger = pino(
    { level: 'warn', mixin: () => ({ rid: als.getStore()?.rid }) },
    new Writable({
      write(c, _e, cb) {
        for (const l of String(c).split('\n')) if (l.trim()) warnings.push(JSON.parse(l) as { rid?: string; msg: string });
        cb();
      },
    }),
  );
  const config = parseConfig(`log_level: warn\nagents:\n  s:\n    url: ${sellerUrl}\n`, { env: {}, source: 'test.yaml' });
  const app = await buildApp(config, { logger });
  // Each host request runs in its own ALS context (as an APM agent's http instrumentation does).
  const [fastifyHandler] = app.server.listeners('request') as ((req: http.IncomingMessage, res: http.ServerResponse) => void)[];
  app.server.removeAllListeners('request');
  app.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => als.run({ rid: String(req.headers['x-rid']) }, () => fastifyHandler!(req, res)));
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    const closed = app.close();
    app.server.closeAllConnections();
    await closed;
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/agents/s/mcp`;

  const list = async (rid: string, id: number): Promise<number> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'x-rid': rid },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
    });
    await res.arrayBuffer();
    return res.status;
  };
  // Sequential: the second request reuses the seller connection the first one opened.
  assert.equal(await list('A', 1), 200);
  assert.equal(await list('B', 2), 200);
  assert.equal(await list('C', 3), 200);
  const rids = warnings.filter((w) => w.msg.startsWith('discovery response over its size target')).map((w) => w.rid);
  assert.deepEqual(rids, ['A', 'B', 'C']);
});
