/**
 * Regression: a seller's message that is no JSON-RPC message of any kind, or whose `method` is
 * empty, reached the host.
 *
 * Reported failure (a review): `{"jsonrpc":"2.0"}` and `{"jsonrpc":"2.0","params":{}}` (no
 * `id`, `method`, `result` or `error`) went out to the host, although they are no request or
 * notification (JSON-RPC 2.0 §4: those have a `method`) nor response (§5: an `id` and one of
 * `result` and `error`), and MCP SDK clients fail to parse them; and
 * `{"jsonrpc":"2.0","id":999,"method":""}` and `{"jsonrpc":"2.0","method":""}` were judged a
 * server request and a notification, although the MCP Go SDK reads an empty method as none
 * (internal/jsonrpc2 DecodeMessage: `wire.Method != ""`), so to a Go host the first is a
 * response to its request 999 (the id-only case:
 * test/regressions/id-only-message-on-request-stream-passes.test.ts), and no MCP method is empty.
 *
 * Input: a raw node:http seller behind the real gateway (MCP 2025-06-18; batches 2025-03-26),
 * two agents on it: `seller` writes SSE with LF line endings (one chunk: the raw planner's
 * path), `crlf` the same with CR LF (the parser's path). The messages: the four above, one with
 * a `method` only inside its `params`, one with `"method":null` and an id (Go reads null as
 * empty), one whose only method is `"Method"` (none as `JSON.parse` reads it), and one with an
 * id whose `"METHOD":""` follows its `"method":"ping"` (Go keeps the last: empty). Each is sent:
 * (a) on a `tools/call`'s SSE stream, before the call's real answer, and as its JSON answer;
 * (b) on the standalone GET stream, among a server request and notifications;
 * (c) on a POSTed notification's SSE answer (the same events), and as its JSON answer;
 * (d) on a batch's SSE stream after request 1's response, and in its JSON answer beside both
 *     responses.
 * Expectation: as the gateway does for a message that is not a valid MCP message there:
 * (a) `upstream_not_mcp` for the call's id, nothing of the seller's forwarded, outcome
 * local_error; (b) each dropped `get_stream_response`, the server request and notifications
 * forwarded byte for byte; (c) each dropped `notification_stream_response`, and HTTP 502
 * `upstream_not_mcp` for id null for the JSON answer; (d) request 1's response, then
 * `upstream_not_mcp` for request 2 on SSE, the batch's error for both requests as JSON.
 * Controls: notifications in the SDKs' member orders and spacings (the TypeScript SDK writes
 * `method` first; Python's `json.dumps` adds spaces), one with a `method` inside its params, a
 * server request and text data pass byte for byte (re-encoded with LF on the CR LF agent),
 * then the answer, outcome ok.
 * Since a hostile trial 17, M1 (test/regressions/sdk-example-event-store-priming-replay-fails-call.test.ts):
 * on a call's and a batch's SSE stream, the messages that name no `id`, `method`, `result` or
 * `error` at all ({@link DROPPED_ON_REQUEST_STREAMS}: `jsonrpc` only, `params` only, a
 * `method` only inside `params`) are dropped `message_without_kind` instead of failing the
 * call, the stream going on to its answer (outcome ok): no host reads them as a message, and
 * the MCP SDK client skips them. (a) on SSE and (d) changed for those three on purpose; the
 * others, and every JSON answer, are refused as before.
 * Was: (a) on SSE each went out, then the answer, outcome ok (the JSON answers were
 * upstream_not_mcp already); (b), (c) each went out, and the JSON answers with HTTP 200 as the
 * seller wrote them; (d) each went out and the batch's stream ended ok at request 2's
 * response, and the JSON answer went out as the seller wrote it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorFrame, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { assertGetStreamDrops, droppedInLines } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const BATCH_HEADERS = { 'mcp-protocol-version': '2025-03-26' };

/** The messages without a kind (or with an empty method), by name. */
const KINDLESS: Record<string, string> = {
  no_kind: '{"jsonrpc":"2.0"}',
  params_only: '{"jsonrpc":"2.0","params":{}}',
  empty_method_id: '{"jsonrpc":"2.0","id":999,"method":""}',
  empty_method: '{"jsonrpc":"2.0","method":""}',
  method_in_params: '{"jsonrpc":"2.0","params":{"method":"notifications/progress"}}',
  null_method_id: '{"jsonrpc":"2.0","id":999,"method":null}',
  method_case_variant: '{"jsonrpc":"2.0","Method":"notifications/message"}',
  empty_method_case_variant_id: '{"jsonrpc":"2.0","id":999,"method":"ping","METHOD":""}',
};
const NAMES = Object.keys(KINDLESS);
/** Those that name none of `id`, `method`, `result`, `error` (in any case): dropped `message_without_kind` on a call's and a batch's SSE stream. */
const DROPPED_ON_REQUEST_STREAMS = new Set(['no_kind', 'params_only', 'method_in_params']);

