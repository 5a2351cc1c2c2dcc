/**
 * Regression (a hostile new-user trial 16, L2): "a DELETE's body is forwarded, and its answer
 * escapes per-tool limits and normalization". The same `tools/call get_report` body, with a
 * 1000-byte limit on that tool, got RESPONSE_TOO_LARGE over POST; over DELETE the gateway
 * forwarded the body as sent (with the host's Content-Length and Content-Type), a seller that
 * routes on the body whatever the method answered the call, and its 5,118-byte result reached
 * the host unjudged and not deduped (a DELETE's 2xx answer is "never judged as a JSON-RPC
 * message": docs/errors.md). A GET's body was never forwarded (Fastify reads none). A DELETE
 * ends the session and carries no JSON-RPC message (MCP Streamable HTTP, Session Management).
 *
 * Input: a raw node:http seller on 127.0.0.1 that answers any request with a body by that
 * body's id with a `tools/call` result of 5,000 `x` (5,073 bytes of JSON), and a DELETE without
 * a body with 200 `text/plain` `session s-1 ended`; the real gateway in front of it (agent `s`,
 * tool `get_report` limited to 1000 bytes), logging into memory; the host's POST and DELETE of
 * the same body (fetch), a DELETE whose body comes chunked with a Content-Encoding (a raw
 * wire), and a DELETE without a body.
 * Expected: the POST gets RESPONSE_TOO_LARGE (`content_length`), byte for byte, as before. Each
 * DELETE reaches the seller with no body and no Content-Length, Transfer-Encoding,
 * Content-Type or Content-Encoding, and the host gets the seller's answer as sent (200
 * `text/plain`, `session s-1 ended`), as a bodyless DELETE did before; the exchange line has
 * `http_method` `DELETE`, outcome `ok`, and `request_body_dropped_bytes` the body's size (absent
 * for a DELETE without a body).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { expectedErrorJson, startObservedGateway, type LogLine, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { deleteAnswer, openRawConnection } from '../helpers/http-wire.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const TOOL_LIMIT = 1000;
/** The trial's body: a `tools/call` of the limited tool. */
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_report', arguments: {} } });
/** The seller's answer to a body with id 1: 5,073 bytes, over the tool's limit. */
const BIG_RESULT = toolResponse(1, { content: [{ type: 'text', text: 'x'.repeat(5000) }] });
/** The seller's answer to a DELETE without a body. */
const ENDED = 'session s-1 ended';
/** Host headers of every request below (those of the trial). */
const HOST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 's-1' };
/** Request headers that describe a body: none may reach the seller with a DELETE. */
const BODY_HEADER_NAMES = ['content-length', 'transfer-encoding', 'content-type', 'content-encoding'] as const;

/** A naive JSON-RPC-over-HTTP seller: it answers any body by its id, whatever the method (the trial's seller). */
function naiveSeller(): Promise<RawSeller> {
  return startRawSeller((req: SeenRequest, res) => {
    if (req.body.length > 0) {
      const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
      assert.equal(id, 1);
      return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BIG_RESULT) }).end(BIG_RESULT);
    }
    if (req.method === 'DELETE') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(ENDED);
    res.writeHead(405).end();
  });
}

/** The exchange line of the n-th DELETE (1-based), once written. */
async function deleteLine(gateway: ObservedGateway, n: number): Promise<LogLine> {
  await gateway.waitForLine(() => gateway.lines.filter((l) => l.msg === 'exchange' && l.http_method === 'DELETE').length >= n);
  return gateway.lines.filter((l) => l.msg === 'exchange' && l.http_method === 'DELETE')[n - 1]!;
}

