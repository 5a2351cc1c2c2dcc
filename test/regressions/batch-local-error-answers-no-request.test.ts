/**
 * Regression ("a batch's local error answers none of its requests"): a host on MCP 2025-03-26
 * POSTed a JSON-RPC batch `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,
 * "method":"tools/list"}]`, and the seller's answer broke a bound (over max_response_bytes, a
 * deadline, not MCP, unreachable). The gateway answered HTTP 502 (or 504 for the reasons docs/errors.md's
 * reasons table marks so in its "HTTP status (id null)" column) with ONE
 * JSON-RPC error whose id is null, and on an SSE stream ended with one error event for id null.
 * A host's JSON-RPC client matches each response to its call by id alone, so that error
 * answered none of its calls: each waited until its own timeout (the MCP SDK client's
 * transport, seeing a 502, threw without reading the body at all). JSON-RPC 2.0 §5: id null
 * only "if there was an error in detecting the id"; §6: a single Response object answers a
 * batch that is not valid JSON or not a non-empty array, otherwise "the Server should respond
 * with an Array containing the corresponding Response objects".
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway (agent `s`: max_response_bytes 2000,
 * max_sse_event_bytes 1000, resume secret set; `slow`: the same seller, response_deadline_ms 300; `dead`: a closed
 * port), batches POSTed raw with no MCP-Protocol-Version (2025-03-26), and once through the MCP
 * SDK client's transport.
 * Expectation: the error answers every request of the batch the host still waits for (an
 * element with a `method` and an `id`, not yet answered on the stream), each with its own
 * JSON-RPC error for that request's id (as the host wrote it: `9007199254740993` exactly), the
 * same `adcp_error` in each (the requests here are no tool calls: each gets the JSON-RPC
 * error it gets alone; a tool call gets its tool result, batch-error-loses-tool-warning.test.ts),
 * in the batch's order; a notification or a host's response among
 * the elements gets none. JSON path: HTTP 200 (as a single request's local error: an MCP client
 * reads the body of a 2xx only), a JSON array of those errors, byte for byte; exchange line
 * `local_error` with the reason, status 200. SSE: the events before the breach as the seller
 * sent them, then one error event per request still awaited (a response already forwarded
 * answers its request; one in the event that broke a bound, or in a refused event, does not).
 * A stream resumed with `Last-Event-ID` answers the requests its token says are awaited, on an
 * SSE stream. Where no id can be told (a batch of only notifications and responses, a resumed
 * stream whose token could not carry its ids), the one error for id null stays: HTTP 502.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { jsonAnswer, sseWritesAnswer } from '../helpers/seller-answers.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import {
  RESUME_TOKEN,
  RESUME_YAML,
  expectedBatchErrorFrames,
  expectedBatchErrorJson,
  expectedErrorFrame,
  expectedErrorJson,
  observedMsAtLeast,
  startObservedGateway,
  withToken,
  type LogLine,
  type ObservedGateway,
} from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { closedPort } from '../helpers/ports.js';
import { rawPost, sseIds, type RawResponse } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import type { LocalErrorInput } from '../../src/errors/local-reply.js';
import { SDK_ID } from '../../src/version.js';

const LIMIT = 2000;
const EVENT_LIMIT = 1000;
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const LIST = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
const BATCH = `[${PING},${LIST}]`;
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const HOST_RESPONSE = '{"jsonrpc":"2.0","id":"srv-1","result":{}}';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
const R999 = '{"jsonrpc":"2.0","id":999,"result":{}}';
const data = (json: string): string => `data: ${json}\n\n`;

const ONE = 1;
const TWO = 2;
const errorArray = expectedBatchErrorJson;
const errorFrames = expectedBatchErrorFrames;
/** The one error for id null (no request to answer). */
const nullError = (e: LocalErrorInput): string => expectedErrorJson({ id: null, method: '', ...e });

/** A `notifications/message` JSON text of exactly `bytes` bytes. */
function notificationOfSize(bytes: number): string {
  const base = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""}}';
  return base.replace('"data":""', `"data":"${'n'.repeat(bytes - base.length)}"`);
}

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
let deadPort = 0;

const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  async (seller) => {
    deadPort = await closedPort();
    return startObservedGateway(
      agentsYaml(
        {
          s: { url: seller.url, max_response_bytes: LIMIT, max_sse_event_bytes: EVENT_LIMIT, sse_idle_timeout_ms: 2000 },
          slow: { url: seller.url, response_deadline_ms: 300 },
          dead: { url: `http://127.0.0.1:${deadPort}/mcp` },
        },
        RESUME_YAML,
      ),
    );
  },
);

