/**
 * Regression (a reviewer, 2026-12-03): a message with both `result` and `error` and no `id`
 * (`{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}`) reached the host on a
 * request's SSE stream, and on a batch's. docs/errors.md refuses a message with both members
 * whatever its id (JSON-RPC 2.0 §5: "both members MUST NOT be included"), and the JSON path
 * refuses such a body, but the SSE raw fast path (sse-raw-events.ts) parsed only the blocks
 * whose bytes hold `"id` or a backslash, so this one went out as the seller's bytes, and the
 * stream then ended `ok` with the real response. Checked with it: a message with `result` (or
 * `error`) and no `id` at all (JSON-RPC 2.0 §5 requires `id` in every response: no client can
 * route it, and it is not the response) was forwarded too; it is now refused the same way
 * (docs/errors.md, `upstream_not_mcp`).
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, each stream written in one piece
 * with LF line endings (the raw planner's path):
 * - a request's stream (tools/call, MCP 2025-06-18): the id-less message, then the response
 *   to the request; with a notification before it in the same write; each id-less shape
 *   (both members, `result` only, `error` only); and with CR LF line endings (the parser's
 *   path, which refused the both-members shape already);
 * - a batch's stream (MCP 2025-03-26, requests 1 and 2): the response to 1, then the id-less
 *   message and the response to 2;
 * - a long-lived stream (`subscriptions/listen`, MCP 2026-07-28): notifications around it.
 * Expected: a request's stream: the events before it as the seller's bytes, then exactly the
 * gateway's `upstream_not_mcp` error event for the request's id (for the batch: for request 2, still awaited), none
 * of the seller's message; exchange line `local_error` / `upstream_not_mcp`, `bytes_to_host`
 * the host's bytes. The long-lived stream: the event dropped with the `standalone SSE stream:
 * event dropped` warning (reason `upstream_not_mcp`), the notifications pass, outcome `ok`.
 * Controls: notifications (one with `"level":"error"`, one with a nested `"result"` member),
 * a server request (id 99) and the response pass as the seller's bytes, outcome `ok`, on a
 * request's stream and on a batch's.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedBatchErrorFrames, expectedErrorFrame, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const BOTH_NO_ID = '{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}';
const RESULT_NO_ID = '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"no id"}]}}';
const ERROR_NO_ID = '{"jsonrpc":"2.0","error":{"code":-32603,"message":"no id"}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';
const LOG_ERROR = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"retrying"}}';
const NESTED_RESULT = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"result":"nested"}}';
const PING = '{"jsonrpc":"2.0","id":99,"method":"ping"}';
const own = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'own answer' }] });

/** A request's stream, by tool name: the seller's events before the response to the request. */
const BEFORE: Record<string, readonly string[]> = {
  both_no_id: [BOTH_NO_ID],
  note_then_both_no_id: [NOTE, BOTH_NO_ID],
  result_no_id: [NOTE, RESULT_NO_ID],
  error_no_id: [ERROR_NO_ID],
  both_no_id_crlf: [NOTE, BOTH_NO_ID],
  control: [NOTE, LOG_ERROR, NESTED_RESULT, PING],
};
/** The events of BEFORE[tool] that reach the host before the error (the ones before the id-less message). */
const FORWARDED: Record<string, string> = {
  both_no_id: '',
  note_then_both_no_id: frame(NOTE),
  result_no_id: frame(NOTE),
  error_no_id: '',
  // Parsed events go out re-encoded, with LF line endings.
  both_no_id_crlf: frame(NOTE),
};

