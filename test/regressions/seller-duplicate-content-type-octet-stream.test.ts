/**
 * Regression: a seller answer with two `Content-Type` header fields reached the host as
 * `content-type: application/octet-stream`, its body intact, logged `ok`.
 *
 * Reported failure (a new user's trial, 2026-12-03): a seller sent `Content-Type:
 * application/json` twice (identical values). undici gives a repeated field as an array; the
 * pipeline classified the body by the first value (JSON), but the array went on to Fastify as
 * the reply's Content-Type, which Fastify cannot read and replaced with
 * `application/octet-stream`. The MCP SDK client then failed "Unexpected content type:
 * application/octet-stream" on a valid answer; the 4xx pass-through did the same, and two
 * differing values (`application/json` and `text/html`) went out the same way.
 *
 * Now (RFC 9110 §5.3: a recipient may combine repeated field lines; Content-Type is a
 * singleton field, §8.3): identical repeated values count as one, and the host gets that one
 * value; differing values are an invalid message, answered `upstream_not_mcp` for the
 * request's id (docs/errors.md), whatever the status (2xx JSON or SSE, a 4xx pass-through).
 *
 * Input: a raw seller answering a tools/call (by tool name) with its body and a repeated
 * Content-Type: identical `application/json` (200, and its own 404), identical
 * `text/event-stream` (200), differing `application/json` + `text/html` (200, 404) and
 * `text/event-stream` + `application/json` (200). Plus the real MCP SDK client calling a
 * tool whose answer has the identical repeated field.
 * Expectation: identical values: the seller's status and bytes, that one Content-Type,
 * exchange outcome `ok`; differing values: HTTP 200 with the `upstream_not_mcp` tool error
 * for the id (`upstream_status` the seller's), `Content-Type: application/json;
 * charset=utf-8` (as every minted answer), exchange
 * outcome `local_error`; the SDK client gets the tool result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { connectClient } from '../helpers/client.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const JSON_TYPE = 'application/json';
const SSE_TYPE = 'text/event-stream';
const NOT_FOUND = (id: number): string => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32001,"message":"Session not found"}}`;
const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
const sseBody = (id: number): string => `event: message\ndata: ${result(id)}\n\n`;

/** Tool name -> [status, Content-Type field values (each sent as its own field line), body]. */
const ANSWERS: Record<string, (id: number) => [number, string[], string]> = {
  json_same: (id) => [200, [JSON_TYPE, JSON_TYPE], result(id)],
  json_404_same: (id) => [404, [JSON_TYPE, JSON_TYPE], NOT_FOUND(id)],
  sse_same: (id) => [200, [SSE_TYPE, SSE_TYPE], sseBody(id)],
  json_html: (id) => [200, [JSON_TYPE, 'text/html'], result(id)],
  json_404_html: (id) => [404, [JSON_TYPE, 'text/html'], NOT_FOUND(id)],
  sse_json: (id) => [200, [SSE_TYPE, JSON_TYPE], sseBody(id)],
};

const INIT_RESULT = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'dup-type', version: '1.0.0' } };

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string } };
      if (msg.id === undefined) {
        // Differing values on an empty answer to a notification (a new user's second trial).
        if (msg.method === 'notifications/differing') return void res.writeHead(202, { 'content-type': [JSON_TYPE, 'text/html'] }).end();
        return void res.writeHead(202).end();
      }
      if (msg.method === 'initialize') {
        return void res.writeHead(200, { 'content-type': [JSON_TYPE, JSON_TYPE] }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: INIT_RESULT }));
      }
      const answer = ANSWERS[msg.params?.name ?? '']?.(msg.id);
      if (answer === undefined) return void res.writeHead(500).end();
      const [status, types, body] = answer;
      // An array value: node:http writes one field line per element.
      res.writeHead(status, { 'content-type': types }).end(body);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const post = (id: number, tool: string) => withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), HEADERS), undefined, 'the POST');

describe('a seller answer with two Content-Type fields', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends two field lines', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(toolCall(90, 'json_same')) });
    // fetch combines repeated field lines with ", " (RFC 9110 §5.3).
    assert.equal(res.headers.get('content-type'), `${JSON_TYPE}, ${JSON_TYPE}`);
    await res.arrayBuffer();
  });

  // The SSE stage always wrote its own Content-Type: that case passed before too (a control).
  const identical: Array<[string, number, number, string, string, string]> = [
    ['json_same', 1, 200, JSON_TYPE, result(1), ' (was application/octet-stream)'],
    ['json_404_same', 2, 404, JSON_TYPE, NOT_FOUND(2), ' (was application/octet-stream)'],
    ['sse_same', 3, 200, SSE_TYPE, sseBody(3), ''],
  ];
  for (const [tool, id, status, type, body, was] of identical) {
    test(`${tool}: identical values count as one, the host gets ${type} and the seller's bytes${was}`, async () => {
      const r = await post(id, tool);
      assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [status, type, body]);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['ok', null]);
    });
  }

  const differing: Array<[string, number, number]> = [
    ['json_html', 4, 200],
    ['json_404_html', 5, 404],
    ['sse_json', 6, 200],
  ];
  for (const [tool, id, sellerStatus] of differing) {
    test(`${tool}: differing values are upstream_not_mcp for the id (was passed on)`, async () => {
      const r = await post(id, tool);
      assert.equal(r.status, 200);
      // As every minted answer goes out (Fastify adds the charset to a string body).
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(r.text(), expectedErrorJson({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: sellerStatus }));
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['local_error', 'upstream_not_mcp']);
    });
  }

  test('an empty 202 answering a notification with differing Content-Type fields is upstream_not_mcp too (the Content-Type rule is checked first: docs/errors.md)', async () => {
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), { jsonrpc: '2.0', method: 'notifications/differing' }, HEADERS), undefined, 'the POST');
    assert.equal(r.status, 502);
    assert.equal(JSON.parse(r.text()).error.data.adcp_error.details.reason, 'upstream_not_mcp');
    const line = await stack.gateway.exchangeLine('s', null);
    assert.deepEqual([line.method, line.outcome, line.reason], ['notifications/differing', 'local_error', 'upstream_not_mcp']);
  });

  test('the MCP SDK client reads the answer (it failed "Unexpected content type: application/octet-stream")', async () => {
    const client = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    try {
      const out = await withTimeout(client.callTool({ name: 'json_same', arguments: {} }), undefined, 'the tool call');
      assert.deepEqual(out.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await client.close();
    }
  });
});
