/**
 * Regression (a new user's trial 8, F3): member names that differ from a judged name only in
 * case got past the "Names are unique" rule and the standalone GET stream's rule. Go's
 * encoding/json, the MCP Go SDK's decoder, matches member names to its struct fields
 * case-insensitively, the last match winning (golang/go#43664: `{"dist":"ok","Dist":"KO"}`
 * reads `KO`). So `{"jsonrpc":"2.0","id":1,"ID":999,"result":{...}}` was accepted as the
 * answer to request 1 while a Go host reads id 999; `"result":{A},"RESULT":{B}` had the
 * gateway bound and rewrite A while a Go host reads B; and on the standalone GET stream
 * `{"jsonrpc":"2.0","ID":999,"Result":{...}}` went out unparsed (its bytes hold no `"result`),
 * which a Go host routes to its pending call 999.
 *
 * The rule now (docs/errors.md "Names are unique", `upstream_not_mcp`, `get_stream_response`):
 * a key equal to a judged name (`jsonrpc`, `id`, `method`, `result`, `error`; in `result`
 * `content`, `structuredContent`, `isError`, `resultType`; in a content item `text`, `type`)
 * only under ASCII case folding counts as a repeat of it, alone or beside it; a message with
 * `result` or `error` in any case is judged as a response.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, answering each tools/call (by tool
 * name, `N` the request's id) with the message below: as JSON, (a) `"id":N,"ID":999`,
 * (b) `"result":{...},"RESULT":{...}`, (c) a lone `"ID":999,"Result":{...}`, (d) `"Content"`
 * beside `content` in `result`, (e) `"I\u0044":999` beside `"id":N` (escaped: the parse path);
 * as one SSE event, (f) (a), (g) (b), (h) (d), (i) `"Text"` beside `text` in a content item;
 * (j) (c) then the real answer; (k) the same with CR LF line ends (the parser's path). A
 * 2025-03-26 batch of calls 20 and 21 answered on SSE: the response to 21, then
 * `{"ID":20,"Result":{...}}` (l). The standalone GET stream (m): notifications (one saying
 * "Result" in a value, one with a `"Params"` key), responses named in other cases, and a
 * message whose only method is `"Method"` (no method as `JSON.parse` reads it: no message to
 * every host, since a review: test/regressions/seller-message-without-kind-forwarded.test.ts).
 * Expectation: (a)-(k) exactly the gateway's `upstream_not_mcp` error for id N (HTTP 200,
 * upstream_status 200) as the JSON body or the stream's one event, outcome local_error;
 * (l) the event for 21 as sent, then the error for 20; (m) only the notifications, as the
 * seller sent them, each response and the `"Method"` message dropped `get_stream_response`
 * (the warning and the metric).
 * Controls: the same messages with every name as written pass byte for byte, outcome ok.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { assertToolCallPassed, assertToolCallUpstreamNotMcp } from '../helpers/upstream-not-mcp.js';
import { assertGetStreamDrops } from '../helpers/drop-lines.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const crlfFrame = (data: string): string => `event: message\r\ndata: ${data}\r\n\r\n`;
const JSONRPC = '"jsonrpc":"2.0"';
const OWN = '{"content":[{"type":"text","text":"own answer"}]}';
const OTHER = `{"content":[{"type":"text","text":"${'G'.repeat(900)}"}]}`;
const RESULT = `"result":${OWN}`;

/** The seller's message answering request `id`, by tool name. */
const MESSAGES: Record<string, (id: number) => string> = {
  json_id_then_ID: (id) => `{${JSONRPC},"id":${id},"ID":999,${RESULT}}`,
  json_result_then_RESULT: (id) => `{${JSONRPC},"id":${id},${RESULT},"RESULT":${OTHER}}`,
  json_lone_ID_Result: () => `{${JSONRPC},"ID":999,"Result":${OTHER}}`,
  json_Content_in_result: (id) => `{${JSONRPC},"id":${id},"result":{"content":[],"Content":[{"type":"text","text":"other"}]}}`,
  json_escaped_ID: (id) => `{${JSONRPC},"id":${id},"I\\u0044":999,${RESULT}}`,
  sse_id_then_ID: (id) => `{${JSONRPC},"id":${id},"ID":999,${RESULT}}`,
  sse_result_then_RESULT: (id) => `{${JSONRPC},"id":${id},${RESULT},"RESULT":${OTHER}}`,
  sse_Content_in_result: (id) => `{${JSONRPC},"id":${id},"result":{"content":[],"Content":[{"type":"text","text":"other"}]}}`,
  sse_Text_in_item: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"own answer","Text":"other"}]}}`,
  sse_lone_ID_Result: () => `{${JSONRPC},"ID":999,"Result":${OTHER}}`,
  sse_lone_ID_Result_crlf: () => `{${JSONRPC},"ID":999,"Result":${OTHER}}`,
  json_control: (id) => `{${JSONRPC},"id":${id},"Params":{},${RESULT}}`,
  sse_control: (id) => `{${JSONRPC},"id":${id},"result":{"content":[{"type":"text","text":"own answer"}],"structuredContent":{"ID":1,"Result":2}}}`,
};

/** The GET stream: [data, forwarded?]. */
const GET_EVENTS: ReadonlyArray<readonly [string, boolean]> = [
  ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"Result: ok"}}', true],
  [`{${JSONRPC},"ID":999,"Result":${OTHER}}`, false],
  ['{"jsonrpc":"2.0","method":"notifications/message","Params":{"level":"info","data":"x"}}', true],
  // No `method` as `JSON.parse` reads it (the TypeScript and Python SDK clients fail to parse
  // it), though a Go host reads `"Method"` as one: no message to every host, dropped (a review:
  // test/regressions/seller-message-without-kind-forwarded.test.ts; it went out before).
  ['{"jsonrpc":"2.0","Method":"notifications/message","params":{"level":"info","data":"x"}}', false],
  [`{${JSONRPC},"id":7,"ERROR":{"code":-32603,"message":"boom"}}`, false],
  [`[{${JSONRPC},"Id":3,"rEsult":{}}]`, false],
  [`{${JSONRPC},"id":8,"R\\u0065sult":{}}`, false],
  ['{"jsonrpc":"2.0","id":"srv-1","method":"ping"}', true],
];
const CRLF_GET_EVENT = `{${JSONRPC},"Id":4,"Error":{"code":1,"message":"m"}}`;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(GET_EVENTS.map(([data]) => frame(data)).join('') + crlfFrame(CRLF_GET_EVENT));
      return;
    }
    const parsed = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } } | Array<{ id: number }>;
    if (Array.isArray(parsed)) {
      const [a, b] = [parsed[0]!.id, parsed[1]!.id];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(frame(`{${JSONRPC},"id":${b},${RESULT}}`) + frame(`{${JSONRPC},"ID":${a},"Result":${OWN}}`));
    }
    const name = parsed.params.name;
    const message = MESSAGES[name]!(parsed.id);
    if (!name.startsWith('sse_')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(message);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const real = `{${JSONRPC},"id":${parsed.id},${RESULT}}`;
    if (name === 'sse_lone_ID_Result_crlf') return void res.end(crlfFrame(message) + crlfFrame(real));
    res.end(frame(message) + (name === 'sse_lone_ID_Result' ? frame(real) : ''));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };


describe('member names that differ from a judged name only in case are repeats (Go hosts read them as the name)', { timeout: TEST_TIMEOUT_MS }, () => {
  const toolCases: Array<[string, number]> = [
    ['json_id_then_ID', 7],
    ['json_result_then_RESULT', 8],
    ['json_lone_ID_Result', 9],
    ['json_Content_in_result', 10],
    ['json_escaped_ID', 11],
    ['sse_id_then_ID', 12],
    ['sse_result_then_RESULT', 13],
    ['sse_Content_in_result', 14],
    ['sse_Text_in_item', 15],
    ['sse_lone_ID_Result', 16],
    ['sse_lone_ID_Result_crlf', 17],
  ];
  for (const [tool, id] of toolCases) {
    test(`${tool}: upstream_not_mcp for the request's id`, async () => {
      await assertToolCallUpstreamNotMcp(gw(), tool, id, HEADERS);
    });
  }

  test('a batch answered on SSE with `"ID":20,"Result"`: the event for 21, then upstream_not_mcp for request 20, still awaited', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(20, 'a'), toolCall(21, 'b')]);
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(`{${JSONRPC},"id":21,${RESULT}}`) + expectedBatchErrorFrames([batchToolCall(20, 'a')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
    const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch');
    assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
  });

  test('the standalone GET stream: notifications pass as sent; responses named in any case are dropped get_stream_response', async () => {
    await assertGetStreamDrops(gw(), 'seller', HEADERS, GET_EVENTS.filter(([, kept]) => kept).map(([data]) => frame(data)).join(''), GET_EVENTS.filter(([, kept]) => !kept).length + 1);
  });

  for (const [tool, id] of [['json_control', 40], ['sse_control', 41]] as const) {
    test(`control: ${tool}, every judged name as written (other names in any case), passes byte for byte`, async () => {
      const message = MESSAGES[tool]!(id);
      await assertToolCallPassed(gw(), tool, id, HEADERS, tool === 'sse_control' ? frame(message) : message);
    });
  }
});
