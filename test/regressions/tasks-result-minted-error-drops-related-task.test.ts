/**
 * Reported failure (hostile trial 39, item 1, Low): the tool error result the gateway mints
 * for a `tasks/result` whose answer broke a bound (RESPONSE_TOO_LARGE `raw_bytes`,
 * `sse_cumulative`, ...) had no `_meta["io.modelcontextprotocol/related-task"]`, while the
 * seller's own `tasks/result` answers carry it. MCP 2025-11-25, Tasks, "Related Task
 * Metadata": "The `tasks/result` operation **MUST** include this metadata in its response, as
 * the result structure itself does not contain the task ID."
 *
 * Now the request peek reads a `tasks/result`'s `params.taskId` (request/peek.ts: a string of
 * at most MAX_TASK_ID_CHARS characters, by the parse and by the scan of a body of 1 KiB or
 * more), and the tool error result minted for it (mcp/local-error.ts
 * localErrorMessageOfForm), as a JSON body or as the final SSE event, ends with
 * `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":<params.taskId>}}`. Without
 * such a taskId (a number, one over the bound, a stream resumed with `Last-Event-ID`, whose
 * token carries the method but not the taskId) the error has no `_meta`, as before. A
 * `tools/call`'s error is unchanged.
 *
 * Input: a raw seller behind the real gateway (`max_response_bytes: 1000`), answering each
 * `tasks/result` (host on 2025-11-25) over the limit: a JSON body, or an SSE stream of one
 * notification and an over-limit response, or (a resume) one event with an id and a dropped
 * connection, the resuming GET then answered over the limit. Expectation: the host's exact
 * bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { finalSseError, rawPost, sseIds } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { SDK_ID } from '../../src/version.js';

const LIMIT = 1000;
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
/** The seller's over-limit answer to request `id`: a tool result of 1,500 bytes, its own `_meta` naming `taskId`. */
const overLimit = (id: number, taskId: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(1_500) }], _meta: { 'io.modelcontextprotocol/related-task': { taskId } } } });
const STATUS = 'id: e1\ndata: {"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t-sse","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}\n\n';

