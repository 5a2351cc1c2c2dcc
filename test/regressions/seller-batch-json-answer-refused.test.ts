/**
 * Regression: a seller answering a single request with a JSON body that is a JSON-RPC batch
 * holding the response (`[{"jsonrpc":"2.0","id":N,"result":{...}}]`) got `upstream_not_mcp`
 * on MCP 2025-03-26, while the same array as an SSE event was the answer.
 *
 * Reported failure (a hostile new-user trial 13, L1): the MCP SDK client, straight to the
 * seller, took `[response]` as the call's result; through the gateway it got an
 * `upstream_not_mcp` tool error ending "the seller may have completed the operation, so re-read
 * its state before retrying" on every revision, and on 2025-03-26, whose transport lets
 * servers batch responses ("These responses MAY be batched"), the SSE path forwarded the same
 * array as the answer (docs/errors.md). Now both paths judge the array with one piece of code
 * (src/response/array-answer.ts): on 2025-03-26 it is the answer, the seller's bytes; on
 * 2025-06-18 and later it is still refused, on both paths, with a message saying why (batches
 * were removed in 2025-06-18).
 *
 * Input: a raw seller (127.0.0.1) answers `tools/call` of tool `<json|sse>_<case>` with an
 * array, as a JSON body or as one SSE event: `own` `[response]`, `note_own`
 * `[notification, response]`, `own_other` `[response, response to 999]`, `nested`
 * `[[response]]`; `initialize` gets the revision the client asked for.
 * Expectation: on 2025-03-26 (no MCP-Protocol-Version) `own` and `note_own` are the seller's
 * bytes on both paths, outcome ok; `own_other` and `nested` are exactly `upstream_not_mcp` on
 * both; on 2025-06-18 and 2025-11-25 `own` is exactly `upstream_not_mcp` with the message
 * naming the removal, on both paths. A real MCP SDK client negotiating 2025-03-26 gets the
 * result (`hello`) of a JSON `[response]` through the gateway (an SSE event holding an array
 * it never reads, straight from the seller too); one on 2025-06-18 gets the tool error with
 * that message, JSON and SSE.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorFrame, expectedErrorJson, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { connectClient } from '../helpers/client.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const response = (id: number | string): string => toolResponse(id, { content: [{ type: 'text', text: 'hello' }] });
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}';

/** The array each case answers with, for the call's id. */
const CASES: Readonly<Record<string, (id: number | string) => string>> = {
  own: (id) => `[${response(id)}]`,
  note_own: (id) => `[${NOTE},${response(id)}]`,
  own_other: (id) => `[${response(id)},${response(999)}]`,
  nested: (id) => `[[${response(id)}]]`,
};

/** The message the gateway's error carries for such an array on a revision without batches. */
const BATCH_REMOVED =
  "The seller answered with a JSON-RPC batch (an array), which the host's MCP revision does not have: batches were removed in 2025-06-18" +
  '; the seller may have completed the operation, so re-read its state before retrying.';

function startSeller(): Promise<RawSeller> {
  return startRawSeller((req, res) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    const msg = JSON.parse(req.body.toString('utf8')) as { id?: number; method?: string; params?: { name?: string; protocolVersion?: string } };
    if (msg.id === undefined) return void res.writeHead(202).end();
    if (msg.method === 'initialize') {
      const result = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'batching', version: '1' } };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    }
    const name = msg.params!.name!;
    const sse = name.startsWith('sse_');
    const body = CASES[name.slice(name.indexOf('_') + 1)]!(msg.id);
    res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
    res.end(sse ? frame(body) : body);
  });
}

const stack = useSellerAndGateway(startSeller, (seller) => startObservedGateway(agentsYaml({ seller: seller.url })));
const gw = (): ObservedGateway => stack.gateway;

let nextId = 100;