/** The seller answers the next request 200 `application/json` with `body` (with its Content-Length unless `chunked`). */
function sellerJson(body: string, chunked = false): void {
  answer = jsonAnswer(body, chunked);
}

/** The seller answers the next request 200 `text/event-stream`, writing each of `writes` 20 ms apart, then closes (or drops, `drop`). */
function sellerStreams(writes: readonly string[], drop = false): void {
  answer = sseWritesAnswer(writes, drop);
}

/** POSTs `batch` raw to `agent`: the response and its exchange line. */
async function postBatch(batch: string, agent = 's'): Promise<{ r: RawResponse; line: LogLine }> {
  const seen = stack.gateway.lines.length;
  const r = await rawPost(stack.gateway.agentUrl(agent), batch);
  const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
  return { r, line };
}

const summary = (line: LogLine): Record<string, unknown> => ({ rpc_kind: line.rpc_kind, status: line.status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

/** Asserts `r` is HTTP 200 with exactly `body` (JSON), logged `local_error` / `reason`. */
function assertJsonErrors(r: RawResponse, line: LogLine, body: string, reason: string): void {
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.equal(r.text(), body);
  assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason, bytes_to_host: Buffer.byteLength(body) });
}

/** Asserts `r` is an SSE stream of exactly `text`, logged `local_error` / `reason`. */
function assertSse(r: RawResponse, line: LogLine, text: string, reason: string): void {
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  assert.equal(r.text(), text);
  assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason, bytes_to_host: r.bytes });
}

