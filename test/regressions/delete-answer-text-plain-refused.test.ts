/**
 * Regression (a carried defect, "a DELETE answered 2xx with a `text/plain` body is refused"):
 * a host ending its session with `DELETE /agents/<agent>/mcp` whose seller answered 200 with a
 * body labelled `text/plain` (or HTML, or any type but JSON and SSE) got HTTP 502
 * `upstream_not_mcp`, while the same body with no Content-Type passed through
 * (test/regressions/delete-answer-labelled-octet-stream.test.ts), and a 4xx body passes through
 * whatever its type. A 2xx `application/json` body was judged as a JSON-RPC answer: `{"ok":true}`
 * was refused `upstream_not_mcp`, a JSON-RPC response passed. Nothing reads that body: a DELETE
 * ends the session (MCP Streamable HTTP, Session Management) and MCP hosts (the SDK client)
 * cancel its body unread.
 *
 * The rule now (docs/errors.md `upstream_not_mcp`; response/pipeline.ts): a DELETE's 2xx
 * answer that is not SSE passes through as a 4xx does, whatever its Content-Type: the seller's
 * status, headers and bytes (decoded), its Content-Type as the seller sent it (none when it
 * sent none), bounded by the byte bounds (a JSON body also by depth and nodes), never judged as
 * a JSON-RPC message. An SSE answer to a DELETE stays `upstream_not_mcp` (no stream answers it).
 *
 * Input: a raw seller (node:http) on 127.0.0.1 -> gateway (agent `s`, max_response_bytes
 * LIMIT) -> raw host (node:net), `DELETE /agents/s/mcp` with `connection: close`; the seller
 * answers by session id (ANSWERS): 200 `text/plain`, 200 `text/html; charset=utf-8`, 200 with
 * no Content-Type, 200 `application/json` `{"ok":true}`, a JSON-RPC response, text that is no
 * JSON labelled `application/json`, 204 `text/plain` with no body; a `text/plain` body of
 * LIMIT + 1 bytes, with a Content-Length and chunked; an SSE stream.
 * Expected: exactly the head lines below (Date left out), then the seller's body; over LIMIT,
 * HTTP 502 with the RESPONSE_TOO_LARGE `content_length` / `raw_bytes` error for id null; SSE,
 * HTTP 502 with the `upstream_not_mcp` error for id null. Before the fix: every case but the
 * two controls (no Content-Type, a JSON-RPC response) and SSE was HTTP 502 `upstream_not_mcp`
 * (the 204 with no body and the bodies over LIMIT included).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, type RawSeller } from '../support/raw-seller.js';
import { expectedErrorJson } from '../support/hostile-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { deleteAnswer as deleteAnswerOf } from '../helpers/http-wire.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 1000;
const BIG = 'x'.repeat(LIMIT + 1);
const RPC_RESPONSE = '{"jsonrpc":"2.0","id":1,"result":{}}';

/** Per session id: the seller's answer to its DELETE (status, headers, body). */
const ANSWERS: Record<string, [status: number, headers: Record<string, string>, body: string]> = {
  text: [200, { 'content-type': 'text/plain', 'content-length': '13' }, 'session ended'],
  html: [200, { 'content-type': 'text/html; charset=utf-8', 'content-length': '10' }, '<p>bye</p>'],
  none: [200, { 'content-length': '13' }, 'session ended'],
  json: [200, { 'content-type': 'application/json', 'content-length': '11' }, '{"ok":true}'],
  rpc: [200, { 'content-type': 'application/json', 'content-length': String(RPC_RESPONSE.length) }, RPC_RESPONSE],
  notjson: [200, { 'content-type': 'application/json', 'content-length': '3' }, 'bye'],
  empty: [204, { 'content-type': 'text/plain' }, ''],
  big: [200, { 'content-type': 'text/plain', 'content-length': String(BIG.length) }, BIG],
  bigchunked: [200, { 'content-type': 'text/plain' }, BIG],
  sse: [200, { 'content-type': 'text/event-stream' }, 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'],
};

const stack = useSellerAndGateway<RawSeller, RunningGateway>(
  () =>
    startRawSeller((req, res) => {
      const [status, headers, body] = ANSWERS[String(req.headers['mcp-session-id'])] ?? [500, {}, ''];
      res.writeHead(status, headers).end(body);
    }),
  (seller) => startGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: LIMIT } }, ['log_level: silent'])),
);

