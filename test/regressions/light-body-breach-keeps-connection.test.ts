/**
 * Reported failure (review of the LightBody, 9482ffc): an answer that arrives whole (head,
 * body and end in one write) but breaks a bound (raw bytes without Content-Length, JSON
 * depth) cost its seller connection. The body delivered its first chunk inside undici's
 * `onData`, the reader destroyed it before undici had parsed the message's end, and the
 * request was aborted. Before, undici's Readable delivered that chunk a tick later, after
 * the end (the abort then did nothing and the connection went back to the pool); the
 * LightBody now aborts only once the chunks being parsed are through.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';

async function withSeller(body: (id: number) => string, run: (gw: RunningGateway, stats: { connections: number; closes: number }) => Promise<void>): Promise<void> {
  const stats = { connections: 0, closes: 0 };
  const sockets = new Set<net.Socket>();
  const seller = net.createServer((sock) => {
    stats.connections++;
    sockets.add(sock);
    sock.on('close', () => {
      stats.closes++;
      sockets.delete(sock);
    });
    sock.on('error', () => {});
    let buf = '';
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const cl = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
      if (buf.length < end + 4 + cl) return;
      const id = (JSON.parse(buf.slice(end + 4, end + 4 + cl)) as { id: number }).id;
      buf = buf.slice(end + 4 + cl);
      const b = body(id);
      // Head, whole chunked body and its end in one write.
      sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${Buffer.byteLength(b).toString(16)}\r\n${b}\r\n0\r\n\r\n`);
    });
  });
  await new Promise<void>((r) => seller.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(seller.address() as AddressInfo).port}/mcp`;
  const gw = await startGateway(`log_level: silent\nagents:\n  s:\n    url: ${url}\n    max_response_bytes: 2000\n    max_json_depth: 64\n    backoff_after_breaches: 0\n`);
  try {
    await run(gw, stats);
  } finally {
    await gw.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => seller.close(() => r()));
  }
}

const reasonOf = (m: unknown): string => (m as { result: { structuredContent: { adcp_error: { details: { reason: string } } } } }).result.structuredContent.adcp_error.details.reason;

/** Three tool calls whose whole answers break `reason`: each answered with it, over one seller connection never closed. */
async function threeBreachesOneConnection(body: (id: number) => string, reason: string): Promise<void> {
  await withSeller(body, async (gw, stats) => {
    for (let i = 1; i <= 3; i++) {
      const r = await rawPost(gw.agentUrl('s'), toolCall(i, 't'), { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(reasonOf(r.json()), reason);
    }
    assert.equal(stats.closes, 0, 'the seller saw its connection closed');
    assert.equal(stats.connections, 1);
  });
}

describe('a whole answer that breaks a bound keeps its seller connection', () => {
  test('raw_bytes (no Content-Length): three answers, one connection', { timeout: 20_000 }, async () => {
    await threeBreachesOneConnection((id) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(5000) }] } }), 'raw_bytes');
  });

  test('json_depth: three answers, one connection', { timeout: 20_000 }, async () => {
    await threeBreachesOneConnection(() => '['.repeat(100) + ']'.repeat(100), 'json_depth');
  });
});
