/**
 * Regression (hostile trial 59, F1, Low): a seller answered a `tools/call` POST `202 Accepted`
 * labelled `Content-Type: text/event-stream` with an empty body (`Content-Length: 0`, or an
 * empty chunked body, or only a comment). The gateway sent it to the host as 200
 * `text/event-stream` ending with `upstream_reset` for the id, warned "seller answered a request
 * 202 Accepted with a body: sent to the host as 200" and counted
 * `adcp_gateway_seller_202_answers_total`, where README ("Sends on as 200 a request's answer
 * its seller sent 202 Accepted") says an empty 202 is `upstream_not_mcp` for its id, no warning,
 * as without the label. Also an empty 202 with `Content-Encoding: gzip` was
 * `upstream_encoding_invalid` (README's encoding paragraph) where its 202 paragraph said
 * `upstream_not_mcp`: now one rule, an empty 202 has nothing to decode.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway; each `tools/call` answered
 * as its tool name says; a raw host (fetch).
 * Expectation: every empty 202 answering a request (SSE with no byte, SSE whose body is only
 * comments and blank lines, JSON or SSE under gzip with no byte) gets HTTP 200 and the
 * gateway's JSON `upstream_not_mcp` error for its id (`upstream_status` 202, observed bytes the
 * body's), exchange line `local_error` / `upstream_not_mcp`, no warning, the metric unchanged.
 * Unchanged: a 202 SSE whose comment comes before the response goes to the host as the same
 * answer sent 200 (the comment included), warned and counted once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall, type RawResponse } from '../helpers/raw.js';
import { agentMetric } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { SELLER_202_ANSWER_MSG } from '../../src/response/accepted-answer.js';

const RESULT = { content: [{ type: 'text', text: 'ok' }] };
const SSE = 'text/event-stream';
const JSON_TYPE = 'application/json';

/** Empty answers: tool name -> [Content-Type, body bytes, gzip, Content-Length set]. */
const EMPTY: Readonly<Record<string, readonly [string, string, boolean, boolean]>> = {
  sse_cl0: [SSE, '', false, true],
  sse_chunked: [SSE, '', false, false],
  sse_comment_only: [SSE, ': keepalive\n\n', false, false],
  sse_blank_lines: [SSE, '\n\n\n', false, true],
  json_gzip_cl0: [JSON_TYPE, '', true, true],
  sse_gzip_cl0: [SSE, '', true, true],
};

type Msg = { id?: number; method?: string; params?: { name?: string; protocolVersion?: string } };

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const msg = JSON.parse(req.body.toString('utf8')) as Msg;
  if (msg.id === undefined) return void res.writeHead(202).end();
  if (msg.method === 'initialize') {
    const result = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'e202', version: '1' } };
    return void res.writeHead(200, { 'content-type': JSON_TYPE }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  }
  const name = msg.params?.name ?? '';
  // `<status>_comment_then_response`: a comment, then the response.
  if (name.endsWith('comment_then_response')) {
    return void res.writeHead(Number(name.slice(0, 3)), { 'content-type': SSE }).end(`: keepalive\n\ndata: ${toolResponse(msg.id, RESULT)}\n\n`);
  }
  const [type, text, gzip, cl] = EMPTY[name]!;
  const body = Buffer.from(text);
  const headers: Record<string, string> = { 'content-type': type };
  if (gzip) headers['content-encoding'] = 'gzip';
  if (cl) headers['content-length'] = String(body.length);
  res.writeHead(202, headers);
  // An empty chunked body: the head alone, then the terminating chunk.
  if (!cl) res.flushHeaders();
  res.end(body);
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: seller.url })),
);
const gw = (): ObservedGateway => stack.gateway;

interface Seen {
  r: RawResponse;
  line: LogLine;
  warnings: number;
  counted: number;
}

async function post(id: number, name: string): Promise<Seen> {
  const from = gw().lines.length;
  const before = await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's');
  const res = await fetch(gw().agentUrl('s'), {
    method: 'POST',
    headers: { 'content-type': JSON_TYPE, accept: `${JSON_TYPE}, ${SSE}`, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify(toolCall(id, name)),
  });
  const body = Buffer.from(await withTimeout(res.arrayBuffer(), 5_000, 'answer body'));
  const r: RawResponse = { status: res.status, headers: res.headers, body, bytes: body.length, text: () => body.toString('utf8'), json: () => JSON.parse(body.toString('utf8')) as unknown };
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 's' && gw().lines.indexOf(l) >= from);
  const warnings = gw().lines.slice(from).filter((l) => l.msg === SELLER_202_ANSWER_MSG).length;
  const counted = (await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's')) - before;
  return { r, line, warnings, counted };
}

describe('seller-empty-202-sse-answer-sent-as-200', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 10;
  for (const [name, [, text]] of Object.entries(EMPTY)) {
    test(`an empty 202 answering a request (${name}) is upstream_not_mcp for its id as JSON, no warning, not counted`, async () => {
      const seen = await post(++id, name);
      const expected = expectedErrorJson({ id, method: 'tools/call', toolName: name, reason: 'upstream_not_mcp', upstreamStatus: 202, observedBytes: Buffer.byteLength(text) });
      assert.deepEqual(
        { status: seen.r.status, type: seen.r.headers.get('content-type'), text: seen.r.text(), outcome: seen.line.outcome, reason: seen.line.reason, upstream: seen.line.upstream_status, warnings: seen.warnings, counted: seen.counted },
        { status: 200, type: 'application/json; charset=utf-8', text: expected, outcome: 'local_error', reason: 'upstream_not_mcp', upstream: 202, warnings: 0, counted: 0 },
      );
    });
  }

  test('unchanged: a 202 SSE whose comment precedes the response reaches the host as the same answer sent 200, warned and counted once', async () => {
    const ok = await post(30, '200_comment_then_response');
    const accepted = await post(30, '202_comment_then_response');
    assert.deepEqual(
      { status: accepted.r.status, type: accepted.r.headers.get('content-type'), text: accepted.r.text(), outcome: accepted.line.outcome, warnings: accepted.warnings, counted: accepted.counted },
      { status: 200, type: ok.r.headers.get('content-type'), text: ok.r.text(), outcome: 'ok', warnings: 1, counted: 1 },
    );
    assert.match(ok.r.text(), /^: keepalive\n/);
  });
});
