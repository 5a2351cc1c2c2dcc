/**
 * Regression: a seller's message for the call's own id that is not a well-formed JSON-RPC 2.0
 * response was forwarded as the call's answer, logged ok.
 *
 * Reported failure (a new user's trial 8, F5 and F13): `"error":{"code":"x","message":5}`,
 * an error without `code` or `message`, an `error` that is a string, null or an array, a
 * fractional `code`, a `result` that is null, a string or an array reached the host as the
 * answer on JSON and on SSE; on SSE `"jsonrpc":"1.0"` or no `jsonrpc` too (the JSON path
 * refused those), and `{"jsonrpc":"2.0","id":1}` (neither `result` nor `error`) went out, then
 * the stream ended `upstream_reset`, where a JSON body is `upstream_not_mcp`. Over SSE the MCP
 * SDK client dropped such a message and the call hung until its own timeout. JSON-RPC 2.0
 * §5, §5.1: a response has `jsonrpc` "2.0" and exactly one of `result` and `error`, an error an
 * integer `code` and a string `message`; every MCP result is an object.
 *
 * Input: a raw seller answers `tools/call` of tool `<json|sse>_<k>` with BAD[k] for the call's
 * id, as a JSON body or as one SSE event; a 2025-03-26 batch of calls 40 and 41 answered (SSE,
 * then JSON) with `[<result null for 40>, <a good response for 41>]`; a real MCP SDK 1.x client
 * (short request timeout) calling tools that get a malformed error on SSE, `"jsonrpc":"1.0"` on
 * SSE, and a malformed error as JSON.
 * Expectation: each BAD case on each path is exactly the gateway's `upstream_not_mcp` error for
 * the call's id (HTTP 200, upstream_status 200), outcome local_error; the batches get the error
 * for each of their requests; the SDK client's call resolves with the gateway's tool error
 * (isError, adcp_error SERVICE_UNAVAILABLE, reason upstream_not_mcp) instead of rejecting.
 * Controls: a well-formed error and a well-formed result pass on both paths, outcome ok.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { batchToolCall, expectedBatchErrorFrames, expectedBatchErrorJson, expectedErrorFrame, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;

/** Messages for the call's own id (`$ID`) that are no well-formed response. */
const BAD: readonly string[] = [
  '{"jsonrpc":"2.0","id":$ID,"error":{"code":"x","message":5}}',
  '{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000}}',
  '{"jsonrpc":"2.0","id":$ID,"error":{"message":"m"}}',
  '{"jsonrpc":"2.0","id":$ID,"error":"boom"}',
  '{"jsonrpc":"2.0","id":$ID,"error":null}',
  '{"jsonrpc":"2.0","id":$ID,"error":[]}',
  '{"jsonrpc":"2.0","id":$ID,"error":{"code":1.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":$ID,"result":null}',
  '{"jsonrpc":"2.0","id":$ID,"result":"ok"}',
  '{"jsonrpc":"2.0","id":$ID,"result":[]}',
  '{"jsonrpc":"2.0","id":$ID}',
  '{"jsonrpc":"1.0","id":$ID,"result":{"content":[]}}',
  '{"id":$ID,"result":{"content":[]}}',
  '{"jsonrpc":2,"id":$ID,"result":{"content":[]}}',
  // Keys written with an escape: judged on the parsed message, not the scan's members.
  '{"jsonrpc":"2.0","id":$ID,"\\u0072esult":null}',
  '{"jsonrpc":"2.0","\\u0069d":$ID}',
  '{"\\u006asonrpc":"1.0","id":$ID,"result":{"content":[]}}',
];

/** Well-formed answers: forwarded as they are. */
const GOOD: readonly string[] = [
  '{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000,"message":"seller failed","data":{"x":1}}}',
  '{"jsonrpc":"2.0","id":$ID,"result":{"content":[{"type":"text","text":"ok"}]}}',
];

const fill = (template: string, id: number | string): string => template.replace('$ID', JSON.stringify(id));
const BATCH_BAD = '{"jsonrpc":"2.0","id":40,"result":null}';
const BATCH_GOOD = '{"jsonrpc":"2.0","id":41,"result":{"content":[]}}';

