/**
 * Regression (hostile trial 57, F1, Medium): a seller answered a `tools/call` POST with HTTP
 * `202 Accepted` and the call's JSON-RPC response as its body, `application/json` or
 * `text/event-stream` (`data: {"jsonrpc":"2.0","id":2,"result":...}`). The gateway passed the
 * 202 on and logged the exchange `ok`; the MCP SDK client (1.32.2) discards the body of any 202
 * (its StreamableHTTPClientTransport returns at `status === 202`), so `callTool` hung until its
 * own timeout: the answer of a call that ran (a `create_media_buy`, perhaps) was lost. MCP
 * Streamable HTTP (2025-06-18, "Sending Messages to the Server"): a POST holding a request is
 * answered `text/event-stream` or `application/json`; 202 Accepted with no body is for a POST of
 * only notifications and responses.
 *
 * Input: a raw node:http seller on 127.0.0.1 behind the real gateway, answering each
 * `tools/call` as its tool name says (`<status>_<json|sse|jsonEmpty|sseEmpty>_<plain|lift|big>`:
 * the status, the body's form, the result), `initialize` 200 JSON, a notification 202 with no
 * body, a GET 405 (agent `s`) or 202 SSE (agent `g`: a resume's answer the response event, the
 * standalone stream's a notification); the real MCP SDK client (Client +
 * StreamableHTTPClientTransport) and a raw host (fetch).
 * Expectation: a 202 with a body answering a POST that holds a request (a single request, a
 * 2025-03-26 batch holding one) goes to the host as 200, its body through the normal pipeline
 * (the same bytes as the same answer sent 200: the seller's bytes when nothing is rewritten, the
 * lift, `max_response_bytes`), with one warning line per exchange
 * (`SELLER_202_ANSWER_MSG`, `{agent, method, body}`) and
 * `adcp_gateway_seller_202_answers_total{agent}`; the SDK client gets its result. Unchanged:
 * an empty 202 answering a request (no byte of body, SSE too: hostile trial 59, F1) is
 * `upstream_not_mcp` for its id; a POST without a request
 * keeps the seller's 202; a GET (standalone stream, or a resume of a request's stream) answered
 * 202 SSE keeps its 202 (the SDK client reads a GET's stream whatever its 2xx); none of these
 * warns.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, RESUME_TOKEN, RESUME_YAML, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { toolCall, type RawResponse } from '../helpers/raw.js';
import { agentMetric } from '../helpers/agent-metrics.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { SELLER_202_ANSWER_MSG } from '../../src/response/accepted-answer.js';

const LIMIT = 4000;
const BUY = { media_buy_id: 'mb-1', status: 'completed' };
/** The results a tool's name may ask for: left alone, lifted (2025-06-18 host), over `max_response_bytes`. */
const PLAIN = { content: [{ type: 'text', text: 'media buy mb-1 created' }], structuredContent: BUY };
const RESULTS: Readonly<Record<string, unknown>> = {
  plain: PLAIN,
  lift: { content: [{ type: 'text', text: JSON.stringify(BUY) }] },
  big: { content: [{ type: 'text', text: 'x'.repeat(LIMIT + 1000) }] },
};

/** `tools/call` `id`'s response with the result `name` asks for (its last part). */
function responseFor(id: unknown, name: string): string {
  return toolResponse(id as number, RESULTS[name.split('_')[2] ?? 'plain']);
}

/** Writes the answer tool `name` asks for; `body` the JSON text to send (a response, or a batch of one). */
function answerAs(res: ServerResponse, name: string, body: string): void {
  const [status, kind] = name.split('_');
  const code = Number(status);
  if (kind === 'json') return void res.writeHead(code, { 'content-type': 'application/json' }).end(body);
  if (kind === 'sse') return void res.writeHead(code, { 'content-type': 'text/event-stream' }).end(`data: ${body}\n\n`);
  if (kind === 'jsonEmpty') return void res.writeHead(code, { 'content-type': 'application/json' }).end();
  if (kind === 'sseEmpty') return void res.writeHead(code, { 'content-type': 'text/event-stream' }).end();
  if (kind === 'text') return void res.writeHead(code).end(body);
  // `cut`: a priming event with an id, then the end (no response): the host resumes.
  res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: e1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
}

const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
/** How the seller answers a POST without a request. */
let nonRequestAnswer: (res: ServerResponse) => void = (res) => void res.writeHead(202).end();

type Msg = { id?: unknown; method?: string; params?: { name?: string; protocolVersion?: string } };