/** Asserts the seller's last request was a DELETE with no body and no header describing one. */
function assertBodilessDelete(seller: RawSeller, requestsBefore: number): void {
  assert.equal(seller.requests.length, requestsBefore + 1, 'one request reached the seller');
  const seen = seller.requests.at(-1)!;
  assert.equal(seen.method, 'DELETE');
  assert.equal(seen.body.length, 0, `the seller got no body (got ${JSON.stringify(seen.body.toString('latin1').slice(0, 80))})`);
  for (const name of BODY_HEADER_NAMES) assert.equal(seen.headers[name], undefined, `no ${name} reaches the seller`);
  assert.equal(seen.headers['mcp-session-id'], 's-1');
}

describe('a DELETE body is not forwarded: the answer cannot escape the tool limits (trial 16, L2)', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(naiveSeller, (seller) =>
    startObservedGateway(agentsYaml({ s: { url: seller.url, tools: `{ get_report: { max_response_bytes: ${TOOL_LIMIT} } }` } })),
  );
  let deletes = 0;

  test('POST of the tools/call: RESPONSE_TOO_LARGE, as before', async () => {
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { method: 'POST', headers: HOST_HEADERS, body: BODY }));
    assert.equal(res.status, 200);
    assert.equal(
      await res.text(),
      expectedErrorJson({ id: 1, method: 'tools/call', toolName: 'get_report', reason: 'content_length', limitBytes: TOOL_LIMIT, observedBytes: Buffer.byteLength(BIG_RESULT) }),
    );
  });

  test('DELETE with the same body: the seller gets the DELETE without it; the host gets its answer', async () => {
    const before = stack.seller.requests.length;
    const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { method: 'DELETE', headers: HOST_HEADERS, body: BODY }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain');
    assert.equal(await res.text(), ENDED);
    assertBodilessDelete(stack.seller, before);
    const line = await deleteLine(stack.gateway, ++deletes);
    assert.deepEqual(
      { status: line.status, upstream_status: line.upstream_status, rpc_kind: line.rpc_kind, outcome: line.outcome, bytes_to_host: line.bytes_to_host, request_body_dropped_bytes: line.request_body_dropped_bytes },
      { status: 200, upstream_status: 200, rpc_kind: 'none', outcome: 'ok', bytes_to_host: ENDED.length, request_body_dropped_bytes: Buffer.byteLength(BODY) },
    );
  });

  test('DELETE with a chunked body and a Content-Encoding (raw wire): neither goes on', async () => {
    const before = stack.seller.requests.length;
    const conn = await openRawConnection(Number(new URL(stack.gateway.baseUrl).port));
    const half = BODY.length >> 1;
    const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    conn.socket.write(
      'DELETE /agents/s/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-encoding: identity\r\ntransfer-encoding: chunked\r\n' +
        `mcp-protocol-version: 2025-06-18\r\nmcp-session-id: s-1\r\nconnection: close\r\n\r\n${chunk(BODY.slice(0, half))}${chunk(BODY.slice(half))}0\r\n\r\n`,
    );
    const wire = await withTimeout(conn.closed, 5_000, 'the answer to the chunked DELETE').finally(() => conn.socket.destroy());
    assert.match(wire, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(wire, /\r\ncontent-type: text\/plain\r\n/);
    assert.ok(wire.endsWith(`\r\n\r\n${ENDED}`), JSON.stringify(wire.slice(-120)));
    assertBodilessDelete(stack.seller, before);
    const line = await deleteLine(stack.gateway, ++deletes);
    assert.equal(line.request_body_dropped_bytes, Buffer.byteLength(BODY));
  });

  test('DELETE without a body: the seller and the host see it as before; no dropped bytes logged', async () => {
    const before = stack.seller.requests.length;
    const { head, body } = await deleteAnswer(stack.gateway.baseUrl, 's-1');
    assert.equal(head[0], 'HTTP/1.1 200 OK');
    assert.ok(head.includes('content-type: text/plain'), head.join(' | '));
    assert.equal(body, ENDED);
    assertBodilessDelete(stack.seller, before);
    const line = await deleteLine(stack.gateway, ++deletes);
    assert.equal(line.outcome, 'ok');
    assert.equal('request_body_dropped_bytes' in line, false);
  });
});
