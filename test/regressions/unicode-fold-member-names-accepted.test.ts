/**
 * Regression (a new user's trial 8, F3 (residual)): member names equal to a judged name only
 * under Unicode simple case folding got past the "Names are unique" rule and the standalone
 * GET stream's rule. Go's encoding/json, the MCP Go SDK's decoder, matches member names to its
 * struct fields with bytes.EqualFold (golang/go#43664), which folds more than ASCII case: `ſ`
 * (U+017F, UTF-8 C5 BF) folds to `s` and `K` (U+212A, E2 84 AA) to `k`. The gateway counted
 * `"ID"`, `"Result"`, `"Content"` as repeats (test/regressions/case-variant-member-names-accepted.test.ts)
 * but not `"reſult"`, `"iſError"`, `"jſonrpc"`, `"ſtructuredContent"`, `"reſultType"`: so
 * `"result":{A},"reſult":{B}` had the gateway bound and rewrite A while a Go host reads B,
 * `"isError":false,"iſError":true` passed as a success that a Go host reads as a tool error,
 * and `{"jsonrpc":"2.0","id":5,"reſult":{...}}` went out on the standalone GET stream (its bytes
 * hold no `"result`), which a Go host routes to its pending call 5. And on a request's SSE
 * stream, `{"jsonrpc":"2.0","ID":1}` (a case variant of `id`, no `method`, no `result`/`error`)
 * went out, raw, where `{"jsonrpc":"2.0","id":1}` ends the stream `upstream_not_mcp`: a Go host
 * reads it as a message with id 1 and no method, a response.
 *
 * The rule now (docs/errors.md "Names are unique", `upstream_not_mcp`, `get_stream_response`): a
 * key equal to a judged name under Go's folding (ASCII case, `ſ` as `s`, `K` as `k`) counts as a
 * repeat of it wherever an ASCII case variant does; on a request's stream a message with no
 * `method` in any case and the request's id under a case variant of `id` claims the answer.
 *
 * Input: a raw seller on 127.0.0.1 behind the real gateway, answering each tools/call (by tool
 * name, `N` the request's id) with the message below, as JSON for a tool named `json_…`, as one
 * SSE event otherwise (then the real answer for `…_then_real`); a 2025-03-26 batch of calls 20
 * and 21 answered as JSON (an element with `"reſult"` beside `"result"`) and on SSE (the
 * response to 21, then `{"ID":20,"Reſult":{...}}`); the standalone GET stream: notifications and
 * responses named with `ſ`, canonical blocks (the raw path) and CR LF ones (the parser's).
 * Expectation: exactly the gateway's `upstream_not_mcp` error for id N (HTTP 200) as the JSON
 * body or the stream's one event, outcome local_error; the batch's errors for each request
 * still awaited; on the GET stream only the notifications, each response dropped
 * `get_stream_response`. Controls, byte for byte, outcome ok: names that are no judged name
 * under any folding (`"reſults"`, `"ſtatus"`, `"Kind"` with a Kelvin sign, `"café"`), judged
 * names with `ſ` deeper than the judged objects. `{"jsonrpc":"2.0","ID":999}` (another id) was
 * a control here, forwarded as `{"jsonrpc":"2.0","id":999}` was; both are `upstream_not_mcp`
 * now, a message with an id and no method being a response as a Go host reads it (hostile
 * trials: test/regressions/id-only-message-on-request-stream-passes.test.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedBatchErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
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
/** `ſ` (U+017F LATIN SMALL LETTER LONG S, C5 BF) and `K` (U+212A KELVIN SIGN, E2 84 AA). */
const LONG_S = '\u017f';
const KELVIN = '\u212a';
const item = '{"type":"text","text":"own answer"}';

/** The seller's message answering request `id`, by tool name. */
const MESSAGES: Record<string, (id: number) => string> = {
  json_result_then_reſult: (id) => `{${JSONRPC},"id":${id},${RESULT},"re${LONG_S}ult":${OTHER}}`,
  json_REſULT: (id) => `{${JSONRPC},"id":${id},${RESULT},"RE${LONG_S}ULT":${OTHER}}`,
  json_isError_then_iſError: (id) => `{${JSONRPC},"id":${id},"result":{"content":[${item}],"isError":false,"i${LONG_S}Error":true}}`,
  json_jſonrpc: (id) => `{${JSONRPC},"id":${id},"j${LONG_S}onrpc":"1.0",${RESULT}}`,
  json_ſtructuredContent: (id) => `{${JSONRPC},"id":${id},"result":{"content":[${item}],"structuredContent":{"a":1},"${LONG_S}tructuredContent":{"a":2}}}`,
  json_reſultType: (id) => `{${JSONRPC},"id":${id},"result":{"content":[${item}],"resultType":"complete","re${LONG_S}ultType":"task"}}`,
  sse_result_then_reſult: (id) => `{${JSONRPC},"id":${id},${RESULT},"re${LONG_S}ult":${OTHER}}`,
  sse_isError_then_iſError: (id) => `{${JSONRPC},"id":${id},"result":{"content":[${item}],"isError":false,"i${LONG_S}Error":true}}`,
  sse_jſonrpc: (id) => `{${JSONRPC},"id":${id},"j${LONG_S}onrpc":"1.0",${RESULT}}`,
  sse_lone_reſult_other_id_then_real: () => `{${JSONRPC},"id":999,"re${LONG_S}ult":${OTHER}}`,
  sse_reſult_without_id_then_real: () => `{${JSONRPC},"Re${LONG_S}ult":${OTHER}}`,
  sse_ID_without_method_then_real: (id) => `{${JSONRPC},"ID":${id}}`,
  sse_Id_without_method_crlf_then_real: (id) => `{${JSONRPC},"Id":${id}}`,
  json_control: (id) => `{${JSONRPC},"id":${id},"re${LONG_S}ults":1,"${LONG_S}tatus":"ok","${KELVIN}ind":"x","café":2,"result":{"content":[${item}],"re${LONG_S}ults":1,"i${LONG_S}Errors":0}}`,
  sse_control: (id) =>
    `{${JSONRPC},"id":${id},"re${LONG_S}ults":1,"${KELVIN}ind":"x","result":{"content":[{"type":"text","text":"own answer","${LONG_S}ext":"t"}],"structuredContent":{"re${LONG_S}ult":1,"i${LONG_S}Error":true}}}`,
  sse_ID_other_id_then_real: () => `{${JSONRPC},"ID":999}`,
};