function answer(req: SeenRequest, res: ServerResponse): void {
  if (req.method === 'GET') {
    if (!req.url.includes('get=202')) return void res.writeHead(405).end();
    // A resume gets call 1's response; the standalone stream a notification.
    const data = req.headers['last-event-id'] === 'e1' ? responseFor(1, '202_sse_plain') : NOTE;
    return void res.writeHead(202, { 'content-type': 'text/event-stream' }).end(`data: ${data}\n\n`);
  }
  const parsed = JSON.parse(req.body.toString('utf8')) as Msg | Msg[];
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  const request = messages.find((m) => m.method !== undefined && m.id !== undefined);
  if (request === undefined) return nonRequestAnswer(res);
  if (request.method === 'initialize') {
    const result = { protocolVersion: request.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 's202', version: '1' } };
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
  }
  const name = request.params?.name ?? '200_json_plain';
  const response = responseFor(request.id, name);
  answerAs(res, name, Array.isArray(parsed) ? `[${response}]` : response);
}

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller(answer),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: LIMIT }, g: `${seller.url}?get=202` }, RESUME_YAML)),
);
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const GET_HEADERS = { accept: 'text/event-stream', ...HEADERS };

/** One host exchange: the answer, its exchange line, and the 202 warning lines logged since it began. */
interface Seen {
  r: RawResponse;
  line: LogLine;
  warnings: Record<string, unknown>[];
}

async function observe(agent: string, send: () => Promise<Response>): Promise<Seen> {
  const from = gw().lines.length;
  const res = await send();
  const body = Buffer.from(await withTimeout(res.arrayBuffer(), 5_000, 'answer body'));
  const r: RawResponse = { status: res.status, headers: res.headers, body, bytes: body.length, text: () => body.toString('utf8'), json: () => JSON.parse(body.toString('utf8')) as unknown };
  const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === agent && gw().lines.indexOf(l) >= from);
  const warnings = gw()
    .lines.slice(from)
    .filter((l) => l.msg === SELLER_202_ANSWER_MSG)
    .map(({ level, msg, agent: a, method, body: b }) => ({ level, msg, agent: a, method, body: b }));
  return { r, line, warnings };
}

const post = (message: unknown, headers: Record<string, string> = HEADERS, agent = 's'): Promise<Seen> =>
  observe(agent, () =>
    fetch(gw().agentUrl(agent), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(message),
    }),
  );

const shape = (s: Seen): Record<string, unknown> => ({
  status: s.r.status,
  contentType: s.r.headers.get('content-type'),
  text: s.r.text(),
  line: { status: s.line.status, outcome: s.line.outcome, reason: s.line.reason, bytes_to_host: s.line.bytes_to_host },
});

const warning = (body: 'json' | 'sse', method = 'tools/call'): Record<string, unknown> => ({ level: 40, msg: SELLER_202_ANSWER_MSG, agent: 's', method, body });

