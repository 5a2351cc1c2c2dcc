/**
 * Regression (a reviewer, 2026-12-03): a seller answering the standalone GET (no
 * Last-Event-ID) with a 2xx `application/json` body holding a JSON-RPC response had it passed
 * through to the host, logged `ok`: the JSON path accepts any JSON-RPC body when the exchange
 * answers no request. MCP Streamable HTTP (2025-03-26 .. 2025-11-25, "Listening for Messages
 * from the Server"): "The server MUST either return `Content-Type: text/event-stream` in
 * response to this HTTP GET, or else return HTTP 405 Method Not Allowed", and it "MUST NOT
 * send a JSON-RPC response on the stream unless resuming a stream associated with a previous
 * client request" (a response there could answer a pending call by its id: the SSE path drops
 * one, `get_stream_response`). A GET that resumes a stream (Last-Event-ID) was already refused
 * anything but SSE; the rule now holds for every GET.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway; GETs without Last-Event-ID
 * (`Accept: text/event-stream`, MCP 2025-06-18), answered per agent: 200 `application/json`
 * with a response for id 1; 200 `application/json` with an error for id null; 200
 * `application/json` with a notification; 200 without Content-Type with a body; 204 without a
 * body.
 * Expected: HTTP 502, `Content-Type: application/json; charset=utf-8`, exactly the gateway's
 * JSON-RPC error for id null (-32027, SERVICE_UNAVAILABLE, `upstream_not_mcp`,
 * `upstream_status` the seller's), nothing of the seller's body; the exchange line says
 * `http_method` GET, `status` 502, `local_error` / `upstream_not_mcp`, `bytes_to_host` the
 * body's bytes.
 * Controls, passed as before: a GET answered 405 with a JSON error (what the MCP SDK servers'
 * stateless examples and MCP 2026-07-28 servers answer) and one answered 406, status and body
 * as the seller sent them, outcome `ok`; a GET answered with an SSE stream of a notification;
 * a POSTed tools/call answered with a JSON response; a POSTed notification answered 202 with
 * no body; a DELETE answered 200 with no body.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const RESPONSE = toolResponse(1, { content: [{ type: 'text', text: 'injected' }] });
const ERROR_NULL = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const NOT_ALLOWED = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method not allowed."},"id":null}';
const NOT_ACCEPTABLE = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept text/event-stream"},"id":null}';

/** How the seller answers a GET, by agent (the first path segment of the seller URL). */
const GET_ANSWERS: Record<string, (res: ServerResponse) => void> = {
  json_response: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(RESPONSE),
  json_error_null: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(ERROR_NULL),
  json_notification: (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(NOTE),
  untyped_body: (res) => res.writeHead(200).end(RESPONSE),
  no_content: (res) => res.writeHead(204).end(),
  // Controls.
  not_allowed: (res) => res.writeHead(405, { 'content-type': 'application/json', allow: 'POST, DELETE' }).end(NOT_ALLOWED),
  not_acceptable: (res) => res.writeHead(406, { 'content-type': 'application/json' }).end(NOT_ACCEPTABLE),
  sse: (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${NOTE}\n\n`),
};
/** The seller's status for each refused agent (the error's `upstream_status`). */
const REFUSED: Record<string, number> = { json_response: 200, json_error_null: 200, json_notification: 200, untyped_body: 200, no_content: 204 };

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    // Node writes a default Content-Type for none of these: an answer without one has none.
    if (req.method === 'GET') return GET_ANSWERS[req.url.split('/')[1]!]!(res);
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number };
    if (msg.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(msg.id, { content: [{ type: 'text', text: 'own answer' }] }));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) =>
  startObservedGateway(agentsYaml(Object.fromEntries(Object.keys(GET_ANSWERS).map((k) => [k, seller.url.replace(/\/mcp$/, `/${k}/mcp`)])))),
);
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** One request to agent `agent` and its exchange line. */
async function send(agent: string, method: 'GET' | 'DELETE'): Promise<{ status: number; contentType: string | null; text: string; line: LogLine }> {
  const seen = gw().lines.length;
  const res = await fetch(gw().agentUrl(agent), { method, headers: HEADERS });
  const text = await res.text();
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.http_method === method && gw().lines.indexOf(l) >= seen);
  return { status: res.status, contentType: res.headers.get('content-type'), text, line };
}
const summary = (line: LogLine): Record<string, unknown> => ({ http_method: line.http_method, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

describe('a GET answered 2xx with anything but SSE is upstream_not_mcp', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [agent, upstreamStatus] of Object.entries(REFUSED)) {
    test(`${agent}: 502, the error for id null, nothing of the seller's body`, async () => {
      const r = await send(agent, 'GET');
      const expected = expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', upstreamStatus });
      assert.deepEqual({ status: r.status, contentType: r.contentType, text: r.text }, { status: 502, contentType: 'application/json; charset=utf-8', text: expected });
      assert.deepEqual(summary(r.line), { http_method: 'GET', status: 502, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(expected) });
    });
  }

  for (const [agent, status, body] of [['not_allowed', 405, NOT_ALLOWED], ['not_acceptable', 406, NOT_ACCEPTABLE]] as const) {
    test(`control, ${agent}: the seller's ${status} passes through as it is`, async () => {
      const r = await send(agent, 'GET');
      assert.deepEqual({ status: r.status, contentType: r.contentType, text: r.text }, { status, contentType: 'application/json', text: body });
      assert.deepEqual(summary(r.line), { http_method: 'GET', status, outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(body) });
    });
  }

  test('control: a GET answered with SSE passes, the notification as the seller sent it', async () => {
    const r = await send('sse', 'GET');
    assert.deepEqual({ status: r.status, contentType: r.contentType, text: r.text }, { status: 200, contentType: 'text/event-stream', text: `event: message\ndata: ${NOTE}\n\n` });
    assert.deepEqual(summary(r.line), { http_method: 'GET', status: 200, outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(r.text) });
  });

  test('control: a POSTed call answered with JSON, a POSTed notification answered 202, a DELETE answered 200: passed as before', async () => {
    const call = await rawPost(gw().agentUrl('json_response'), toolCall(7, 'get_products'), { 'mcp-protocol-version': '2025-06-18' });
    assert.deepEqual({ status: call.status, text: call.text() }, { status: 200, text: toolResponse(7, { content: [{ type: 'text', text: 'own answer' }] }) });
    assert.deepEqual(summary(await gw().exchangeLine('json_response', 7)), { http_method: 'POST', status: 200, outcome: 'ok', reason: null, bytes_to_host: call.bytes });
    const note = await rawPost(gw().agentUrl('json_response'), '{"jsonrpc":"2.0","method":"notifications/initialized"}', { 'mcp-protocol-version': '2025-06-18' });
    assert.deepEqual({ status: note.status, bytes: note.bytes }, { status: 202, bytes: 0 });
    const del = await send('json_response', 'DELETE');
    assert.deepEqual({ status: del.status, text: del.text }, { status: 200, text: '' });
    assert.deepEqual(summary(del.line), { http_method: 'DELETE', status: 200, outcome: 'ok', reason: null, bytes_to_host: 0 });
  });
});
