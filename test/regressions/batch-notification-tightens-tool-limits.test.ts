/**
 * Regression ("a notification in a batch tightens its tool calls' limits"): a batch's limits
 * are, limit by limit, the strictest of its elements' levels (a `tools/call` its tool's,
 * anything else its agent's: test/regressions/batch-escapes-tool-limits.test.ts). A host on MCP
 * 2025-03-26 POSTed `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0",
 * "id":1,"method":"tools/call","params":{"name":"get_report"}}]` to an agent with
 * `max_response_bytes: 3000` whose `get_report` has 5000: the notification, which the seller
 * never answers, brought in the agent's level, and the call's answer of 4,000 bytes was refused
 * (`content_length` at 3000), though the same call alone, or in a batch of its own, got 5000.
 * So did a host's response inside the batch (its answer to a server's request), and a batch of
 * only notifications got the level of a `tools/call` notification among them.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`: `max_response_bytes:
 * 3000`, `max_json_depth: 16`, tools get_report `{ max_response_bytes: 5000, max_json_depth:
 * 64 }` and get_products `{ max_response_bytes: 1000 }`; resume secret set); batches POSTed
 * with no MCP-Protocol-Version.
 * Expectation: only the batch's requests (a `method` and an `id`) take part in its limits; a
 * batch without requests keeps the agent's level. Within those limits the seller's bytes go
 * out as they are, outcome `ok`; a `ping` (a request) still brings the agent's level in. A
 * batch's resume tokens name the same levels (`t`: `get_report`, not `,get_report`), so its
 * stream resumed with `Last-Event-ID` keeps get_report's limit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponseOfSize, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { buildAdcpError, localErrorMessage } from '../../src/mcp/local-error.js';

const AGENT_LIMIT = 3000;
const REPORT_LIMIT = 5000;
const PRODUCTS_LIMIT = 1000;
const TOOLS = '{ get_report: { max_response_bytes: 5000, max_json_depth: 64 }, get_products: { max_response_bytes: 1000 } }';

const CALL = JSON.stringify(toolCall(1, 'get_report'));
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const HOST_RESPONSE = '{"jsonrpc":"2.0","id":"srv-1","result":{}}';
const PING = '{"jsonrpc":"2.0","id":2,"method":"ping"}';
const batchOf = (...elements: string[]): string => `[${elements.join(',')}]`;
/** A JSON array holding one tools/call response for id 1, exactly `bytes` bytes. */
const arrayOfSize = (bytes: number): string => `[${toolResponseOfSize(1, bytes - 2)}]`;

/** A `notifications/message` JSON text of exactly `bytes` bytes. */
function notificationOfSize(bytes: number): string {
  const base = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""}}';
  return base.replace('"data":""', `"data":"${'n'.repeat(bytes - base.length)}"`);
}

/** A JSON array holding a response for id 1 whose structuredContent makes the whole text `depth` deep. */
function deepArray(depth: number): string {
  // `[` (1), the message (2), result (3), structuredContent (4), then `{"a":` each.
  const nested = depth - 4;
  return `[{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"s":${'{"a":'.repeat(nested)}1${'}'.repeat(nested)}}}}]`;
}

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: AGENT_LIMIT, max_json_depth: 16, sse_idle_timeout_ms: 2000, tools: TOOLS } }, RESUME_YAML)),
);

/** The seller answers the next request with `body` as application/json, with its Content-Length. */
function sellerJson(body: string): void {
  answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** POSTs `body` as a 2025-03-26 host: the response and its exchange line. */
async function post(body: string): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), body);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

/** Asserts `r` is the seller's `body` (JSON or SSE), forwarded as it is, outcome ok. */
function assertForwarded(r: RawResponse, line: LogLine, body: string): void {
  assert.equal(r.status, 200);
  assert.equal(r.text(), body);
  assert.deepEqual(summary(line), { rpc_kind: 'batch', outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(body) });
}