describe('seller-202-answer-hangs-sdk-client', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the MCP SDK client through the gateway gets the result of a call its seller answered 202 with JSON and with SSE', async () => {
    const client = new Client({ name: 's202-host', version: '1' });
    await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(gw().agentUrl('s')))), 5_000, 'connect');
    try {
      for (const name of ['200_json_plain', '202_json_plain', '202_sse_plain']) {
        // The SDK's own timeout is the hang guard: before, it ran out (-32001 Request timed out).
        const got = await client.callTool({ name, arguments: {} }, undefined, { timeout: 4_000 });
        assert.deepEqual(got, PLAIN, name);
      }
    } finally {
      await client.close().catch(() => {});
    }
  });

  for (const kind of ['json', 'sse']) {
    for (const result of ['plain', 'lift', 'big']) {
      test(`raw host, ${kind} ${result}: a 202 with a body answering a request reaches the host as the same answer sent 200 would, status 200; one warning`, async () => {
        const ok = await post(toolCall(2, `200_${kind}_${result}`));
        const accepted = await post(toolCall(2, `202_${kind}_${result}`));
        assert.equal(accepted.r.status, 200);
        assert.deepEqual(shape(accepted), shape(ok));
        assert.equal(accepted.line.upstream_status, 202);
        // A JSON answer over its limit is the gateway's error (HTTP 200 as for any request): the
        // seller's answer is not sent on, so no warning; an SSE head goes out before the events.
        assert.deepEqual(accepted.warnings, kind === 'json' && result === 'big' ? [] : [warning(kind as 'json' | 'sse')]);
        assert.deepEqual(ok.warnings, []);
        if (kind === 'json' && result === 'plain') assert.equal(accepted.r.text(), responseFor(2, 'plain'), "the seller's bytes");
        if (result === 'lift') assert.equal(accepted.line.outcome, 'rewritten');
        if (result === 'big') assert.equal(accepted.line.reason, kind === 'json' ? 'raw_bytes' : 'sse_cumulative');
      });
    }
  }

  test('raw host, an empty SSE 202 answering a request: an empty 202, upstream_not_mcp for its id as JSON (not a 202 the SDK drops); no warning (hostile trial 59, F1)', async () => {
    const accepted = await post(toolCall(3, '202_sseEmpty'));
    assert.equal(accepted.r.status, 200);
    assert.equal(accepted.r.text(), expectedErrorJson({ id: 3, method: 'tools/call', toolName: '202_sseEmpty', reason: 'upstream_not_mcp', upstreamStatus: 202, observedBytes: 0 }));
    assert.deepEqual(accepted.warnings, []);
  });

  test('a 2025-03-26 batch holding a request answered 202 with JSON and with SSE: 200, the same bytes as sent 200; one warning each', async () => {
    for (const kind of ['json', 'sse']) {
      const batch = (status: number): unknown[] => [{ jsonrpc: '2.0', method: 'notifications/initialized' }, toolCall(7, `${status}_${kind}_plain`)];
      const ok = await post(batch(200), {});
      const accepted = await post(batch(202), {});
      assert.equal(accepted.r.status, 200, kind);
      assert.deepEqual(shape(accepted), shape(ok), kind);
      assert.deepEqual(accepted.warnings, [warning(kind as 'json' | 'sse', 'batch')], kind);
    }
  });

  test('unchanged: an empty 202 (JSON, or no Content-Type) answering a request is upstream_not_mcp for its id, no warning', async () => {
    for (const name of ['202_jsonEmpty', '202_text']) {
      const seen = await post(toolCall(4, name));
      const body = name === '202_text' ? Buffer.byteLength(responseFor(4, name)) : 0;
      assert.equal(seen.r.status, 200, name);
      assert.equal(seen.r.text(), expectedErrorJson({ id: 4, method: 'tools/call', toolName: name, reason: 'upstream_not_mcp', upstreamStatus: 202, observedBytes: body }), name);
      assert.deepEqual({ outcome: seen.line.outcome, reason: seen.line.reason, warnings: seen.warnings }, { outcome: 'local_error', reason: 'upstream_not_mcp', warnings: [] }, name);
    }
  });

  test('unchanged: a POST without a request keeps the seller 202 (empty, or SSE with a notification), no warning', async () => {
    try {
      nonRequestAnswer = (res) => void res.writeHead(202).end();
      const empty = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.deepEqual({ status: empty.r.status, bytes: empty.r.bytes, warnings: empty.warnings }, { status: 202, bytes: 0, warnings: [] });
      const batch = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'srv-1', result: {} }], {});
      assert.deepEqual({ status: batch.r.status, bytes: batch.r.bytes, warnings: batch.warnings }, { status: 202, bytes: 0, warnings: [] });
      nonRequestAnswer = (res) => void res.writeHead(202, { 'content-type': 'text/event-stream' }).end(`data: ${NOTE}\n\n`);
      const sse = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.deepEqual({ status: sse.r.status, text: sse.r.text(), warnings: sse.warnings }, { status: 202, text: `data: ${NOTE}\n\n`, warnings: [] });
    } finally {
      nonRequestAnswer = (res) => void res.writeHead(202).end();
    }
  });

  test('unchanged: a GET answered 202 SSE keeps its 202, the standalone stream and a resume of a request stream alike; no warning', async () => {
    const standalone = await observe('g', () => fetch(gw().agentUrl('g'), { headers: GET_HEADERS }));
    assert.deepEqual({ status: standalone.r.status, text: standalone.r.text(), warnings: standalone.warnings }, { status: 202, text: `data: ${NOTE}\n\n`, warnings: [] });
    // A request's stream cut after an event with an id: the host resumes from its token.
    const cut = await post(toolCall(1, '200_cut'), HEADERS, 'g');
    assert.equal(cut.r.status, 200);
    const token = /^id: (\S+)$/m.exec(cut.r.text())?.[1];
    assert.match(token ?? '', RESUME_TOKEN);
    const resumed = await observe('g', () => fetch(gw().agentUrl('g'), { headers: { ...GET_HEADERS, 'last-event-id': token! } }));
    assert.equal(resumed.r.status, 202);
    assert.match(resumed.r.text(), /^data: \{"jsonrpc":"2\.0","id":1,"result":/);
    assert.deepEqual({ outcome: resumed.line.outcome, warnings: resumed.warnings }, { outcome: 'ok', warnings: [] });
  });

  test('adcp_gateway_seller_202_answers_total counts each exchange whose 202 went out as 200, when that head is written', async () => {
    const before = await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's');
    await post(toolCall(5, '202_json_plain'));
    await post(toolCall(6, '202_sse_plain'));
    await post(toolCall(8, '200_json_plain'));
    assert.equal(await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's'), before + 2);
    // An SSE 202's head goes out as 200 with its body's first byte (at most 1,000 ms after its
    // stage starts), or with the error for its id when it breaks a bound first: counted. One
    // whose body has no byte is an empty 202 (upstream_not_mcp as JSON: hostile trial 59, F1,
    // and the review of its fix), and a JSON 202 over its limit is never sent on (the gateway's
    // error answers it): neither counted.
    await post(toolCall(9, '202_sseEmpty'));
    await post(toolCall(10, '202_sse_big'));
    await post(toolCall(11, '202_json_big'));
    assert.equal(await agentMetric(gw().baseUrl, 'adcp_gateway_seller_202_answers_total', 's'), before + 3);
  });
});