const SERVER_REQUEST = '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}';
/** Notifications as the Go and Python SDKs (`jsonrpc` first), the TypeScript SDK (`method` first) and `json.dumps` (spaces) write them, and one with a `method` in its params. */
const NOTES = [
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}',
  '{"method":"notifications/progress","params":{"progressToken":"t","progress":1},"jsonrpc":"2.0"}',
  '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}',
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"method":"x"}}}',
];

/** Event data that is no JSON: forwarded as it is (docs/errors.md). */
const PLAIN_TEXT = 'plain text';

const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';

const answer = (id: number): string => toolResponse(id, { content: [{ type: 'text', text: 'real answer' }] });
/** An SSE event with LF line endings, or CR LF ones (`crlf`). */
const frame = (data: string, crlf: boolean): string => (crlf ? `data: ${data}\r\n\r\n` : `data: ${data}\n\n`);
const frames = (messages: readonly string[], crlf: boolean): string => messages.map((m) => frame(m, crlf)).join('');

/** What the seller's streams that answer no request carry: a server request, every kindless message, the notifications. */
const NO_REQUEST_STREAM = [SERVER_REQUEST, ...Object.values(KINDLESS), ...NOTES];
/** What of it reaches the host (the parser's path re-encodes with LF). */
const NO_REQUEST_PASSED = frames([SERVER_REQUEST, ...NOTES], false);

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const crlf = req.url.startsWith('/crlf');
    const sse = (messages: readonly string[]): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(frames(messages, crlf));
    };
    const json = (text: string): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    };
    if (req.method === 'GET') return sse(NO_REQUEST_STREAM);
    const body = req.body.toString('utf8');
    if (body.startsWith('[')) {
      // A batch of ping (1) and tools/list (2): the message to send is tools/list's cursor.
      const cursor = (JSON.parse(body) as [unknown, { params: { cursor: string } }])[1].params.cursor;
      if (cursor.startsWith('json_')) return json(`[${R1},${R2},${KINDLESS[cursor.slice(5)]!}]`);
      return sse([R1, KINDLESS[cursor]!, R2]);
    }
    const msg = JSON.parse(body) as { id?: number; method: string; params?: { name?: string; reason?: string } };
    // A notification: `notifications/cancelled` is answered as JSON with the message its reason names.
    if (msg.id === undefined) return msg.method === 'notifications/cancelled' ? json(KINDLESS[msg.params!.reason!]!) : sse(NO_REQUEST_STREAM);
    const name = msg.params?.name ?? '';
    if (name === 'control') return sse([SERVER_REQUEST, ...NOTES, PLAIN_TEXT, answer(msg.id)]);
    if (name.startsWith('json_')) return json(KINDLESS[name.slice(5)]!);
    sse([KINDLESS[name]!, answer(msg.id)]);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url, crlf: seller.url.replace(/\/mcp$/, '/crlf') })));
const gw = (): ObservedGateway => stack.gateway;

