/**
 * Regression (a new user's trial): "`method: null` for three different exchanges". In the
 * exchange log line, a JSON-RPC batch (rpc_id null), a JSON-RPC response the host sent
 * (rpc_id "respprobe") and the standalone GET stream all said `"method": null`: the metrics
 * label them `batch`, `response` and `none`, but the line could not tell them apart, and
 * no exchange line said which HTTP method the host used.
 *
 * Input: through a raw seller, a POSTed batch, a POSTed host response, a GET (the standalone
 * stream: one notification, then the seller ends it), a DELETE, a POSTed notification, and a
 * POSTed tools/call.
 * Expected: each exchange line's `method`, `rpc_kind` (the metrics' values: `batch`,
 * `response`, `none`; `request`, `notification`), `http_method` (POST, GET, DELETE), `tool`
 * and `rpc_id`, exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { startRawSeller } from '../support/raw-seller.js';
import { startObservedGateway, type LogLine } from '../support/hostile-seller.js';

const NOTE = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } })}\n\n`;

describe('exchange-line-method-null-three-exchanges', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(NOTE);
          return;
        }
        if (req.method === 'DELETE') return void res.writeHead(200).end();
        const body = req.body.toString('utf8');
        if (body.startsWith('[')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ jsonrpc: '2.0', id: 1, result: {} }]));
          return;
        }
        const msg = JSON.parse(body) as { id?: unknown; method?: string };
        if (msg.method === undefined || msg.id === undefined) return void res.writeHead(202).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'ok' }] } }));
      }),
    (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
  );

  /** Sends one request to agent `s`, reads its whole answer, and returns its exchange line. */
  async function exchangeOf(method: string, body?: string): Promise<LogLine> {
    const before = stack.gateway.lines.filter((l) => l.msg === 'exchange').length;
    const res = await fetch(stack.gateway.agentUrl('s'), {
      method,
      headers: { accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    });
    await res.arrayBuffer();
    return stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.filter((e) => e.msg === 'exchange').indexOf(l) === before, 10_000);
  }

  const fields = (l: LogLine) => ({ method: l.method, rpc_kind: l.rpc_kind, http_method: l.http_method, tool: l.tool, rpc_id: l.rpc_id, status: l.status });

  test('a batch: rpc_kind batch, http_method POST', async () => {
    const line = await exchangeOf('POST', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    assert.deepEqual(fields(line), { method: null, rpc_kind: 'batch', http_method: 'POST', tool: null, rpc_id: null, status: 200 });
  });

  test("a host's JSON-RPC response: rpc_kind response, http_method POST", async () => {
    const line = await exchangeOf('POST', '{"jsonrpc":"2.0","id":"respprobe","result":{}}');
    assert.deepEqual(fields(line), { method: null, rpc_kind: 'response', http_method: 'POST', tool: null, rpc_id: 'respprobe', status: 202 });
  });

  test('the standalone GET stream: rpc_kind none, http_method GET', async () => {
    const line = await exchangeOf('GET');
    assert.deepEqual(fields(line), { method: null, rpc_kind: 'none', http_method: 'GET', tool: null, rpc_id: null, status: 200 });
  });

  test('a DELETE: rpc_kind none, http_method DELETE', async () => {
    const line = await exchangeOf('DELETE');
    assert.deepEqual(fields(line), { method: null, rpc_kind: 'none', http_method: 'DELETE', tool: null, rpc_id: null, status: 200 });
  });

  test('a notification: rpc_kind notification, http_method POST', async () => {
    const line = await exchangeOf('POST', '{"jsonrpc":"2.0","method":"notifications/initialized"}');
    assert.deepEqual(fields(line), { method: 'notifications/initialized', rpc_kind: 'notification', http_method: 'POST', tool: null, rpc_id: null, status: 202 });
  });

  test('a tools/call request: rpc_kind request, http_method POST', async () => {
    const line = await exchangeOf('POST', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{}}}');
    assert.deepEqual(fields(line), { method: 'tools/call', rpc_kind: 'request', http_method: 'POST', tool: 'get_products', rpc_id: 7, status: 200 });
  });
});
