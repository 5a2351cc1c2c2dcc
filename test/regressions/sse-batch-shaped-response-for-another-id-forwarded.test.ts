/**
 * Regression: on a single request's SSE stream, an event whose data is an array (a batch)
 * holding a JSON-RPC response for another id was forwarded.
 *
 * Reported failure (a reviewer): the stage refuses a response to another id (`upstream_not_mcp`
 * for the request's id: test/regressions/sse-response-for-another-id.test.ts), but an array was
 * judged only on whether it held the request's own response (MCP 2025-03-26: a server MAY
 * batch what it streams; sse-message.ts batchVerdict): `[{"id":8,"result":...}]` on request
 * 7's stream went to the host, and so did `[<the response to 7>, <a response to 8>]`, as the
 * response (the stream then ended `ok`). A client routes each element by its id, so the
 * element for 8 answered another pending call, as a single foreign response would. Now each
 * element is judged as a single message is (sse-message.ts isForeignResponse): one foreign
 * response in the array and the stream ends with `upstream_not_mcp` for the request's id.
 *
 * Input: a raw seller answers each tools/call over SSE (`event: message`, one `data:` line per
 * event) with an array event, then (unless the array holds it) the response to the request:
 * (a) `[response for id + 1]`; (b) `[notification, response for id + 1]`; (c) `[the response
 * to the request, a response for id + 1]`, nothing after it; (d) `[response for "id"]` (the id
 * as a string); (e) `[error for id null]`; (f) `[method + result for id + 1]`; (g) request
 * 9007199254740993 with `[response for 9007199254740992]` (the same double, not the same id).
 * Controls: (h) `[notification, the response]` is the response on MCP 2025-03-26, as before; (i) `[notification,
 * server request]` passes and the stream goes on to the response; (j) a batch the host sent
 * (MCP 2025-03-26) answered with an array of its two responses passes, outcome ok; (k) a
 * long-lived stream (`subscriptions/listen`) drops (a) with the `SSE stream: event
 * dropped` warning.
 * Expectation: (a)-(f) exactly one event, the gateway's `upstream_not_mcp` error (upstream_status
 * 200) for the request's id, nothing of the array; outcome local_error, reason upstream_not_mcp;
 * (g) the same for id 9007199254740993 as the host wrote it. (h)-(j) the seller's bytes, outcome
 * ok. (k) the notifications around the dropped event, outcome ok, reason upstream_not_mcp.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const small = (id: number | string, text = 'own answer'): string => toolResponse(id, { content: [{ type: 'text', text }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const PING = '{"jsonrpc":"2.0","id":99,"method":"ping","params":{}}';
const BIG_ID = '9007199254740993';
const BIG_ID_AS_DOUBLE = '9007199254740992';

/** The seller's array event before the response to `id` (`final`: the array is the last event), by tool name. */
const ARRAYS: Record<string, (id: number) => { data: string; final?: boolean }> = {
  next_id: (id) => ({ data: `[${small(id + 1, 'for another call')}]` }),
  note_and_next_id: (id) => ({ data: `[${NOTE},${small(id + 1, 'for another call')}]` }),
  own_and_next_id: (id) => ({ data: `[${small(id)},${small(id + 1, 'for another call')}]`, final: true }),
  string_id: (id) => ({ data: `[${small(String(id), 'for another call')}]` }),
  null_id_error: () => ({ data: '[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]' }),
  method_and_result_next_id: (id) => ({ data: `[{"jsonrpc":"2.0","id":${id + 1},"method":"tools/call","result":{"content":[]}}]` }),
  note_and_own: (id) => ({ data: `[${NOTE},${small(id)}]`, final: true }),
  note_and_ping: () => ({ data: `[${NOTE},${PING}]` }),
  listen: (id) => ({ data: `[${small(id + 1, 'for another call')}]` }),
};

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const text = req.body.toString('utf8');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parsed = JSON.parse(text) as { id: number; method: string; params?: { name?: string } } | Array<{ id: number }>;
    if (Array.isArray(parsed)) {
      // A batch the host sent: one array of its responses.
      return void res.end(frame(`[${parsed.map((m) => small(m.id)).join(',')}]`));
    }
    if (text.includes(BIG_ID)) {
      // The element's id reads as the request's double, but is not its id (written exactly).
      const own = `{"jsonrpc":"2.0","id":${BIG_ID},"result":{"content":[]}}`;
      return void res.end(frame(`[{"jsonrpc":"2.0","id":${BIG_ID_AS_DOUBLE},"result":{"content":[]}}]`) + frame(own));
    }
    const name = parsed.method === 'subscriptions/listen' ? 'listen' : (parsed.params?.name ?? '');
    const { data, final } = ARRAYS[name]!(parsed.id);
    // A long-lived stream has no response to end it: the seller ends it.
    if (name === 'listen') return void res.end(frame(NOTE) + frame(data) + frame(NOTE));
    res.end(frame(data) + (final === true ? '' : frame(small(parsed.id))));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

