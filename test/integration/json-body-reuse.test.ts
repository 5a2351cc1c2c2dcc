/**
 * Large JSON bodies are read into one buffer of their Content-Length, taken from a pool and
 * given back once the host's response is over (src/response/body-pool.ts; issue 5, JSON (a)
 * at 4 MiB). Each case: the host gets the seller's exact bytes, whatever the earlier bodies
 * that used the same buffer, a host that left mid-answer included. Real gateway (in this
 * process, so the pool can be looked at), raw seller on 127.0.0.1 writing each body in
 * several writes so that it arrives in several chunks.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { bodyPool } from '../../src/response/body-pool.js';

let body: Buffer = Buffer.alloc(0);
const stack = useSellerAndGateway(
  () =>
    startRawSeller((_req: SeenRequest, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      const parts = [body.subarray(0, 1000), body.subarray(1000, 300_000), body.subarray(300_000)];
      const next = (): void => {
        const part = parts.shift();
        if (part === undefined) return void res.end();
        res.write(part);
        setImmediate(next);
      };
      next();
    }),
  (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 4194304\n`),
);

const call = (id: number) => rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });

/** A tool result of exactly `size` bytes whose blob is `fill` repeated. */
function message(id: number, size: number, fill: string, text = 'ok'): Buffer {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":{"blob":"`;
  const tail = '"}}}';
  const n = size - head.length - tail.length;
  return Buffer.from(head + fill.repeat(Math.ceil(n / fill.length)).slice(0, n) + tail);
}

describe('JSON stage: large bodies in a reused buffer', () => {
  test('a shorter body in the buffer of a longer one: the exact bytes of each', async () => {
    body = message(1, 900_000, 'abcdefgh');
    const first = await call(1);
    assert.equal(first.bytes, 900_000);
    assert.deepEqual(first.body, body);
    await new Promise((r) => setImmediate(r));
    const idle = bodyPool.idleByteCount;
    assert.ok(idle >= 1 << 20, `the 1 MiB buffer is back in the pool (${idle})`);

    body = message(2, 600_000, 'XYZ');
    const second = await call(2);
    assert.equal(second.bytes, 600_000);
    assert.deepEqual(second.body, body);
  });

  test('a host that leaves mid-answer: the next host gets its exact bytes', async () => {
    body = message(3, 2_000_000, '0123456789');
    await new Promise<void>((resolve, reject) => {
      const payload = JSON.stringify(toolCall(3, 'get_products'));
      const url = new URL(stack.gateway.agentUrl('s'));
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' } },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => {});
      req.once('error', reject);
      req.end(payload);
    });
    await new Promise((r) => setTimeout(r, 50));
    for (const [id, fill] of [
      [4, 'qwerty'],
      [5, 'Z'],
    ] as const) {
      body = message(id, 1_500_000, fill);
      const r = await call(id);
      assert.deepEqual(r.body, body, `body ${id}`);
    }
  });

  test('a rewritten body gives its buffer back too (its answer is a copy); the next body in that buffer is exact', async () => {
    await new Promise((r) => setImmediate(r));
    const sc = { products: [{ id: 'p1' }], total: 1 };
    // Legacy text-only JSON (lifted), padded to a pooled size with a long string.
    const padded = { ...sc, pad: 'p'.repeat(400_000) };
    body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: JSON.stringify(padded) }] } }));
    const before = bodyPool.idleByteCount;
    const r = (await call(6)).json() as { result: { structuredContent: unknown } };
    assert.deepEqual(r.result.structuredContent, padded);
    await new Promise((r) => setImmediate(r));
    assert.equal(bodyPool.idleByteCount, before + 2 * 512 * 1024, 'its 512 KiB buffer is back, and its answer\'s (body-pool.ts concat)');
    body = message(7, 300_000, 'kL');
    assert.deepEqual((await call(7)).body, body);
  });

  test('a deduped answer is written into a pooled buffer, given back once sent (its bytes intact for the host)', async () => {
    // Reported failure (bench json-b-65536 --trace-gc): a fresh output buffer per rewritten
    // response drove the gateway into a mark-compact every ~300 ms.
    // Sizes in classes no other case here uses: the answer ~98 KiB (128 KiB class), the body ~196 KiB (256 KiB class).
    const sc = JSON.stringify({ blob: 'q'.repeat(100_000) });
    body = Buffer.from(`{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":${JSON.stringify(sc)}}],"structuredContent":${sc}}}`);
    await new Promise((r) => setImmediate(r));
    const before = bodyPool.idleByteCount;
    const r = await call(9);
    const expected = `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Result in structuredContent (${sc.length} bytes): blob."}],"structuredContent":${sc}}}`;
    assert.equal(r.text(), expected);
    await new Promise((r2) => setImmediate(r2));
    assert.equal(bodyPool.idleByteCount, before + 128 * 1024 + 256 * 1024, 'the answer and the body are both back');
  });
});

