/**
 * A seller that fails: each failure gets a distinct SERVICE_UNAVAILABLE for the request's id
 * (ARCHITECTURE §3), a seller's own 4xx and JSON-RPC errors pass through unchanged, and the
 * gateway keeps serving other agents.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';

let closedPort: number;
let answer: (res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway(() => startRawSeller((_req, res) => answer(res)), async (seller) => {
  // A port with nothing listening: bind, read the port, close.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return startGateway(
    [
      'log_level: silent',
      'agents:',
      '  s:',
      `    url: ${seller.url}`,
      // Long enough for a loaded machine: only the deadline tests use the short one (`slow`).
      '    response_deadline_ms: 20000',
      '  slow:',
      `    url: ${seller.url}`,
      '    response_deadline_ms: 300',
      '  down:',
      `    url: http://127.0.0.1:${closedPort}/mcp`,
      '',
    ].join('\n'),
  );
});

type ToolErr = { id: unknown; result: { isError: boolean; structuredContent: { adcp_error: { code: string; recovery: string; details: Record<string, unknown> } } } };
const call = (agent: string, id: number, method = 'tools/call') =>
  rawPost(stack.gateway.agentUrl(agent), method === 'tools/call' ? toolCall(id, 'get_media_buys') : { jsonrpc: '2.0', id, method, params: {} }, {
    'mcp-protocol-version': '2025-06-18',
  });

describe('seller failures become SERVICE_UNAVAILABLE', () => {
  test('connection refused: upstream_unreachable', async () => {
    const r = await call('down', 1);
    assert.equal(r.status, 200);
    const m = r.json() as ToolErr;
    assert.equal(m.id, 1);
    assert.equal(m.result.structuredContent.adcp_error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(m.result.structuredContent.adcp_error.recovery, 'transient');
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'upstream_unreachable');
  });

  test('connection refused on a non-tool method: a JSON-RPC error -32027 carrying adcp_error', async () => {
    const r = await call('down', 2, 'tools/list');
    const m = r.json() as { id: number; error: { code: number; data: { adcp_error: { code: string; details: { reason: string } } } } };
    assert.equal(m.id, 2);
    assert.equal(m.error.code, -32027);
    assert.equal(m.error.data.adcp_error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(m.error.data.adcp_error.details.reason, 'upstream_unreachable');
  });

  test('5xx: upstream_status with the status, the seller body never leaks', async () => {
    answer = (res) => res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>internal stack trace at db01.internal</h1>');
    const r = await call('s', 3);
    assert.equal(r.status, 200);
    assert.ok(!r.text().includes('db01'));
    const m = r.json() as ToolErr;
    assert.deepEqual(m.result.structuredContent.adcp_error.details, { reason: 'upstream_status', upstream_status: 503 });
  });

  test('HTML with 200: upstream_not_mcp', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html>login</html>');
    const m = (await call('s', 4)).json() as ToolErr;
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'upstream_not_mcp');
  });

  test('headers then silence: deadline_exceeded with limit_ms', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",');
    };
    const m = (await call('slow', 5)).json() as ToolErr;
    assert.equal(m.id, 5);
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'deadline_exceeded');
    assert.equal(m.result.structuredContent.adcp_error.details.limit_ms, 300);
  });

  test('no headers at all: deadline_exceeded', async () => {
    answer = () => {};
    const m = (await call('slow', 6)).json() as ToolErr;
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'deadline_exceeded');
  });

  test('body reset mid-way: upstream_reset', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"jsonrpc":"2.0","id":7,');
      setTimeout(() => res.destroy(), 20);
    };
    const m = (await call('s', 7)).json() as ToolErr;
    assert.equal(m.result.structuredContent.adcp_error.details.reason, 'upstream_reset');
  });
});

describe('what passes through unchanged', () => {
  test('a seller 404 (expired session) passes through with its status and body', async () => {
    const body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}';
    answer = (res) => res.writeHead(404, { 'content-type': 'application/json' }).end(body);
    const r = await call('s', 8);
    assert.equal(r.status, 404);
    assert.equal(r.text(), body);
  });

  test("a seller's own JSON-RPC error with adcp_error passes through byte for byte", async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32029, message: 'Rate limit exceeded', data: { adcp_error: { code: 'RATE_LIMITED', retry_after: 10, recovery: 'transient' } } },
    });
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    const r = await call('s', 9);
    assert.equal(r.text(), body);
  });

  test('other agents keep working while one is down', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(10, { content: [{ type: 'text', text: 'fine' }] }));
    const [down, up] = await Promise.all([call('down', 11), call('s', 10)]);
    assert.equal((down.json() as ToolErr).result.structuredContent.adcp_error.details.reason, 'upstream_unreachable');
    assert.equal(up.text(), toolResponse(10, { content: [{ type: 'text', text: 'fine' }] }));
  });
});