const BATCH = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]';
const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
/** A batch's stream, by the `x-case` header: its events. */
const BATCH_STREAMS: Record<string, readonly string[]> = {
  both_no_id: [R1, BOTH_NO_ID, R2],
  result_no_id: [R1, RESULT_NO_ID, R2],
  control: [NOTE, LOG_ERROR, R1, NESTED_RESULT, R2],
};

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string; case?: string } };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (Array.isArray(msg)) {
      res.end(BATCH_STREAMS[String(req.headers['x-case'])]!.map(frame).join(''));
      return;
    }
    if (msg.method === 'subscriptions/listen') {
      // A long-lived stream: no response ends it, the seller does.
      res.end([NOTE, msg.params!.case === 'result' ? RESULT_NO_ID : BOTH_NO_ID, NOTE].map(frame).join(''));
      return;
    }
    const name = msg.params!.name!;
    const stream = [...BEFORE[name]!, own(msg.id!)].map(frame).join('');
    res.end(name.endsWith('_crlf') ? stream.replaceAll('\n', '\r\n') : stream);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const V2025_06_18 = { 'mcp-protocol-version': '2025-06-18' };
const summary = (line: LogLine): Record<string, unknown> => ({ outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host });

describe('a message with result and/or error and no id on a request\'s or a batch\'s SSE stream', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 10;
  for (const tool of Object.keys(FORWARDED)) {
    test(`${tool}: the events before it, then upstream_not_mcp for the request's id`, async () => {
      const rpcId = id++;
      const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, tool), V2025_06_18);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'text/event-stream');
      const expected = FORWARDED[tool]! + expectedErrorFrame({ id: rpcId, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp', upstreamStatus: 200 });
      assert.equal(r.text(), expected);
      assert.deepEqual(summary(await gw().exchangeLine('seller', rpcId)), { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('control: notifications (a "level":"error", a nested "result"), a server request and the response pass as the seller\'s bytes', async () => {
    const r = await rawPost(gw().agentUrl('seller'), toolCall('c-1', 'control'), V2025_06_18);
    assert.equal(r.text(), [...BEFORE.control!, own('c-1')].map(frame).join(''));
    assert.deepEqual(summary(await gw().exchangeLine('seller', 'c-1')), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  for (const name of ['both_no_id', 'result_no_id'] as const) {
    test(`batch, ${name}: the response to 1, then upstream_not_mcp for request 2, still awaited`, async () => {
      const seen = gw().lines.length;
      const r = await rawPost(gw().agentUrl('seller'), BATCH, { 'mcp-protocol-version': '2025-03-26', 'x-case': name });
      assert.equal(r.status, 200);
      assert.equal(r.text(), frame(R1) + expectedBatchErrorFrames([2], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
      const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen);
      assert.deepEqual(summary(line), { outcome: 'local_error', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }

  test('control, batch: notifications and both responses pass as the seller\'s bytes, outcome ok', async () => {
    const seen = gw().lines.length;
    const r = await rawPost(gw().agentUrl('seller'), BATCH, { 'mcp-protocol-version': '2025-03-26', 'x-case': 'control' });
    assert.equal(r.text(), BATCH_STREAMS.control!.map(frame).join(''));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.rpc_kind === 'batch' && gw().lines.indexOf(l) >= seen);
    assert.deepEqual(summary(line), { outcome: 'ok', reason: null, bytes_to_host: r.bytes });
  });

  for (const which of ['both', 'result'] as const) {
    test(`a long-lived stream (subscriptions/listen), ${which} without id: dropped with a warning, the notifications pass`, async () => {
      const rpcId = `l-${which}`;
      const seen = gw().lines.length;
      const r = await rawPost(gw().agentUrl('seller'), { jsonrpc: '2.0', id: rpcId, method: 'subscriptions/listen', params: { case: which } }, { 'mcp-protocol-version': '2026-07-28' });
      assert.equal(r.text(), frame(NOTE) + frame(NOTE));
      const warning = await gw().waitForLine((l) => l.msg === 'SSE stream: event dropped' && gw().lines.indexOf(l) >= seen);
      assert.deepEqual({ agent: warning.agent, reason: warning.reason }, { agent: 'seller', reason: 'upstream_not_mcp' });
      assert.deepEqual(summary(await gw().exchangeLine('seller', rpcId)), { outcome: 'ok', reason: 'upstream_not_mcp', bytes_to_host: r.bytes });
    });
  }
});
