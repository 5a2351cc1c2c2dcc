/**
 * Regression (hostile trial 59, F1, Low): a seller answered a `tools/call` POST `202 Accepted`
 * labelled `Content-Type: text/event-stream` with an empty body (`Content-Length: 0`, or an
 * empty chunked body). The gateway sent it to the host as 200 `text/event-stream` ending with
 * `upstream_reset` for the id, warned "seller answered a request 202 Accepted with a body: sent
 * to the host as 200" and counted `adcp_gateway_seller_202_answers_total`, where README ("Sends
 * on as 200 a request's answer its seller sent 202 Accepted") says an empty 202 is
 * `upstream_not_mcp` for its id, no warning, as without the label. Also an empty 202 with
 * `Content-Encoding: gzip` was `upstream_encoding_invalid` (README's encoding paragraph) where
 * its 202 paragraph said `upstream_not_mcp`: now one rule, an empty 202 has nothing to decode.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway; each `tools/call` answered
 * as its tool name says; a raw host (fetch).
 * Expectation: every empty 202 answering a request, a body with no byte at all after decoding
 * (SSE with `Content-Length: 0` or an empty chunked body, JSON or SSE under gzip with no byte,
 * SSE under gzip whose member holds nothing) gets HTTP 200 and the gateway's JSON
 * `upstream_not_mcp` error for its id (`upstream_status` 202, observed bytes 0), exchange line
 * `local_error` / `upstream_not_mcp`, no warning, the metric unchanged.
 * Not empty (changed by the review of this fix, Medium and Low): a 202 SSE body of only a
 * comment, or only blank lines, has bytes. Its fix first deferred the host's head to the
 * stream's first event and answered these `upstream_not_mcp` too, but a seller sending only
 * keep-alive comments then gave the host no head for up to `sse_deadline_ms`
 * (test/regressions/seller-202-keepalive-stream-head-withheld.test.ts). Now the head waits only
 * for the body's first byte (at most 1,000 ms: sse-host-writer.ts ACCEPTED_HEAD_WAIT_MS), so
 * these go to the host as the same bytes sent 200 do (the comment, then `upstream_reset` for the
 * id on the 200), warned and counted once. Unchanged: a 202 SSE whose comment comes before the
 * response goes to the host as the same answer sent 200 (the comment included), warned and
 * counted once.
 */
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
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
const EMPTY: Readonly<Record<string, readonly [string, Buffer, boolean, boolean]>> = {
  sse_cl0: [SSE, Buffer.alloc(0), false, true],
  sse_chunked: [SSE, Buffer.alloc(0), false, false],
  json_gzip_cl0: [JSON_TYPE, Buffer.alloc(0), true, true],
  sse_gzip_cl0: [SSE, Buffer.alloc(0), true, true],
  sse_gzip_empty_member: [SSE, gzipSync(Buffer.alloc(0)), true, false],
};

/** Bodies with bytes but no event, answered `<status>_<name>`: not empty (module doc). */
const NOT_EMPTY: Readonly<Record<string, string>> = {
  comment_only: ': keepalive\n\n',
  blank_lines: '\n\n\n',
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
  const notEmpty = NOT_EMPTY[name.slice(4)];
  if (notEmpty !== undefined) return void res.writeHead(Number(name.slice(0, 3)), { 'content-type': SSE }).end(notEmpty);
  const [type, body, gzip, cl] = EMPTY[name]!;
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
  for (const name of Object.keys(EMPTY)) {
    test(`an empty 202 answering a request (${name}) is upstream_not_mcp for its id as JSON, no warning, not counted`, async () => {
      const seen = await post(++id, name);
      const expected = expectedErrorJson({ id, method: 'tools/call', toolName: name, reason: 'upstream_not_mcp', upstreamStatus: 202, observedBytes: 0 });
      assert.deepEqual(
        { status: seen.r.status, type: seen.r.headers.get('content-type'), text: seen.r.text(), outcome: seen.line.outcome, reason: seen.line.reason, upstream: seen.line.upstream_status, warnings: seen.warnings, counted: seen.counted },
        { status: 200, type: 'application/json; charset=utf-8', text: expected, outcome: 'local_error', reason: 'upstream_not_mcp', upstream: 202, warnings: 0, counted: 0 },
      );
    });
  }

  for (const name of Object.keys(NOT_EMPTY)) {
    test(`a 202 SSE body with bytes but no event (${name}) is no empty 202: as the same body sent 200 (upstream_reset on the 200), warned and counted once`, async () => {
      const ok = await post(20, `200_${name}`);
      const accepted = await post(20, `202_${name}`);
      assert.deepEqual(
        { status: accepted.r.status, type: accepted.r.headers.get('content-type'), text: accepted.r.text(), outcome: accepted.line.outcome, reason: accepted.line.reason, upstream: accepted.line.upstream_status, warnings: accepted.warnings, counted: accepted.counted },
        { status: 200, type: ok.r.headers.get('content-type'), text: ok.r.text().replace('200_', '202_'), outcome: ok.line.outcome, reason: 'upstream_reset', upstream: 202, warnings: 1, counted: 1 },
      );
      assert.equal(ok.line.reason, 'upstream_reset');
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