/** The gateway's whole answer to a DELETE of session `session` (test/helpers/http-wire.ts). */
const deleteAnswer = (session: string): Promise<{ head: string[]; body: string }> => deleteAnswerOf(stack.gateway.baseUrl, session);

/** The head a passed-through 200 answer gets: the seller's Content-Type (when it sent one) and length. */
function passedHead(contentType: string | undefined, length: number): string[] {
  return ['HTTP/1.1 200 OK', ...(contentType === undefined ? [] : [`content-type: ${contentType}`]), `content-length: ${length}`, 'Connection: close'];
}

/** The gateway's HTTP 502 JSON-RPC error for id null (a DELETE carries no JSON-RPC id). */
function refusal(body: string): { head: string[]; body: string } {
  return { head: ['HTTP/1.1 502 Bad Gateway', 'content-type: application/json; charset=utf-8', 'cache-control: no-store', 'x-content-type-options: nosniff', `content-length: ${Buffer.byteLength(body)}`, 'Connection: close'], body };
}

describe("a DELETE's 2xx answer that is not SSE passes through as the seller sent it, whatever its Content-Type", { timeout: TEST_TIMEOUT_MS }, () => {
  test('200 text/plain: the seller\'s label and bytes', async () => {
    assert.deepEqual(await deleteAnswer('text'), { head: passedHead('text/plain', 13), body: 'session ended' });
  });

  test('200 text/html; charset=utf-8: the same', async () => {
    assert.deepEqual(await deleteAnswer('html'), { head: passedHead('text/html; charset=utf-8', 10), body: '<p>bye</p>' });
  });

  test('200 application/json `{"ok":true}` (no JSON-RPC message): the same, not judged', async () => {
    assert.deepEqual(await deleteAnswer('json'), { head: passedHead('application/json', 11), body: '{"ok":true}' });
  });

  test('200 application/json holding text that is no JSON: the same, as a 4xx body', async () => {
    assert.deepEqual(await deleteAnswer('notjson'), { head: passedHead('application/json', 3), body: 'bye' });
  });

  test('control: 200 with no Content-Type: none added, as before', async () => {
    assert.deepEqual(await deleteAnswer('none'), { head: passedHead(undefined, 13), body: 'session ended' });
  });

  test('control: 200 application/json holding a JSON-RPC response: passed through, as before', async () => {
    assert.deepEqual(await deleteAnswer('rpc'), { head: passedHead('application/json', RPC_RESPONSE.length), body: RPC_RESPONSE });
  });

  test('204 text/plain with no body: passed on', async () => {
    assert.deepEqual(await deleteAnswer('empty'), { head: ['HTTP/1.1 204 No Content', 'content-type: text/plain', 'Connection: close'], body: '' });
  });

  test('a text/plain body announced over max_response_bytes: RESPONSE_TOO_LARGE content_length, HTTP 502, none of it', async () => {
    assert.deepEqual(await deleteAnswer('big'), refusal(expectedErrorJson({ id: null, method: '', reason: 'content_length', limitBytes: LIMIT, observedBytes: BIG.length })));
  });

  test('a chunked text/plain body over max_response_bytes: RESPONSE_TOO_LARGE raw_bytes, HTTP 502, none of it', async () => {
    assert.deepEqual(await deleteAnswer('bigchunked'), refusal(expectedErrorJson({ id: null, method: '', reason: 'raw_bytes', limitBytes: LIMIT, observedBytes: BIG.length })));
  });

  test('an SSE answer: still upstream_not_mcp, HTTP 502, none of the events', async () => {
    assert.deepEqual(await deleteAnswer('sse'), refusal(expectedErrorJson({ id: null, method: '', reason: 'upstream_not_mcp', limitBytes: LIMIT, observedBytes: 0, upstreamStatus: 200 })));
  });
});