describe('SSE batch-shaped response for another id on a single request stream', { timeout: TEST_TIMEOUT_MS }, () => {
  const refused: Array<[string, number]> = [
    ['next_id', 7],
    ['note_and_next_id', 8],
    ['own_and_next_id', 9],
    ['string_id', 10],
    ['null_id_error', 11],
    ['method_and_result_next_id', 12],
  ];
  for (const [tool, id] of refused) {
    test(`${tool}: upstream_not_mcp for the request's id, the array not forwarded`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      assert.equal(r.text(), expectedErrorFrame({ id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().exchangeLine('seller', id);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('an element whose id is the request id only as a double: upstream_not_mcp for the id as the host wrote it', async () => {
    const body = `{"jsonrpc":"2.0","id":${BIG_ID},"method":"tools/call","params":{"name":"big_id","arguments":{}}}`;
    const r = await rawPost(gw().agentUrl('seller'), body, HEADERS);
    const expected = expectedErrorFrame({ id: 0, method: 'tools/call', toolName: 'big_id', reason: 'upstream_not_mcp', upstreamStatus: 200 }).replace('"id":0,', `"id":${BIG_ID},`);
    assert.equal(r.text(), expected);
  });

  test('control: an array holding the notification and the response is the response on 2025-03-26, as before', async () => {
    // MCP 2025-06-18 and later have no batches: there it is upstream_not_mcp
    // (test/regressions/sse-array-holding-own-response-on-revision-without-batches.test.ts).
    const r = await rawPost(gw().agentUrl('seller'), toolCall(13, 'note_and_own'));
    assert.equal(r.text(), frame(`[${NOTE},${small(13)}]`));
    const line = await gw().exchangeLine('seller', 13);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test('control: an array of a notification and a server request passes, then the response', async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall(14, 'note_and_ping'), HEADERS);
    assert.equal(r.text(), frame(`[${NOTE},${PING}]`) + frame(small(14)));
    const line = await gw().exchangeLine('seller', 14);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test('control: a batch the host sent (MCP 2025-03-26) gets the array of its responses', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(15, 'a'), toolCall(16, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(`[${small(15)},${small(16)}]`));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
  });

  test('a long-lived stream (subscriptions/listen) drops the array with a warning and goes on', async () => {
    const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: 17, method: 'subscriptions/listen', params: {} }, { 'mcp-protocol-version': '2026-07-28' });
    assert.equal(r.text(), frame(NOTE) + frame(NOTE));
    const warning = await gw().waitForLine((l) => l.msg === 'SSE stream: event dropped' && l.reason === 'upstream_not_mcp');
    assert.equal(warning.agent, 'seller');
    const line = await gw().exchangeLine('seller', 17);
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: 'upstream_not_mcp' });
  });
});