/** The GET stream: [data, forwarded?]. */
const GET_EVENTS: ReadonlyArray<readonly [string, boolean]> = [
  [`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"re${LONG_S}ult: ok"}}`, true],
  [`{${JSONRPC},"id":5,"re${LONG_S}ult":${OTHER}}`, false],
  [`{"jsonrpc":"2.0","method":"notifications/message","params":{"re${LONG_S}ult":1,"${KELVIN}":2}}`, true],
  [`{${JSONRPC},"id":6,"RE${LONG_S}ULT":{}}`, false],
  [`[{${JSONRPC},"id":7,"re${LONG_S}ult":{}}]`, false],
];
const CRLF_GET_EVENT = `{${JSONRPC},"id":8,"Re${LONG_S}ult":{}}`;

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(GET_EVENTS.map(([data]) => frame(data)).join('') + crlfFrame(CRLF_GET_EVENT));
      return;
    }
    const parsed = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } } | Array<{ id: number; params: { name: string } }>;
    if (Array.isArray(parsed)) {
      const [a, b] = [parsed[0]!.id, parsed[1]!.id];
      if (parsed[0]!.params.name === 'json_batch') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(`[{${JSONRPC},"id":${a},${RESULT},"re${LONG_S}ult":${OTHER}},{${JSONRPC},"id":${b},${RESULT}}]`);
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(frame(`{${JSONRPC},"id":${b},${RESULT}}`) + frame(`{${JSONRPC},"ID":${a},"Re${LONG_S}ult":${OWN}}`));
    }
    const name = parsed.params.name;
    const message = MESSAGES[name]!(parsed.id);
    if (name.startsWith('json_')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(message);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const real = name.endsWith('_then_real') ? frame(`{${JSONRPC},"id":${parsed.id},${RESULT}}`) : '';
    res.end((name.includes('_crlf') ? crlfFrame(message) : frame(message)) + real);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };
const BATCH_HEADERS = { 'mcp-protocol-version': '2025-03-26' };


describe('member names equal to a judged name under Go\'s case folding (ſ as s, K as k) are repeats', { timeout: TEST_TIMEOUT_MS }, () => {
  const toolCases: Array<[string, number]> = [
    ['json_result_then_reſult', 7],
    ['json_REſULT', 8],
    ['json_isError_then_iſError', 9],
    ['json_jſonrpc', 10],
    ['json_ſtructuredContent', 11],
    ['json_reſultType', 12],
    ['sse_result_then_reſult', 13],
    ['sse_isError_then_iſError', 14],
    ['sse_jſonrpc', 15],
    ['sse_lone_reſult_other_id_then_real', 16],
    ['sse_reſult_without_id_then_real', 17],
    ['sse_ID_without_method_then_real', 18],
    ['sse_Id_without_method_crlf_then_real', 19],
  ];
  for (const [tool, id] of toolCases) {
    test(`${tool}: upstream_not_mcp for the request's id`, async () => {
      await assertToolCallUpstreamNotMcp(gw(), tool, id, HEADERS);
    });
  }

  test('a batch answered as JSON with `"reſult"` beside `"result"` in an element: upstream_not_mcp for each request', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(20, 'json_batch'), toolCall(21, 'b')], BATCH_HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), expectedBatchErrorJson([batchToolCall(20, 'json_batch'), batchToolCall(21, 'b')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });

  test('a batch answered on SSE with `"ID":30,"Reſult"`: the event for 31, then upstream_not_mcp for request 30, still awaited', async () => {
    const r = await rawPost(gw().agentUrl('seller'), [toolCall(30, 'sse_batch'), toolCall(31, 'b')], BATCH_HEADERS);
    assert.equal(r.status, 200);
    assert.equal(r.text(), frame(`{${JSONRPC},"id":31,${RESULT}}`) + expectedBatchErrorFrames([batchToolCall(30, 'sse_batch')], { reason: 'upstream_not_mcp', upstreamStatus: 200 }));
  });

  test('the standalone GET stream: notifications pass as sent; responses named with ſ are dropped get_stream_response', async () => {
    await assertGetStreamDrops(gw(), 'seller', HEADERS, GET_EVENTS.filter(([, kept]) => kept).map(([data]) => frame(data)).join(''), GET_EVENTS.filter(([, kept]) => !kept).length + 1);
  });

  for (const [tool, id] of [['json_control', 40], ['sse_control', 41]] as const) {
    test(`control: ${tool}, names no judged name under any folding (or deeper than judged), passes byte for byte`, async () => {
      const message = MESSAGES[tool]!(id);
      await assertToolCallPassed(gw(), tool, id, HEADERS, tool === 'sse_control' ? frame(message) : message);
    });
  }

  test('`{"jsonrpc":"2.0","ID":999}` on request 42\'s stream (another id) is upstream_not_mcp, as `"id":999` is', async () => {
    await assertToolCallUpstreamNotMcp(gw(), 'sse_ID_other_id_then_real', 42, HEADERS);
  });
});