/** The message template a tool name asks for: `<json|sse>_<bad|good>_<k>`, or one of the SDK tools. */
function templateOf(name: string): [json: boolean, template: string] {
  const [path, set, k] = name.split('_') as [string, string, string];
  return [path === 'json', (set === 'good' ? GOOD : BAD)[Number(k)]!];
}

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string; protocolVersion?: string } } | unknown[];
    if (Array.isArray(msg)) {
      const body = `[${BATCH_BAD},${BATCH_GOOD}]`;
      const sse = (msg[0] as { params: { name: string } }).params.name === 'sse';
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      return void res.end(sse ? frame(body) : body);
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    if (msg.method === 'initialize') {
      const result = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'malformed', version: '1' } };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    }
    const [json, template] = templateOf(msg.params!.name!);
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'text/event-stream' });
    res.end(json ? fill(template, msg.id) : frame(fill(template, msg.id)));
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;
const HEADERS = { 'mcp-protocol-version': '2025-06-18' };

describe('a malformed response for the call\'s own id is upstream_not_mcp on JSON and SSE', { timeout: TEST_TIMEOUT_MS }, () => {
  let id = 100;
  for (const path of ['json', 'sse'] as const) {
    BAD.forEach((template, k) => {
      test(`${path}: ${template}`, async () => {
        const rpcId = ++id;
        const tool = `${path}_bad_${k}`;
        const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, tool), HEADERS);
        const expected = { id: rpcId, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
        assert.equal(r.status, 200);
        assert.equal(r.text(), path === 'json' ? expectedErrorJson(expected) : expectedErrorFrame(expected));
        const line = await gw().exchangeLine('seller', rpcId);
        assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
      });
    });
    GOOD.forEach((template, k) => {
      test(`control, ${path}: ${template} passes`, async () => {
        const rpcId = ++id;
        const r = await rawPost(gw().agentUrl('seller'), toolCall(rpcId, `${path}_good_${k}`), HEADERS);
        assert.equal(r.status, 200);
        assert.equal(r.text(), path === 'json' ? fill(template, rpcId) : frame(fill(template, rpcId)));
        const line = await gw().exchangeLine('seller', rpcId);
        assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
      });
    });
  }

  for (const path of ['sse', 'json'] as const) {
    test(`a batch answered (${path}) with a null result for one of its ids: upstream_not_mcp for each request`, async () => {
      const calls = [batchToolCall(40, path), batchToolCall(41, path)];
      const r = await rawPost(gw().agentUrl('seller'), [toolCall(40, path), toolCall(41, path)]);
      assert.equal(r.status, 200);
      const e = { reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
      assert.equal(r.text(), path === 'sse' ? expectedBatchErrorFrames(calls, e) : expectedBatchErrorJson(calls, e));
      const line = await gw().waitForLine((l) => l.msg === 'exchange' && l.agent === 'seller' && l.rpc_kind === 'batch' && l.reason === 'upstream_not_mcp', 5_000);
      assert.equal(line.outcome, 'local_error');
    });
  }
});

describe('the MCP SDK client gets an error for a malformed answer instead of waiting for its timeout', { timeout: TEST_TIMEOUT_MS }, () => {
  let client: Client | undefined;
  after(async () => {
    await client?.close();
  });

  // BAD[0]: a malformed error; BAD[11]: `"jsonrpc":"1.0"`.
  for (const tool of ['sse_bad_0', 'sse_bad_11', 'json_bad_0', 'sse_bad_10']) {
    test(`${tool}: callTool resolves with the gateway's upstream_not_mcp tool error`, async () => {
      if (client === undefined) {
        client = new Client({ name: 'malformed-answer-test', version: '1' });
        await withTimeout(client.connect(new StreamableHTTPClientTransport(new URL(gw().agentUrl('seller')))), 5_000, 'connect');
      }
      // A short request timeout: before the fix the SSE calls rejected with its McpError (-32001, Request timed out).
      const result = (await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 2_000 })) as {
        isError?: boolean;
        structuredContent?: { adcp_error?: { code?: string; details?: { reason?: string } } };
      };
      assert.equal(result.isError, true);
      assert.deepEqual({ code: result.structuredContent?.adcp_error?.code, reason: result.structuredContent?.adcp_error?.details?.reason }, { code: 'SERVICE_UNAVAILABLE', reason: 'upstream_not_mcp' });
    });
  }
});