describe('batch-local-error-answers-no-request', { timeout: TEST_TIMEOUT_MS }, () => {
  test('JSON, the reported case: an answer over max_response_bytes gets HTTP 200 and one error for each request, byte for byte', async () => {
    const body = `[${R1},{"jsonrpc":"2.0","id":2,"result":{"tools":[],"pad":"${'p'.repeat(LIMIT)}"}}]`;
    sellerJson(body);
    const { r, line } = await postBatch(BATCH);
    const observed = Buffer.byteLength(body);
    const message = `The seller announced a ${observed}-byte response (Content-Length), over the ${LIMIT}-byte limit.`;
    const adcp = `{"code":"RESPONSE_TOO_LARGE","message":"${message}","recovery":"terminal","source":"sdk","sdk_id":"${SDK_ID}","details":{"reason":"content_length","limit_bytes":${LIMIT},"observed_bytes":${observed}}}`;
    const one = (id: number): string => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32050,"message":"${message}","data":{"adcp_error":${adcp}}}}`;
    assertJsonErrors(r, line, `[${one(1)},${one(2)}]`, 'content_length');
  });

  test('JSON, ids as the host wrote them, in the batch\'s order, one per request (an id twice: twice); a notification and a host response get none', async () => {
    const batch = `[{"jsonrpc":"2.0","id":"a","method":"ping"},${INITIALIZED},{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"},${HOST_RESPONSE},{"jsonrpc":"2.0","id":1.5,"method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"}]`;
    // No Content-Length: the bytes are counted as they arrive.
    sellerJson(`[${'1,'.repeat((LIMIT - 2) / 2)}1]`, true);
    const { r, line } = await postBatch(batch);
    const refs = ['a', { id: 9007199254740992, idText: '9007199254740993' }, 1.5, 'a'];
    const expected = errorArray(refs, { reason: 'raw_bytes', limitBytes: LIMIT, observedBytes: LIMIT + 1 });
    assert.ok(expected.includes('"id":9007199254740993,'));
    assertJsonErrors(r, line, expected, 'raw_bytes');
  });

  test('JSON, an answer for another id (upstream_not_mcp): an error for each request, the one the seller answered included', async () => {
    sellerJson(`[${R1},${R999}]`);
    const { r, line } = await postBatch(BATCH);
    assertJsonErrors(r, line, errorArray([ONE, TWO], { reason: 'upstream_not_mcp', upstreamStatus: 200 }), 'upstream_not_mcp');
  });

  test('JSON, an empty 202 to a batch holding requests: upstream_not_mcp for each request', async () => {
    answer = (_req, res) => {
      res.removeHeader('content-type');
      res.writeHead(202).end();
    };
    const { r, line } = await postBatch(`[${INITIALIZED},${PING},${LIST}]`);
    assertJsonErrors(r, line, errorArray([ONE, TWO], { reason: 'upstream_not_mcp', upstreamStatus: 202 }), 'upstream_not_mcp');
  });

  test('JSON, the deadline (300 ms): HTTP 200, not 504, with deadline_exceeded for each request', async () => {
    answer = () => {}; // never answers; the gateway aborts the request at its deadline
    const { r, line } = await postBatch(BATCH, 'slow');
    const observedMs = observedMsAtLeast(r.text(), 300);
    assertJsonErrors(r, line, errorArray([ONE, TWO], { reason: 'deadline_exceeded', limitMs: 300, observedMs }), 'deadline_exceeded');
  });

  test('JSON, an unreachable seller: upstream_unreachable for each request', async () => {
    const { r, line } = await postBatch(BATCH, 'dead');
    assertJsonErrors(r, line, errorArray([ONE, TWO], { reason: 'upstream_unreachable', limitBytes: 4194304, observedBytes: 0 }), 'upstream_unreachable');
  });

  test('control, JSON: a batch of only notifications and responses has no id to answer: HTTP 502, one error for id null', async () => {
    sellerJson(notificationOfSize(LIMIT + 1));
    const { r, line } = await postBatch(`[${INITIALIZED},${HOST_RESPONSE}]`);
    const expected = nullError({ reason: 'content_length', limitBytes: LIMIT, observedBytes: LIMIT + 1 });
    assert.equal(r.status, 502);
    assert.equal(r.text(), expected);
    assert.deepEqual(summary(line), { rpc_kind: 'batch', status: 502, outcome: 'local_error', reason: 'content_length', bytes_to_host: Buffer.byteLength(expected) });
  });

  test('SSE: request 1 answered, then an event over max_sse_event_bytes: the error for request 2 only', async () => {
    sellerStreams([data(R1), data(notificationOfSize(EVENT_LIMIT + 1))]);
    const { r, line } = await postBatch(BATCH);
    assertSse(r, line, data(R1) + errorFrames([TWO], { reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 }), 'sse_event');
  });

  test('SSE: an array answering request 1 beside a response for id 999 is not forwarded: the error for both requests', async () => {
    const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
    const refused = `[${R1},${R999}]`;
    sellerStreams([data(note), data(refused)]);
    const { r, line } = await postBatch(BATCH);
    assertSse(r, line, data(note) + errorFrames([ONE, TWO], { reason: 'upstream_not_mcp', limitBytes: LIMIT, observedBytes: Buffer.byteLength(refused), upstreamStatus: 200 }), 'upstream_not_mcp');
  });

  test('SSE: the seller closes after answering request 2: upstream_reset for request 1 only', async () => {
    sellerStreams([data(R2)]);
    const { r, line } = await postBatch(BATCH);
    assertSse(r, line, data(R2) + errorFrames([ONE], { reason: 'upstream_reset', limitBytes: LIMIT, observedBytes: Buffer.byteLength(data(R2)) }), 'upstream_reset');
  });

  test('SSE: the event answering request 2 is not delivered (its resume token takes the stream over the cumulative bound): the error answers request 2', async () => {
    const tail = data(R1) + `id: e2\n${data(R2)}`;
    // Seller bytes 10 under the limit: the token that replaces `e2` (hundreds of characters)
    // crosses it. Two notifications, each within the event limit, fill the stream.
    const first = notificationOfSize(EVENT_LIMIT);
    const note = notificationOfSize(LIMIT - 10 - Buffer.byteLength(tail) - Buffer.byteLength(data(first)) - Buffer.byteLength(data('')));
    sellerStreams([data(first), data(note), tail]);
    const { r, line } = await postBatch(BATCH);
    const m = /"observed_bytes":(\d+)/.exec(r.text());
    const observed = Number(m?.[1]);
    assert.ok(observed > LIMIT && observed <= LIMIT + 4096, `observed_bytes ${observed}`);
    assertSse(r, line, data(first) + data(note) + data(R1) + errorFrames([TWO], { reason: 'sse_cumulative', limitBytes: LIMIT, observedBytes: observed }), 'sse_cumulative');
  });

  test('control, SSE: a batch of only notifications and responses: one error event for id null', async () => {
    sellerStreams([data(notificationOfSize(EVENT_LIMIT + 1))]);
    const { r, line } = await postBatch(`[${INITIALIZED},${HOST_RESPONSE}]`);
    assertSse(r, line, expectedErrorFrame({ id: null, method: '', reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 }), 'sse_event');
  });

  /** POSTs `batch`, its seller stream carrying `first` (with `id: e1`) then dropping; returns the token the host got. */
  async function openThenDrop(batch: string, first: string): Promise<string> {
    sellerStreams([`id: e1\n${data(first)}`], true);
    const opened = await postBatch(batch);
    const [token] = sseIds(opened.r.text());
    assert.match(token ?? '', RESUME_TOKEN);
    assert.equal(opened.r.text(), withToken(`id: e1\n${data(first)}`, token!));
    assert.equal(opened.line.outcome, 'resumable_end');
    return token!;
  }

  /** Resumes with `token`: the host's response text, status and content type, and the exchange line. */
  async function resume(token: string): Promise<{ status: number; type: string | null; text: string; line: LogLine }> {
    const seen = stack.gateway.lines.length;
    const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token } });
    const text = await res.text();
    const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && stack.gateway.lines.indexOf(l) >= seen);
    assert.equal(stack.seller.requests.at(-1)?.headers['last-event-id'], 'e1');
    return { status: res.status, type: res.headers.get('content-type'), text, line };
  }

  test('resumed with Last-Event-ID, the seller answers the resume with JSON: an SSE stream with the error for request 2, the one its token awaits', async () => {
    const token = await openThenDrop(BATCH, R1);
    sellerJson('{}');
    const got = await resume(token);
    const frames = errorFrames([TWO], { reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.deepEqual({ status: got.status, type: got.type, text: got.text }, { status: 200, type: 'text/event-stream', text: frames });
    assert.deepEqual(summary(got.line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(frames) });
  });

  test('resumed with Last-Event-ID, the resumed stream breaks a bound: the error for request 2', async () => {
    const token = await openThenDrop(BATCH, R1);
    sellerStreams([data(notificationOfSize(EVENT_LIMIT + 1))]);
    const got = await resume(token);
    const frames = errorFrames([TWO], { reason: 'sse_event', limitBytes: EVENT_LIMIT, observedBytes: EVENT_LIMIT + 1 });
    assert.deepEqual({ status: got.status, text: got.text }, { status: 200, text: frames });
    assert.deepEqual(summary(got.line), { rpc_kind: 'batch', status: 200, outcome: 'local_error', reason: 'sse_event', bytes_to_host: Buffer.byteLength(frames) });
  });

  test('control, resumed: a token that could not carry the batch\'s ids (over 1024 characters of them) leaves no id to tell: HTTP 502, one error for id null', async () => {
    const ids = [1, 2, 3, 4, 5, 6].map((k) => `${k}${'i'.repeat(250)}`);
    const batch = `[${ids.map((id) => `{"jsonrpc":"2.0","id":"${id}","method":"ping"}`).join(',')}]`;
    const token = await openThenDrop(batch, `{"jsonrpc":"2.0","id":"${ids[0]}","result":{}}`);
    sellerJson('{}');
    const got = await resume(token);
    const expected = nullError({ reason: 'upstream_not_mcp', upstreamStatus: 200 });
    assert.deepEqual({ status: got.status, type: got.type, text: got.text }, { status: 502, type: 'application/json; charset=utf-8', text: expected });
    assert.deepEqual(summary(got.line), { rpc_kind: 'batch', status: 502, outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: Buffer.byteLength(expected) });
  });

  test('the MCP SDK client\'s transport sending the batch: each call gets its error by its id (before, the 502 made send() throw)', async () => {
    sellerJson(`[${'1,'.repeat(LIMIT)}1]`);
    const transport = new StreamableHTTPClientTransport(new URL(stack.gateway.agentUrl('s')));
    stack.closeAfter(transport);
    const got: JSONRPCMessage[] = [];
    transport.onmessage = (m) => void got.push(m);
    await transport.start();
    await withTimeout(transport.send([JSON.parse(PING) as JSONRPCMessage, JSON.parse(LIST) as JSONRPCMessage]), undefined, 'send');
    const e = { reason: 'content_length', limitBytes: LIMIT, observedBytes: 2 * LIMIT + 3 } as const;
    assert.deepEqual(got, JSON.parse(errorArray([ONE, TWO], e)));
    await transport.close();
  });
});
