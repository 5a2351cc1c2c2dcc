/**
 * Regression ("a batch's local error loses each request's own answer"): since a batch's local
 * error answers each request still awaited by its id (test/regressions/batch-local-error-answers-no-request.test.ts),
 * every one of those answers was minted with no method: a JSON-RPC error, `recovery` as for a
 * method other than `tools/call`, no warning. A host on MCP 2025-03-26 that POSTed
 * `[tools/call get_products (id 1), tools/call create_media_buy (id 2), ping (id 3)]` and whose
 * seller's answer broke a bound got three JSON-RPC errors: the `create_media_buy` call had no
 * warning that the seller may have completed the operation (it may have bought media, and the
 * host was told nothing to stop it retrying), neither call got the tool error result
 * (`result.isError`, `structuredContent.adcp_error`) its MCP client reads a tool's failure
 * from, and RESPONSE_TOO_LARGE said `terminal` where the same calls sent alone get
 * `correctable` (docs/errors.md, "AdCP error codes").
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`: max_response_bytes 2000,
 * max_sse_event_bytes 1000, a resume secret), that batch POSTed raw with no
 * MCP-Protocol-Version (2025-03-26), and each of its requests POSTed alone against the same
 * seller answer.
 * Expectation: each request's answer in the batch's is byte for byte the one it gets sent
 * alone: for get_products a tool error result, `correctable`, the narrowing hint; for
 * create_media_buy a tool error result, `correctable`, the message ending "the seller may have
 * completed the operation, so re-read its state before retrying."; for the ping a JSON-RPC
 * error, `terminal`. JSON path (HTTP 200, a JSON array, in the batch's order) and SSE path (one
 * final event per request still awaited); on a stream resumed with `Last-Event-ID` the token
 * carries each awaited request's form, so the same.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { jsonAnswer, sseWritesAnswer } from '../helpers/seller-answers.js';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_TOKEN, RESUME_YAML, batchToolCall, expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorJson, startObservedGateway, withToken, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';
import { SDK_ID } from '../../src/version.js';

const LIMIT = 2000;
const EVENT_LIMIT = 1000;
const GET = JSON.stringify(toolCall(1, 'get_products', { brief: 'shoes' }));
const CREATE = JSON.stringify(toolCall(2, 'create_media_buy', { budget: 1000 }));
const PING = '{"jsonrpc":"2.0","id":3,"method":"ping"}';
const BATCH = `[${GET},${CREATE},${PING}]`;
/** The batch's requests as the expected errors take them (each its own method and tool). */
const REFS = [batchToolCall(1, 'get_products'), batchToolCall(2, 'create_media_buy'), 3] as const;
const WARNING = 'the seller may have completed the operation, so re-read its state before retrying.';
const data = (json: string): string => `data: ${json}\n\n`;

/** A `notifications/message` JSON text of exactly `bytes` bytes. */
function notificationOfSize(bytes: number): string {
  const base = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""}}';
  return base.replace('"data":""', `"data":"${'n'.repeat(bytes - base.length)}"`);
}

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: LIMIT, max_sse_event_bytes: EVENT_LIMIT, sse_idle_timeout_ms: 2000 } }, RESUME_YAML)),
);

/** The seller answers every POST 200 `application/json` with `body` (with its Content-Length). */
function sellerJson(body: string): void {
  answer = jsonAnswer(body);
}

/** The seller answers every request 200 `text/event-stream`, writing each of `writes` 20 ms apart, then closes (or drops, `drop`). */
function sellerStreams(writes: readonly string[], drop = false): void {
  answer = sseWritesAnswer(writes, drop);
}

/** POSTs `body` raw (no MCP-Protocol-Version: 2025-03-26): the response and its exchange line. */
async function post(body: string): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl('s'), body);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  return { r, line };
}

/** The body each of the batch's requests gets sent alone, against the seller's current answer. */
async function aloneBodies(): Promise<string[]> {
  const out: string[] = [];
  for (const request of [GET, CREATE, PING]) {
    const { r } = await post(request);
    assert.equal(r.status, 200);
    out.push(r.text());
  }
  return out;
}

