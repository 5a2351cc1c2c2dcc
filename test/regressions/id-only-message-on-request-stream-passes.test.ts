/**
 * Regression: a message with an `id` and no `method`, `result` or `error` reached the host on
 * a request's SSE stream.
 *
 * Reported failure (hostile trials): on a `tools/call` stream, `data: {"jsonrpc":"2.0","id":999}`
 * (another id than the call's) went out as the seller sent it, logged ok, and so did it on the
 * standalone GET stream and the stream answering a POSTed notification, in a batch's answer,
 * and as a JSON answer to a notification. It is no JSON-RPC request or notification (JSON-RPC
 * 2.0 §4: those have a `method`) nor response (§5: one of `result` and `error`), but the MCP Go
 * SDK reads a message with a non-null id and no method as a response with that id
 * (internal/jsonrpc2 DecodeMessage: "no method, should be a response"), neither result nor
 * error: it completes pending call 999 with an empty result. The same message with the call's
 * own id was already refused (a new user's trial 8, F13); a response for another id ends a
 * request's stream `upstream_not_mcp` and is dropped `get_stream_response` on the GET stream
 * (since f483127 whatever the event's name).
 *
 * Input: a raw node:http seller behind the real gateway (MCP 2025-06-18), answering:
 * (a) `tools/call` over SSE: an id-only message, then the call's real answer; the id 999, "abc",
 *     null, written `"ID"` (Go folds it to `id`), in an event named `x-custom`, in an array,
 *     with CR LF line endings (the parser's path; the others one LF chunk, the planner's), with
 *     a `method` inside its `params` (no top-level one: the Go SDK reads a response), and with
 *     the call's own id;
 * (b) `tools/call` as JSON: `{"jsonrpc":"2.0","id":<the call's id>}` and `{"jsonrpc":"2.0","id":999}`;
 * (c) the standalone GET stream: id-only messages for 5 and "abc", a server request (`ping`
 *     with an id) and a notification;
 * (d) POSTed notifications: the same over SSE, and `{"jsonrpc":"2.0","id":1}` as JSON;
 * (e) a batch (MCP 2025-03-26) of requests 1 and 2: request 1's response, then an id-only
 *     message for 999 over SSE; and as JSON the two responses and the id-only message in one
 *     array;
 * (f) controls: a server request with an id and a `method`, and a notification, before the
 *     call's answer, over SSE.
 * Expectation: (a) and (b) exactly the gateway's `upstream_not_mcp` error for the call's id
 * (an SSE event, or the JSON body), nothing of the seller's, outcome local_error; (c) the
 * server request and the notification, each id-only message dropped `get_stream_response`; (d)
 * the same dropped `notification_stream_response`, and HTTP 502 `upstream_not_mcp` for id null
 * for the JSON answer; (e) request 1's response, then `upstream_not_mcp` for request 2 on SSE;
 * the batch's error for both requests as JSON; (f) every byte the seller sent, outcome ok.
 * Was: (a) every case but the own id forwarded the message, then the answer, outcome ok; (b)
 * upstream_not_mcp already; (c), (d) the id-only messages forwarded (the JSON one too, logged
 * ok); (e) forwarded, outcome ok.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost } from '../helpers/raw.js';
import { assertGetStreamDrops, droppedInLines } from '../helpers/drop-lines.js';
import { assertToolCallPassed, assertToolCallUpstreamNotMcp } from '../helpers/upstream-not-mcp.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const plain = (data: string): string => `data: ${data}\n\n`;
const answer = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'real answer' }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const SERVER_REQUEST = '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}';
const ID_ONLY = '{"jsonrpc":"2.0","id":999}';

/** The seller's SSE answer to `tools/call` id `id`, by tool name (`json…`: a JSON body instead). */
const STREAMS: Record<string, (id: number) => string> = {
  other_id: (id) => plain(ID_ONLY) + plain(answer(id)),
  string_id: (id) => plain('{"jsonrpc":"2.0","id":"abc"}') + plain(answer(id)),
  null_id: (id) => plain('{"jsonrpc":"2.0","id":null}') + plain(answer(id)),
  case_variant: (id) => plain('{"jsonrpc":"2.0","ID":999}') + plain(answer(id)),
  named: (id) => `event: x-custom\ndata: ${ID_ONLY}\n\n` + plain(answer(id)),
  array: (id) => plain(`[${ID_ONLY}]`) + plain(answer(id)),
  crlf: (id) => `data: ${ID_ONLY}\r\n\r\n` + plain(answer(id)),
  method_in_params: (id) => plain('{"jsonrpc":"2.0","id":999,"params":{"method":"tools/call"}}') + plain(answer(id)),
  own_id: (id) => plain(`{"jsonrpc":"2.0","id":${id}}`) + plain(answer(id)),
  control: (id) => plain(SERVER_REQUEST) + plain(NOTE) + plain(answer(id)),
};
const JSON_ANSWERS: Record<string, (id: number) => string> = {
  json_own_id: (id) => `{"jsonrpc":"2.0","id":${id}}`,
  json_other_id: () => ID_ONLY,
};