/** The id of the last `tasks/result` the seller saw for `t-resumed`: its resumed stream answers it. */
let resumedId = 0;

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${overLimit(resumedId, 't-resumed')}\n\n`);
        return void res.end();
      }
      const call = JSON.parse(req.body.toString('utf8')) as { id: number; method: string; params: { taskId?: unknown } };
      const taskId = typeof call.params.taskId === 'string' ? call.params.taskId : 'none';
      if (taskId === 't-sse' || taskId === 't-resumed') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(STATUS);
        if (taskId === 't-resumed') {
          resumedId = call.id;
          return void setTimeout(() => res.destroy(), 20);
        }
        res.write(`data: ${overLimit(call.id, taskId)}\n\n`);
        return void res.end();
      }
      // Chunked (no Content-Length): the bound breaks on the bytes read, `raw_bytes`.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(overLimit(call.id, taskId));
      res.end();
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: LIMIT, backoff_after_breaches: 0 } }, RESUME_YAML)),
);

/** The AdCP error's text for `reason` and `observed` bytes (a tool that may have run: no name known). */
function adcpError(reason: string, observed: number): string {
  const what = reason === 'sse_cumulative' ? `The seller's SSE stream exceeded the ${LIMIT}-byte limit in total` : `The seller's response exceeded the ${LIMIT}-byte limit`;
  const message = `${what}; the seller may have completed the operation, so re-read its state before retrying.`;
  return `{"code":"RESPONSE_TOO_LARGE","message":${JSON.stringify(message)},"recovery":"correctable","source":"sdk","sdk_id":"${SDK_ID}","details":{"reason":"${reason}","limit_bytes":${LIMIT},"observed_bytes":${observed}}}`;
}

/** The minted message for request `id`: a tool error result, with `_meta` naming `taskId` when given. */
function minted(id: number, reason: string, observed: number, taskId?: string): string {
  const err = adcpError(reason, observed);
  const message = (JSON.parse(err) as { message: string }).message;
  const meta = taskId === undefined ? '' : `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":${JSON.stringify(taskId)}}}`;
  return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(`{"adcp_error":${err}}`)}},{"type":"text","text":${JSON.stringify(message)}}],"isError":true,"structuredContent":{"adcp_error":${err}}${meta}}}`;
}

/** The seller's JSON answer's length for request `id` and `taskId` (what the gateway counted). */
const sellerBytes = (id: number, taskId: string): number => Buffer.byteLength(overLimit(id, taskId));

let nextId = 100;

async function tasksResult(params: string): Promise<{ id: number; text: string }> {
  const id = nextId++;
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), `{"jsonrpc":"2.0","id":${id},"method":"tasks/result","params":${params}}`, HEADERS));
  assert.equal(r.status, 200);
  return { id, text: r.text() };
}

describe('the tool error minted for a tasks/result carries _meta related-task with the request taskId', { timeout: TEST_TIMEOUT_MS }, () => {
  test('JSON body over the limit: the exact minted message, _meta naming the taskId (was: no _meta)', async () => {
    const { id, text } = await tasksResult('{"taskId":"t-json"}');
    assert.equal(
      text,
      `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"{\\"adcp_error\\":{\\"code\\":\\"RESPONSE_TOO_LARGE\\",\\"message\\":\\"The seller's response exceeded the 1000-byte limit; the seller may have completed the operation, so re-read its state before retrying.\\",\\"recovery\\":\\"correctable\\",\\"source\\":\\"sdk\\",\\"sdk_id\\":\\"${SDK_ID}\\",\\"details\\":{\\"reason\\":\\"raw_bytes\\",\\"limit_bytes\\":1000,\\"observed_bytes\\":${sellerBytes(id, 't-json')}}}}"},{"type":"text","text":"The seller's response exceeded the 1000-byte limit; the seller may have completed the operation, so re-read its state before retrying."}],"isError":true,"structuredContent":{"adcp_error":{"code":"RESPONSE_TOO_LARGE","message":"The seller's response exceeded the 1000-byte limit; the seller may have completed the operation, so re-read its state before retrying.","recovery":"correctable","source":"sdk","sdk_id":"${SDK_ID}","details":{"reason":"raw_bytes","limit_bytes":1000,"observed_bytes":${sellerBytes(id, 't-json')}}}},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-json"}}}}`,
    );
    const line = await stack.gateway.exchangeLine('s', id);
    assert.deepEqual([line.method, line.outcome, line.reason], ['tasks/result', 'local_error', 'raw_bytes']);
  });

  test('SSE stream over its cumulative bound: the final event carries _meta naming the taskId', async () => {
    const { id, text } = await tasksResult('{"taskId":"t-sse"}');
    const { finalEvent, err } = finalSseError(text, id, LIMIT);
    assert.equal(finalEvent, `event: message\ndata: ${minted(id, 'sse_cumulative', err.details.observed_bytes as number, 't-sse')}\n\n`);
  });

  const taskIdCases: Array<[string, string, string | undefined]> = [
    ['an escaped key (`task\\u0049d`), a small body (the parse)', '{"task\\u0049d":"t-esc"}', 't-esc'],
    ['a body over 1 KiB (the scan)', `{"taskId":"t-scan","_meta":{"pad":"${'p'.repeat(1_100)}"}}`, 't-scan'],
    ['an escaped key in a body over 1 KiB (the scan)', `{"_meta":{"pad":"${'p'.repeat(1_100)}"},"task\\u0049d":"t-scan-esc"}`, 't-scan-esc'],
    ['a taskId written twice: the last, as JSON.parse reads it', '{"taskId":"t-first","taskId":"t-last"}', 't-last'],
    ['a taskId of escapes, 1024 characters (the bound)', `{"taskId":"${'\\u00e9'.repeat(1_024)}"}`, 'é'.repeat(1_024)],
    ['a taskId of 1025 characters: over the bound, no _meta', `{"taskId":"${'k'.repeat(1_025)}"}`, undefined],
    ['a taskId that is a number: no _meta', '{"taskId":42}', undefined],
    ['params an array: no _meta', '["t-array"]', undefined],
  ];
  for (const [name, params, expected] of taskIdCases) {
    test(`${name}`, async () => {
      const { id, text } = await tasksResult(params);
      const sellerTaskId = (() => {
        const p = JSON.parse(params) as { taskId?: unknown };
        return typeof p.taskId === 'string' ? p.taskId : 'none';
      })();
      assert.equal(text, minted(id, 'raw_bytes', sellerBytes(id, sellerTaskId), expected));
    });
  }

  test('a tools/call minted error is unchanged: no _meta', async () => {
    const id = nextId++;
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"create_media_buy","arguments":{},"taskId":"t-tool"}}`, HEADERS));
    assert.equal(r.text(), minted(id, 'raw_bytes', sellerBytes(id, 't-tool')));
  });

  test('a tasks/result stream resumed with Last-Event-ID: its token has no taskId, so no _meta', async () => {
    const { text } = await tasksResult('{"taskId":"t-resumed"}');
    const [token] = sseIds(text);
    assert.ok(token !== undefined, text);
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } }));
    const resumed = await res.text();
    const id = nextId - 1;
    const { finalEvent, err } = finalSseError(resumed, id, LIMIT);
    assert.equal(finalEvent, `event: message\ndata: ${minted(id, 'sse_cumulative', err.details.observed_bytes as number)}\n\n`);
  });
});
