/**
 * Regression (read-only review 37, F3): a seller's `Connection: content-type` removed its
 * `Content-Type` after the gateway had judged the body JSON by it. The header filter drops
 * every header a `Connection` names (hop-by-hop, RFC 9110 §7.6.1: headers.ts
 * filterResponseHeaders), the JSON stage sent the seller's bytes leaving the label to the
 * filtered headers (json-stage.ts sendJsonAnswer), and Fastify labelled the reply
 * `application/octet-stream`, logged `ok`; the MCP SDK client refuses that type ("Unexpected
 * content type").
 *
 * Now: the gateway labels what it judged and sent as JSON `application/json` when the seller's
 * label did not survive the filter; a label that survived is kept, parameters included (as
 * before). The SSE path always writes its own `text/event-stream` (a control: it passed before).
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway, answering tools/call by
 * tool name: 200 `application/json` with `Connection: content-type`; 200 `application/json;
 * charset=utf-8` with `Connection: Content-Type, keep-alive`; the same label without a
 * `Connection` (control); 200 `text/event-stream` with `Connection: content-type` (control);
 * and the real MCP SDK client calling the first tool.
 * Expectation: 200, the seller's bytes exactly, Content-Type `application/json`,
 * `application/json`, `application/json; charset=utf-8`, `text/event-stream`; outcome `ok`;
 * the SDK client gets the tool result.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { answerSessionRequests, startRawSeller, toolResponse } from '../support/raw-seller.js';
import { startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { connectClient } from '../helpers/client.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const result = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'ok' }] });
const sseBody = (id: number): string => `event: message\ndata: ${result(id)}\n\n`;

/** Tool name -> [headers, body]. */
const ANSWERS: Record<string, (id: number) => [Record<string, string>, string]> = {
  json_conn: (id) => [{ 'content-type': 'application/json', connection: 'content-type' }, result(id)],
  json_charset_conn: (id) => [{ 'content-type': 'application/json; charset=utf-8', connection: 'Content-Type, keep-alive' }, result(id)],
  json_charset: (id) => [{ 'content-type': 'application/json; charset=utf-8' }, result(id)],
  sse_conn: (id) => [{ 'content-type': 'text/event-stream', connection: 'content-type' }, sseBody(id)],
};

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      const left = answerSessionRequests(req, res, 'conn-type');
      if (left === undefined) return;
      const msg = left.msg;
      if (msg === undefined || typeof msg.id !== 'number') return void res.writeHead(500).end();
      const answer = ANSWERS[String(msg.params?.name ?? '')]?.(msg.id);
      if (answer === undefined) return void res.writeHead(500).end();
      const [headers, body] = answer;
      res.writeHead(200, headers).end(body);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const post = (id: number, tool: string) => withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(id, tool), HEADERS), undefined, 'the POST');

describe("a seller's Connection header naming its Content-Type", { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: the seller really sends Connection: content-type', async () => {
    const res = await fetch(stack.seller.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(toolCall(90, 'json_conn')) });
    assert.equal(res.headers.get('connection'), 'content-type');
    assert.equal(res.headers.get('content-type'), 'application/json');
    await res.arrayBuffer();
  });

  const cases: Array<[string, number, string, string, string]> = [
    ['json_conn', 1, 'application/json', result(1), ' (was application/octet-stream)'],
    ['json_charset_conn', 2, 'application/json', result(2), ' (was application/octet-stream)'],
    ['json_charset', 3, 'application/json; charset=utf-8', result(3), ' (control: the label survived, kept whole)'],
    ['sse_conn', 4, 'text/event-stream', sseBody(4), ' (control: the SSE path writes its own)'],
  ];
  for (const [tool, id, type, body, was] of cases) {
    test(`${tool}: the host gets ${type} and the seller's bytes${was}`, async () => {
      const r = await post(id, tool);
      assert.deepEqual([r.status, r.headers.get('content-type'), r.text()], [200, type, body]);
      const line = await stack.gateway.exchangeLine('s', id);
      assert.deepEqual([line.outcome, line.reason], ['ok', null]);
    });
  }

  test('the MCP SDK client reads the answer (it refuses application/octet-stream)', async () => {
    const client = await connectClient(stack.gateway.agentUrl('s'), { protocolVersion: '2025-06-18' });
    try {
      const out = await withTimeout(client.callTool({ name: 'json_conn', arguments: {} }), undefined, 'the tool call');
      assert.deepEqual(out.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await client.close();
    }
  });
});