/** The `adcp_error` of one answer (a tool error result's or a JSON-RPC error's). */
function adcpOf(message: string): { message: string; recovery: string } {
  const m = JSON.parse(message) as { result?: { isError: boolean; structuredContent: { adcp_error: { message: string; recovery: string } } }; error?: { data: { adcp_error: { message: string; recovery: string } } } };
  return m.result !== undefined ? m.result.structuredContent.adcp_error : m.error!.data.adcp_error;
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

describe('batch-error-loses-tool-warning', { timeout: TEST_TIMEOUT_MS }, () => {
  test('JSON, the reported case: an answer over max_response_bytes; each request gets the answer it gets alone, byte for byte', async () => {
    const body = `[${'1,'.repeat(LIMIT / 2)}1]`;
    const observed = Buffer.byteLength(body);
    sellerJson(body);
    const { r, line } = await post(BATCH);
    const e = { reason: 'content_length', limitBytes: LIMIT, observedBytes: observed } as const;
    const expected = expectedBatchErrorJson(REFS, e);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(r.text(), expected);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'content_length', bytes_to_host: Buffer.byteLength(expected) });

    // Each answer, written out: the shape, the recovery and the end of the message.
    const head = `The seller announced a ${observed}-byte response (Content-Length), over the ${LIMIT}-byte limit`;
    const adcp = (message: string, recovery: string): string =>
      `{"code":"RESPONSE_TOO_LARGE","message":"${message}","recovery":"${recovery}","source":"sdk","sdk_id":"${SDK_ID}","details":{"reason":"content_length","limit_bytes":${LIMIT},"observed_bytes":${observed}}}`;
    const toolResult = (id: number, message: string): string => {
      const a = adcp(message, 'correctable');
      return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(`{"adcp_error":${a}}`)}},{"type":"text","text":"${message}"}],"isError":true,"structuredContent":{"adcp_error":${a}}}}`;
    };
    const ping = `{"jsonrpc":"2.0","id":3,"error":{"code":-32050,"message":"${head}.","data":{"adcp_error":${adcp(`${head}.`, 'terminal')}}}}`;
    const written = [toolResult(1, `${head}; narrow the request with fields, max_results or a cursor.`), toolResult(2, `${head}; ${WARNING}`), ping];
    assert.equal(r.text(), `[${written.join(',')}]`);

    // The same bytes as each request sent alone gets (a single request is answered as before).
    assert.equal(r.text(), `[${(await aloneBodies()).join(',')}]`);
  });

  test('JSON, the seller answers not MCP (upstream_not_mcp, transient): the calls get tool results, create_media_buy the warning, as alone', async () => {
    sellerJson('{}');
    const { r, line } = await post(BATCH);
    const expected = expectedBatchErrorJson(REFS, { reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.equal(r.text(), expected);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(expected) });
    const answers = (JSON.parse(r.text()) as unknown[]).map((m) => JSON.stringify(m));
    const NOT_MCP = "The seller's answer was not an MCP JSON-RPC message";
    assert.deepEqual(
      answers.map((m) => [m.includes('"isError":true'), adcpOf(m).message, adcpOf(m).recovery]),
      [
        [true, `${NOT_MCP}.`, 'transient'],
        [true, `${NOT_MCP}; ${WARNING}`, 'transient'],
        [false, `${NOT_MCP}.`, 'transient'],
      ],
    );
    assert.equal(r.text(), `[${(await aloneBodies()).join(',')}]`);
  });

  test('SSE: an event over max_sse_event_bytes ends the stream with each request\'s own answer, as alone', async () => {
    const over = data(notificationOfSize(EVENT_LIMIT + 1));
    sellerStreams([over]);
    const { r, line } = await post(BATCH);
    const frames = expectedBatchErrorFrames(REFS, { reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    assert.equal(r.text(), frames);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'sse_event', bytes_to_host: r.bytes });
    // create_media_buy's event: a tool result with the warning.
    const second = frames.split('\n\n')[1]!;
    assert.ok(second.includes(`"id":2,"result":{`) && second.includes(`; ${WARNING}","recovery":"correctable"`), second);
    // Each request alone on the same stream: one event each, the same bytes.
    assert.equal(r.text(), (await aloneBodies()).join(''));
  });

  test('SSE: get_products answered first, then the breach: create_media_buy and the ping get theirs', async () => {
    const getAnswer = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"products"}]}}';
    sellerStreams([data(getAnswer), data(notificationOfSize(EVENT_LIMIT + 1))]);
    const { r, line } = await post(BATCH);
    const frames = expectedBatchErrorFrames(REFS.slice(1), { reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 });
    assert.equal(r.text(), data(getAnswer) + frames);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'sse_event', bytes_to_host: r.bytes });
    assert.ok(frames.startsWith(`event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"content":`), frames);
  });

  test('resumed with Last-Event-ID: the token carries each awaited request\'s form, so the resumed stream answers each as alone', async () => {
    const getAnswer = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"products"}]}}';
    sellerStreams([`id: e1\n${data(getAnswer)}`], true);
    const opened = await post(BATCH);
    const [token] = sseIds(opened.r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    assert.equal(opened.r.text(), withToken(`id: e1\n${data(getAnswer)}`, token!));
    assert.equal(opened.line.outcome, 'resumable_end');
    // `w`: request 2 a tool result that may have run (`W`), request 3 a JSON-RPC error (no letter).
    const payload = JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString('utf8')) as { w: string[] };
    assert.deepEqual(payload.w, ['Wn2e0', 'n3e0']);

    sellerStreams([data(notificationOfSize(EVENT_LIMIT + 1))]);
    const seen = stack.gateway.lines.length;
    const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token! } });
    const text = await res.text();
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
    assert.equal(stack.seller.requests.at(-1)?.headers['last-event-id'], 'e1');
    const frames = expectedBatchErrorFrames(REFS.slice(1), { reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 });
    assert.deepEqual({ status: res.status, text }, { status: 200, text: frames });
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'sse_event', bytes_to_host: Buffer.byteLength(frames) });
  });

  test('control: a single create_media_buy keeps its answer (a tool result with the warning)', async () => {
    sellerJson('{}');
    const { r } = await post(CREATE);
    const expected = expectedErrorJson({ id: 2, method: 'tools/call', toolName: 'create_media_buy', reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.equal(r.text(), expected);
    assert.ok(adcpOf(expected).message.endsWith(WARNING));
  });
});