/** Calls `tool` with id `id` on `agent`: the host gets upstream_not_mcp for the call (JSON for a `json_…` tool, else an SSE event), outcome local_error. */
async function assertCallUpstreamNotMcp(agent: string, tool: string, id: number): Promise<void> {
  const r = await rawPost(gw().agentUrl(agent), toolCall(id, tool), HEADERS);
  const expected = { id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
  assert.equal(r.status, 200);
  assert.equal(r.text(), tool.startsWith('json_') ? expectedErrorJson(expected) : expectedErrorFrame(expected));
  const line = await gw().exchangeLine(agent, id);
  assert.deepEqual({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host }, { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
}

describe('a seller message without a kind (no method, id, result or error; an empty method) is not forwarded', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 0;
  for (const agent of ['seller', 'crlf']) {
    for (const name of NAMES) {
      if (DROPPED_ON_REQUEST_STREAMS.has(name)) {
        test(`${agent}: ${name} on a call's SSE stream: dropped message_without_kind, then the answer`, async () => {
          const rpcId = ++id;
          const r = await rawPost(gw().agentUrl(agent), toolCall(rpcId, name), HEADERS);
          assert.equal(r.status, 200);
          assert.equal(r.text(), frame(answer(rpcId), false));
          const line = await gw().exchangeLine(agent, rpcId);
          const drops = { message_without_kind: 1 };
          assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, { outcome: 'ok', reason: 'message_without_kind', events_dropped: drops });
        });
        continue;
      }
      test(`${agent}: ${name} on a call's SSE stream: upstream_not_mcp for the call, nothing of the seller's forwarded`, async () => {
        await assertCallUpstreamNotMcp(agent, name, ++id);
      });
    }

    test(`${agent}: controls on a call's SSE stream (a server request, notifications as SDKs write them, text data) pass, then the answer`, async () => {
      const rpcId = ++id;
      const r = await rawPost(gw().agentUrl(agent), toolCall(rpcId, 'control'), HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), frames([SERVER_REQUEST, ...NOTES, PLAIN_TEXT, answer(rpcId)], false));
      const line = await gw().exchangeLine(agent, rpcId);
      assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
    });

    test(`${agent}: the standalone GET stream: each is dropped get_stream_response, the server request and the notifications pass`, async () => {
      await assertGetStreamDrops(gw(), agent, HEADERS, NO_REQUEST_PASSED, NAMES.length);
    });

    test(`${agent}: a POSTed notification's SSE answer: each is dropped notification_stream_response`, async () => {
      const seen = gw().lines.length;
      const r = await rawPost(gw().agentUrl(agent), { jsonrpc: '2.0', method: 'notifications/initialized' }, HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), NO_REQUEST_PASSED);
      const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.rpc_kind === 'notification' && gw().lines.indexOf(l) >= seen);
      const drops = { notification_stream_response: NAMES.length };
      assert.deepEqual({ outcome: line.outcome, reason: line.reason, events_dropped: line.events_dropped }, { outcome: 'ok', reason: 'notification_stream_response', events_dropped: drops });
      assert.deepEqual(droppedInLines(gw().lines.slice(seen), agent), drops);
    });

    for (const name of NAMES) {
      const dropped = DROPPED_ON_REQUEST_STREAMS.has(name);
      const what = dropped ? "request 1's response, dropped message_without_kind, request 2's response" : "request 1's response, then upstream_not_mcp for request 2";
      test(`${agent}: ${name} on a batch's SSE stream: ${what}`, async () => {
        const seen = gw().lines.length;
        const batch = [
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: name } },
        ];
        const r = await rawPost(gw().agentUrl(agent), batch, BATCH_HEADERS);
        assert.equal(r.status, 200);
        assert.equal(r.text(), frame(R1, false) + (dropped ? frame(R2, false) : expectedBatchErrorFrames([2], { reason: 'upstream_not_mcp', upstreamStatus: 200 })));
        const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === agent && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen);
        assert.deepEqual(
          { outcome: line.outcome, reason: line.reason },
          dropped ? { outcome: 'ok', reason: 'message_without_kind' } : { outcome: 'local_error', reason: 'upstream_not_mcp' },
        );
      });
    }
  }

  for (const name of NAMES) {
    test(`${name} as a call's JSON answer: upstream_not_mcp for the call`, async () => {
      await assertCallUpstreamNotMcp('seller', `json_${name}`, ++id);
    });

    test(`${name} as a POSTed notification's JSON answer: 502 upstream_not_mcp for id null`, async () => {
      const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: name } }, HEADERS);
      assert.equal(r.status, 502);
      assert.equal(r.text(), expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    });

    test(`${name} in a batch's JSON answer beside both responses: the batch's error for both requests`, async () => {
      const batch = [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: `json_${name}` } },
      ];
      const r = await rawPost(gw().agentUrl('seller'), batch, BATCH_HEADERS);
      assert.equal(r.status, 200);
      assert.equal(r.text(), expectedBatchErrorJson([1, 2], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    });
  }
});