describe('a JSON-RPC batch answering a single request: the JSON and SSE paths agree', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const path of ['json', 'sse'] as const) {
    for (const name of ['own', 'note_own']) {
      test(`2025-03-26, ${path}: ${name} is the answer, the seller's bytes, outcome ok`, async () => {
        const id = ++nextId;
        const r = await rawPost(gw().agentUrl('seller'), toolCall(id, `${path}_${name}`));
        assert.equal(r.status, 200);
        assert.equal(r.headers.get('content-type'), path === 'json' ? 'application/json' : 'text/event-stream');
        assert.equal(r.text(), path === 'json' ? CASES[name]!(id) : frame(CASES[name]!(id)));
        const line = await gw().exchangeLine('seller', id);
        assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'ok', reason: null });
      });
    }
    for (const name of ['own_other', 'nested']) {
      test(`2025-03-26, ${path}: ${name} is upstream_not_mcp`, async () => {
        const id = ++nextId;
        const tool = `${path}_${name}`;
        const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool));
        const e = { id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200 };
        assert.equal(r.status, 200);
        assert.equal(r.text(), path === 'json' ? expectedErrorJson(e) : expectedErrorFrame(e));
        const line = await gw().exchangeLine('seller', id);
        assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
      });
    }
    for (const version of ['2025-06-18', '2025-11-25']) {
      test(`${version}, ${path}: own is upstream_not_mcp, the message saying batches were removed in 2025-06-18`, async () => {
        const id = ++nextId;
        const tool = `${path}_own`;
        const r = await rawPost(gw().agentUrl('seller'), toolCall(id, tool), { 'mcp-protocol-version': version });
        const e = { id, method: 'tools/call', toolName: tool, reason: 'upstream_not_mcp' as const, upstreamStatus: 200, cause: 'batch_removed' as const };
        assert.equal(r.status, 200);
        const text = r.text();
        const json = path === 'json' ? text : text.slice(text.indexOf('data: ') + 6, text.lastIndexOf('\n\n'));
        const err = (JSON.parse(json) as { result: { structuredContent: { adcp_error: { message: string } } } }).result.structuredContent.adcp_error;
        assert.equal(err.message, BATCH_REMOVED);
        assert.equal(text, path === 'json' ? expectedErrorJson(e) : expectedErrorFrame(e));
        const line = await gw().exchangeLine('seller', id);
        assert.deepEqual({ outcome: line.outcome, reason: line.reason }, { outcome: 'local_error', reason: 'upstream_not_mcp' });
      });
    }
  }
});

describe('the MCP SDK client through the gateway', { timeout: TEST_TIMEOUT_MS }, () => {
  const call = async (client: Client, tool: string): Promise<unknown> => withTimeout(client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 5_000 }), 8_000, tool);

  // JSON only: the SDK client (1.x) parses an SSE event's data as one message, so it never
  // reads an array event, through the gateway or straight from the seller.
  test('on 2025-03-26 gets the result of a batched JSON answer, as straight from the seller', async () => {
    const client = await connectClient(gw().agentUrl('seller'), { protocolVersion: '2025-03-26' });
    stack.closeAfter(client);
    for (const tool of ['json_own', 'json_note_own']) {
      assert.deepEqual(await call(client, tool), { content: [{ type: 'text', text: 'hello' }] }, tool);
    }
  });

  test('on 2025-06-18 gets the tool error saying batches were removed', async () => {
    const client = await connectClient(gw().agentUrl('seller'), { protocolVersion: '2025-06-18' });
    stack.closeAfter(client);
    for (const tool of ['json_own', 'sse_own']) {
      const r = (await call(client, tool)) as { isError?: boolean; structuredContent?: { adcp_error?: { message?: string; details?: { reason?: string } } } };
      assert.equal(r.isError, true, tool);
      assert.equal(r.structuredContent?.adcp_error?.details?.reason, 'upstream_not_mcp', tool);
      assert.equal(r.structuredContent?.adcp_error?.message, BATCH_REMOVED, tool);
    }
  });
});