/** The payload of a gateway resume token (`agw1.<base64url JSON>.<mac>`). */
function tokenPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('batch-notification-tightens-tool-limits', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, other] of [
    ['a notification', INITIALIZED],
    ['a host\'s response', HOST_RESPONSE],
  ] as const) {
    test(`${label} beside a get_report call: get_report's 5000 bytes, not the agent's 3000 (the reported case)`, async () => {
      const body = arrayOfSize(REPORT_LIMIT);
      sellerJson(body);
      const { r, line } = await post(batchOf(other, CALL));
      assertForwarded(r, line, body);
    });
  }

  test('the same batch one byte over get_report\'s limit: content_length at 5000, for request 1', async () => {
    sellerJson(arrayOfSize(REPORT_LIMIT + 1));
    const { r, line } = await post(batchOf(INITIALIZED, CALL));
    // The error get_report's call gets alone: a tool result (batch-error-loses-tool-warning).
    const err = buildAdcpError({ method: 'tools/call', toolName: 'get_report', reason: 'content_length', limitBytes: REPORT_LIMIT, observedBytes: REPORT_LIMIT + 1 });
    assert.equal(r.status, 200);
    assert.equal(r.text(), JSON.stringify([localErrorMessage(1, 'tools/call', err)]));
    assert.deepEqual(summary(line), { rpc_kind: 'batch', outcome: 'local_error', reason: 'content_length', bytes_to_host: r.bytes });
  });

  test('a notification beside a get_report call: get_report\'s max_json_depth (64), not the agent\'s 16', async () => {
    const body = deepArray(20);
    sellerJson(body);
    const { r, line } = await post(batchOf(INITIALIZED, CALL));
    assertForwarded(r, line, body);
  });

  test('a batch of only notifications, a tools/call notification of get_products among them: the agent\'s 3000, not get_products\' 1000', async () => {
    const stream = `data: ${notificationOfSize(PRODUCTS_LIMIT + 500)}\n\n`;
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(stream);
    const { r, line } = await post(batchOf('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_products"}}', INITIALIZED));
    assertForwarded(r, line, stream);
  });

  test('control: a ping is a request, so the agent\'s level still takes part (3000)', async () => {
    const body = `[{"jsonrpc":"2.0","id":2,"result":{}},${toolResponseOfSize(1, 3500)}]`;
    sellerJson(body);
    const { r, line } = await post(batchOf(INITIALIZED, PING, CALL));
    const e = { reason: 'content_length', limitBytes: AGENT_LIMIT, observedBytes: Buffer.byteLength(body) } as const;
    const pingErr = buildAdcpError({ method: 'ping', ...e });
    const callErr = buildAdcpError({ method: 'tools/call', toolName: 'get_report', ...e });
    assert.equal(r.status, 200);
    // One error per request, in the batch's order, each as it gets it alone: the ping's (2), the call's (1).
    assert.equal(r.text(), JSON.stringify([localErrorMessage(2, 'ping', pingErr), localErrorMessage(1, 'tools/call', callErr)]));
    assert.deepEqual(summary(line), { rpc_kind: 'batch', outcome: 'local_error', reason: 'content_length', bytes_to_host: r.bytes });
  });

  test('resumed with Last-Event-ID: the token names get_report alone, and the resumed stream keeps its 5000 bytes', async () => {
    const first = 'id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      setTimeout(() => res.destroy(), 20);
    };
    const opened = await post(batchOf(INITIALIZED, CALL));
    const [token] = sseIds(opened.r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    assert.equal(opened.line.outcome, 'resumable_end');
    const payload = tokenPayload(token!);
    // `w`: request 1, awaited, its error a read-only tool's result (`R`: batch-error-loses-tool-warning).
    assert.deepEqual({ m: payload.m, t: payload.t, l: payload.l, w: payload.w }, { m: '', t: 'get_report', l: REPORT_LIMIT, w: ['Rn1e0'] });

    // On the resume, the response to request 1 in one event of 4000 bytes of data.
    const response = toolResponseOfSize(1, 4000);
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${response}\n\n`);
    const seen = stack.gateway.lines.length;
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token! } });
    const text = await resumed.text();
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
    assert.equal(resumed.status, 200);
    assert.equal(text, `data: ${response}\n\n`);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(text) });
  });
});
