/**
 * Connection handling: a host that goes away aborts the upstream request at once
 * (ARCHITECTURE §5: a stale upstream GET makes the seller answer 409 on every reconnect);
 * a JSON-RPC batch is forwarded and bounded without a rewrite.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let answer: (res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((_req, res) => answer(res)), (seller) => startGateway(`log_level: silent\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 2000\n`));

describe('host disconnects', () => {
  test('closing the host connection mid-SSE closes the upstream request', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    answer = (res) => {
      res.on('close', () => upstreamClosed());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":1}}\n\n');
    };
    await new Promise<void>((resolve, reject) => {
      const req = http.request(stack.gateway.agentUrl('s'), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
      req.on('close', () => resolve());
      req.end('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}');
      setTimeout(() => reject(new Error('no first event')), 5000).unref();
    });
    await closed; // resolves only if the gateway aborted the upstream request
  });
});

describe('JSON-RPC batches', () => {
  // Batches exist in MCP 2025-03-26 only (a later MCP-Protocol-Version is refused:
  // test/regressions/batch-on-revision-without-batches.test.ts); the answer is never rewritten
  // (src/response/rewrite.ts), whatever the revision.
  test('a batch response is forwarded byte for byte (no rewrite)', async () => {
    const dup = { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } };
    const body = `[${toolResponse(1, dup)},${toolResponse(2, dup)}]`;
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const r = await rawPost(
      stack.gateway.agentUrl('s'),
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x' } },
      ],
      { 'mcp-protocol-version': '2025-03-26' },
    );
    assert.equal(r.text(), body);
  });

  test('a batch response over the limit gets an answer for each request of the batch, HTTP 200: a tools/call its tool error result, as alone', async () => {
    const big = `[${toolResponse(1, { content: [{ type: 'text', text: 'z'.repeat(3000) }] })}]`;
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) }).end(big);
    const r = await rawPost(stack.gateway.agentUrl('s'), [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }]);
    assert.equal(r.status, 200);
    const [m, ...more] = r.json() as Array<{ id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; recovery: string; details: { reason: string } } } } }>;
    assert.equal(more.length, 0);
    assert.equal(m!.id, 1);
    assert.equal(m!.result.isError, true);
    assert.equal(m!.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.equal(m!.result.structuredContent.adcp_error.recovery, 'correctable');
    assert.equal(m!.result.structuredContent.adcp_error.details.reason, 'content_length');
  });
});
