/**
 * Regression (a reviewer, "Per-tool limits do not apply inside batches"): an agent's `tools:`
 * entry sets tighter (or looser) limits for one tool, and a single `tools/call` gets them; a
 * JSON-RPC batch (MCP 2025-03-26) holding that `tools/call` got only the agent's limits, so a
 * host escaped the tool's `max_response_bytes` (and its depth, event and deadline bounds) by
 * wrapping the call in a batch: `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":
 * {"name":"get_products"}}]` answered with 1,001 bytes went to the host whole, the tool's
 * limit being 1,000.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, agent `s` with
 * `max_response_bytes: 3000` and `tools:` get_products (`max_response_bytes: 1000`,
 * `max_sse_event_bytes: 500`, `max_json_depth: 8`), get_report (`max_response_bytes: 5000`:
 * looser than the agent) and slow_tool (`response_deadline_ms: 300`); no MCP-Protocol-Version
 * (2025-03-26, the revision with batches). Each test sends the batch it names.
 * Expectation: a batch's limits are, limit by limit, the strictest of the levels its elements
 * would each get alone (a `tools/call`: its tool's; anything else: the agent's), then
 * `X-Max-Response-Bytes` as for a single call. Over one: the batch's local error, HTTP 200
 * with one answer for each of its requests, byte for byte, each the one it gets alone (a tool
 * call's tool result: batch-error-loses-tool-warning.test.ts), or those answers as the final
 * SSE events (test/regressions/batch-local-error-answers-no-request.test.ts: before, one error
 * for id null, HTTP 502 or 504); within: the seller's bytes, outcome `ok`. A stream resumed with
 * `Last-Event-ID` gets the batch's limits again from its token.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponseOfSize, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, batchToolCall, expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorJson, observedMsAtLeast, startObservedGateway, withToken, type BatchRequestId, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const AGENT_LIMIT = 3000;
const TOOL_LIMIT = 1000;
const TOOL_EVENT_LIMIT = 500;
const TOOL_DEPTH = 8;
const LOOSE_LIMIT = 5000;
const TOOLS =
  '{ get_products: { max_response_bytes: 1000, max_sse_event_bytes: 500, max_json_depth: 8 }, get_report: { max_response_bytes: 5000 }, slow_tool: { response_deadline_ms: 300 } }';

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: AGENT_LIMIT, sse_idle_timeout_ms: 2000, tools: TOOLS } }, RESUME_YAML)),
);

const CALL = JSON.stringify(toolCall(1, 'get_products'));
const PING = '{"jsonrpc":"2.0","id":2,"method":"ping"}';
const batchOf = (...elements: string[]): string => `[${elements.join(',')}]`;
/** Request 1 of a batch, a tools/call of `tool`: its error is the tool result that call gets alone (batch-error-loses-tool-warning). */
const call1 = (tool = 'get_products'): BatchRequestId => batchToolCall(1, tool);

/** A JSON array holding one tools/call response for id 1, exactly `bytes` bytes. */
const arrayOfSize = (bytes: number): string => `[${toolResponseOfSize(1, bytes - 2)}]`;

/** The seller answers the next POST with `body` as application/json (with its Content-Length, unless `chunked`). */
function sellerJson(body: string, chunked = false): void {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': Buffer.byteLength(body) }) });
    res.end(body);
  };
}

/** POSTs `body` as a 2025-03-26 host (no MCP-Protocol-Version): the response and its exchange line. */
async function post(body: string, headers: Record<string, string> = {}): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), body, headers);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, tool: line.tool, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

/** Asserts `r` is exactly the batch's local error for `error`, one for each of its requests `ids`, HTTP 200. */
function assertBatchError(r: RawResponse, line: LogLine, ids: readonly BatchRequestId[], error: Parameters<typeof expectedBatchErrorJson>[1]): void {
  const expected = expectedBatchErrorJson(ids, error);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(r.text(), expected);
  assert.deepEqual(summary(line), { rpc_kind: 'batch', tool: null, outcome: 'local_error', reason: error.reason, bytes_to_host: Buffer.byteLength(expected) });
}

/** Asserts `r` is the seller's `body`, forwarded as it is, outcome ok. */
function assertForwarded(r: RawResponse, line: LogLine, body: string): void {
  assert.equal(r.status, 200);
  assert.equal(r.text(), body);
  assert.deepEqual(summary(line), { rpc_kind: 'batch', tool: null, outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(body) });
}