const GET_STREAM = plain('{"jsonrpc":"2.0","id":5}') + plain(SERVER_REQUEST) + plain('{"jsonrpc":"2.0","id":"abc"}') + plain(NOTE);
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
const BATCH = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]';
/** The same batch, which the seller answers as JSON. */
const JSON_BATCH = BATCH.replace('tools/list', 'resources/list');

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(GET_STREAM);
    }
    const body = req.body.toString('utf8');
    const sse = (text: string): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(text);
    };
    const json = (text: string): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    };
    if (body.startsWith('[')) return body.includes('resources/list') ? json(`[${R1},${R2},${ID_ONLY}]`) : sse(plain(R1) + plain(ID_ONLY) + plain(R2));
    const msg = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
    // A notification: `notifications/cancelled` is answered as JSON.
    if (msg.id === undefined) return msg.method === 'notifications/cancelled' ? json('{"jsonrpc":"2.0","id":1}') : sse(GET_STREAM);
    const name = msg.params?.name ?? '';
    if (name.startsWith('json')) return json(JSON_ANSWERS[name]!(msg.id));
    sse(STREAMS[name]!(msg.id));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;

describe('an id-only message (an id, no method, result or error) is judged as a response', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 0;
  for (const tool of ['other_id', 'string_id', 'null_id', 'case_variant', 'named', 'array', 'crlf', 'method_in_params', 'own_id', 'json_own_id', 'json_other_id']) {
    test(`${tool}: upstream_not_mcp for the call, nothing of the seller's forwarded`, async () => {
      await assertToolCallUpstreamNotMcp(gw(), tool, ++id, HEADERS);
    });
  }

  test('control: a server request and a notification pass byte for byte, then the answer', async () => {
    const rpcId = ++id;
    await assertToolCallPassed(gw(), 'control', rpcId, HEADERS, STREAMS.control!(rpcId));
  });

  test('the standalone GET stream: the id-only messages are dropped get_stream_response, the server request and the notification pass', async () => {
    await assertGetStreamDrops(gw(), 'seller', HEADERS, plain(SERVER_REQUEST) + plain(NOTE), 2);
  });

  test("a POSTed notification's SSE answer: the id-only messages are dropped notification_stream_response", async () => {
    const seen = gw().lines.length;
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', method: 'notifications/initialized' }, HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), plain(SERVER_REQUEST) + plain(NOTE));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'notification' && gw().lines.indexOf(l) >= seen);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, { outcome: 'ok', reason: 'notification_stream_response', events_dropped: { notification_stream_response: 2 } });
    assert.deepEqual(droppedInLines(gw().lines.slice(seen), 'seller'), { notification_stream_response: 2 });
  });

  test("a POSTed notification's JSON answer holding an id-only message: 502 upstream_not_mcp for id null", async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, HEADERS);
    assert.equal(r.status, 502);
    assert.equal(r.text(), expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });

  test("a batch's SSE answer: request 1's response, then upstream_not_mcp for request 2 at the id-only message", async () => {
    const seen = gw().lines.length;
    const r = await rawPost(gw().agentUrl('seller'), BATCH, { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), plain(R1) + expectedBatchErrorFrames([2], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test("a batch's JSON answer holding an id-only message beside both responses: the batch's error for both requests", async () => {
    const r = await rawPost(gw().agentUrl('seller'), JSON_BATCH, { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorJson([1, 2], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });
});