/** A `notifications/message` JSON text of exactly `bytes` bytes. */
function notificationOfSize(bytes: number): string {
  const base = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""}}';
  return base.replace('"data":""', `"data":"${'n'.repeat(bytes - base.length)}"`);
}

/** A response for id 1 whose structuredContent nests objects so that the whole text is `depth` deep (inside an array when `inArray`). */
function deepResponse(depth: number, inArray: boolean): string {
  // `[` (1 when inArray), the message (1), result (2), structuredContent (3), then `{"a":` each.
  const outer = (inArray ? 1 : 0) + 3;
  const nested = depth - outer;
  const inner = '{"a":'.repeat(nested) + '1' + '}'.repeat(nested);
  const message = `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"s":${inner}}}}`;
  return inArray ? `[${message}]` : message;
}

/** observed_bytes of a json_depth breach in a JSON body: its bytes through the bracket that opens depth `limit + 1`. */
function depthBreakBytes(text: string, limit: number): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      depth++;
      if (depth > limit) return i + 1;
    } else if (c === '}' || c === ']') depth--;
  }
  throw new Error('not deep enough');
}

describe('batch-escapes-tool-limits', { timeout: TEST_TIMEOUT_MS }, () => {
  test('control: a single tools/call of get_products gets its tool\'s limit (content_length at 1000)', async () => {
    sellerJson(toolResponseOfSize(1, TOOL_LIMIT + 1));
    const { r, line } = await post(CALL);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_products', reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: TOOL_LIMIT + 1 }));
    assert.equal(line.reason, 'content_length');
  });

  test('a batch of that call, exactly at the tool\'s limit: forwarded as the seller wrote it', async () => {
    const body = arrayOfSize(TOOL_LIMIT);
    sellerJson(body);
    const { r, line } = await post(batchOf(CALL));
    assertForwarded(r, line, body);
  });

  test('a batch of that call, one byte over the tool\'s limit: content_length at 1000, not the agent\'s 3000', async () => {
    sellerJson(arrayOfSize(TOOL_LIMIT + 1));
    const { r, line } = await post(batchOf(CALL));
    assertBatchError(r, line, [call1()], { reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: TOOL_LIMIT + 1 });
  });

  test('the same without Content-Length: raw_bytes at 1000, counted as the bytes arrive', async () => {
    sellerJson(arrayOfSize(TOOL_LIMIT + 1), true);
    const { r, line } = await post(batchOf(CALL));
    assertBatchError(r, line, [call1()], { reason: 'raw_bytes', limitBytes: TOOL_LIMIT, observedBytes: TOOL_LIMIT + 1 });
  });

  test('a batch of that call and a ping: the strictest of the tool\'s and the agent\'s levels (1000)', async () => {
    const body = `[{"jsonrpc":"2.0","id":2,"result":{}},${toolResponseOfSize(1, 1500)}]`;
    sellerJson(body);
    const { r, line } = await post(batchOf(PING, CALL));
    assertBatchError(r, line, [2, call1()], { reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: Buffer.byteLength(body) });
  });

  test('a batch over 1 KiB whose tools/call element is over 1 KiB (the peek\'s scan reading): the tool\'s limit all the same', async () => {
    const big = JSON.stringify(toolCall(1, 'get_products', { brief: 'b'.repeat(1500) }));
    sellerJson(arrayOfSize(TOOL_LIMIT + 1));
    const { r, line } = await post(batchOf('{"jsonrpc":"2.0","method":"notifications/initialized"}', big));
    assertBatchError(r, line, [call1()], { reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: TOOL_LIMIT + 1 });
  });

  test('a looser tool: a batch of get_report calls gets its 5000; with a ping, the agent\'s 3000 is the strictest', async () => {
    const call = JSON.stringify(toolCall(1, 'get_report'));
    const body = arrayOfSize(LOOSE_LIMIT);
    sellerJson(body);
    const alone = await post(batchOf(call));
    assertForwarded(alone.r, alone.line, body);
    sellerJson(body);
    const mixed = await post(batchOf(call, PING));
    assertBatchError(mixed.r, mixed.line, [call1('get_report'), 2], { reason: 'content_length', limitBytes: AGENT_LIMIT, observedBytes: LOOSE_LIMIT });
  });

  test('control: a tool without a tools: entry is at the agent\'s level (3000)', async () => {
    const body = arrayOfSize(AGENT_LIMIT);
    sellerJson(body);
    const { r, line } = await post(batchOf(JSON.stringify(toolCall(1, 'list_creatives'))));
    assertForwarded(r, line, body);
  });

  test('the tool\'s max_json_depth (8): at 8 forwarded, at 9 json_depth', async () => {
    const within = deepResponse(TOOL_DEPTH, true);
    sellerJson(within);
    const ok = await post(batchOf(CALL));
    assertForwarded(ok.r, ok.line, within);
    const over = deepResponse(TOOL_DEPTH + 1, true);
    sellerJson(over);
    const { r, line } = await post(batchOf(CALL));
    assertBatchError(r, line, [call1()], { reason: 'json_depth', limit: TOOL_DEPTH, observed: TOOL_DEPTH + 1, limitBytes: TOOL_LIMIT, observedBytes: depthBreakBytes(over, TOOL_DEPTH) });
  });

  test('X-Max-Response-Bytes applies to the batch\'s limit as to a single call: lowers it, never raises it past the tool\'s', async () => {
    sellerJson(arrayOfSize(801));
    const lowered = await post(batchOf(CALL), { 'x-max-response-bytes': '800' });
    assertBatchError(lowered.r, lowered.line, [call1()], { reason: 'content_length', limitBytes: 800, observedBytes: 801 });
    // No max_call_response_bytes: a call can only lower its limit, so 2000 leaves the tool's 1000.
    sellerJson(arrayOfSize(TOOL_LIMIT + 1));
    const raised = await post(batchOf(CALL), { 'x-max-response-bytes': '2000' });
    assertBatchError(raised.r, raised.line, [call1()], { reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: TOOL_LIMIT + 1 });
  });

  test('SSE: the tool\'s max_sse_event_bytes (500): an event of 500 bytes of data passes, one of 501 ends the stream with the error for request 1', async () => {
    const within = `data: ${notificationOfSize(TOOL_EVENT_LIMIT)}\n\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n`;
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(within);
    const ok = await post(batchOf(CALL));
    assert.equal(ok.r.text(), within);
    assert.deepEqual(summary(ok.line), { rpc_kind: 'batch', tool: null, outcome: 'ok', reason: null, bytes_to_host: Buffer.byteLength(within) });

    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${notificationOfSize(TOOL_EVENT_LIMIT + 1)}\n\n`);
    const { r, line } = await post(batchOf(CALL));
    const frame = expectedBatchErrorFrames([call1()], { reason: 'sse_event', limitBytes: TOOL_EVENT_LIMIT, observedBytes: TOOL_EVENT_LIMIT + 1 });
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', tool: null, outcome: 'local_error', reason: 'sse_event', bytes_to_host: r.bytes });
  });

  test('the tool\'s response_deadline_ms (300): a batch of slow_tool answered after 1.5 s gets deadline_exceeded', async () => {
    const timers: NodeJS.Timeout[] = [];
    answer = (_req, res) => {
      timers.push(setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(arrayOfSize(200)), 1500));
      res.on('close', () => timers.forEach(clearTimeout));
    };
    const { r, line } = await post(batchOf(JSON.stringify(toolCall(1, 'slow_tool'))));
    assertBatchError(r, line, [call1('slow_tool')], { reason: 'deadline_exceeded', limitMs: 300, observedMs: observedMsAtLeast(r.text(), 300) });
  });

  test('a batch\'s stream resumed with Last-Event-ID keeps the batch\'s limits (the tool\'s depth 8), from its token', async () => {
    const first = 'id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      setTimeout(() => res.destroy(), 20);
    };
    const opened = await post(batchOf(CALL));
    const [token] = sseIds(opened.r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    assert.equal(opened.r.text(), withToken(first, token!));
    assert.equal(opened.line.outcome, 'resumable_end');

    // On the resume, the seller replays a response 9 deep (the agent's depth is 64).
    const deep = deepResponse(TOOL_DEPTH + 1, false);
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${deep}\n\n`);
    const seen = stack.gateway.lines.length;
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token! } });
    const text = await resumed.text();
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
    assert.equal(stack.seller.requests.at(-1)?.headers['last-event-id'], 'e1');
    assert.equal(resumed.status, 200);
    // Request 1, still awaited (the token carries it, and the form of its error: a read-only
    // tool's result), gets the error it would get alone.
    const frame = expectedBatchErrorFrames([call1()], { reason: 'json_depth', limit: TOOL_DEPTH, observed: TOOL_DEPTH + 1, limitBytes: TOOL_EVENT_LIMIT, observedBytes: Buffer.byteLength(deep) });
    assert.equal(text, frame);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', tool: null, outcome: 'local_error', reason: 'json_depth', bytes_to_host: Buffer.byteLength(frame) });
  });
});
