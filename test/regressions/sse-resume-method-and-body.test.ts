/**
 * Regressions from a new user's trial (2026-12-02) of SSE resumption:
 * - "A JSON answer to a resumed GET skips the cumulative limit": a request's stream used 161
 *   bytes of a 300-byte limit; the GET resuming it was answered `application/json` (293
 *   bytes) and the host got it whole, 454 bytes for one request. A resumed stream is answered
 *   with SSE (MCP Streamable HTTP, "Resumability and Redelivery"): anything else 2xx is now
 *   `upstream_not_mcp` for the original request id, over SSE.
 * - "A Last-Event-ID on a POST is acted on": a new `tools/call` POSTed with an old token had
 *   that stream's count charged to it (`sse_cumulative` at 361 bytes where its own stream was
 *   200) and the seller got `Last-Event-ID: e1` on the POST. Only a GET resumes: on a POST the
 *   header is dropped, neither verified nor forwarded.
 * - "Seller ids with non-ASCII characters can never be resumed": ids like `é\u2028😀` got
 *   tokens, and the resume answered `upstream_unreachable` (undici refused the header) without
 *   contacting the seller. An id a Last-Event-ID header cannot carry back exactly is no longer
 *   made a token (request/headers.ts isResumableEventId): the event goes out without an id.
 *
 * Input (agent `s`, max_response_bytes 600; raw seller on 127.0.0.1): a tools/call (id 41)
 * answered over SSE with `id: e1` and a progress event, then the connection dropped; the
 * token of that event; then the requests below. (The reports were made with a 300-byte limit;
 * since resume tokens count toward the bound, the first stream is its 97-byte event plus what
 * its ~235-character token adds: 600 leaves room for it.)
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const LIMIT = 600;
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: sse-resume-method-secret-0123456789abcdef\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);

type Err = { code: string; details: Record<string, unknown> };
const toolErr = (m: unknown): Err => (m as { result: { structuredContent: { adcp_error: Err } } }).result.structuredContent.adcp_error;

/** A tools/call whose stream sends `id: e1` and a progress event, then drops: the event's token. */
async function droppedStreamToken(id: number): Promise<string> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`id: e1\ndata: ${PROGRESS}\n\n`);
    setTimeout(() => res.destroy(), 20);
  };
  const opened = await rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), HEADERS);
  const [token] = sseIds(opened.text());
  assert.ok(token, 'the event carries a resume token');
  return token;
}

describe('SSE resumption: only a GET resumes, and only with SSE', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a JSON answer to a resumed GET skips the cumulative limit: now upstream_not_mcp for the original id', async () => {
    const token = await droppedStreamToken(41);
    let lastEventId: unknown;
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(41, { ok: true }));
    };
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
    assert.equal(lastEventId, 'e1');
    assert.equal(resumed.status, 200);
    assert.equal(resumed.headers.get('content-type'), 'text/event-stream');
    const msgs = sseMessages(await resumed.text());
    assert.equal(msgs.length, 1);
    assert.equal((msgs[0] as { id: number }).id, 41);
    assert.equal(toolErr(msgs[0]).code, 'SERVICE_UNAVAILABLE');
    assert.deepEqual(toolErr(msgs[0]).details, { reason: 'upstream_not_mcp', upstream_status: 200 });
  });

  test('a Last-Event-ID on a POST is acted on: now dropped (not verified, not forwarded, no count carried)', async () => {
    const token = await droppedStreamToken(42);
    // The new request's own stream: 550 bytes, within the 600-byte limit alone, over it with the
    // token's count (97: the first stream's event; its own length is counted from the next token on).
    const result = `data: ${toolResponse(43, { ok: true })}\n\n`;
    const event = result.length < 550 ? `: ${'p'.repeat(550 - result.length - 3)}\n${result}` : result;
    assert.equal(Buffer.byteLength(event), 550);
    assert.ok(550 + Buffer.byteLength(`id: e1\ndata: ${PROGRESS}\n\n`) > LIMIT);
    let lastEventId: unknown = 'unset';
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(event);
    };
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(43, 'get_products'), { ...HEADERS, 'last-event-id': token });
    assert.equal(r.status, 200);
    assert.equal(lastEventId, undefined, 'the seller gets no Last-Event-ID on the POST');
    assert.deepEqual(sseMessages(r.text()), [JSON.parse(toolResponse(43, { ok: true }))]);
    // Not verified either: a token that is no token does not refuse the POST.
    const garbage = await rawPost(stack.gateway.agentUrl('s'), toolCall(44, 'get_products'), { ...HEADERS, 'last-event-id': 'not-a-token' });
    assert.equal(garbage.status, 200);
  });

  test('seller ids with non-ASCII characters can never be resumed: such ids are not made tokens', async () => {
    const ids = ['é\u2028😀', ' lead', 'trail\t', 'a b'];
    const note = '{"jsonrpc":"2.0","method":"n"}';
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // `id:  lead`: one space after the colon is dropped, the id is " lead".
      res.end(ids.map((id) => `id: ${id}\ndata: ${note}\n\n`).join('') + `data: ${toolResponse(45, { ok: true })}\n\n`);
    };
    const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(45, 'get_products'), HEADERS);
    const text = r.text();
    const tokens = sseIds(text);
    assert.equal(tokens.length, 1, text);
    assert.equal(text.split('\n\n')[3], `id: ${tokens[0]}\ndata: ${note}`, 'only the printable-ASCII id got a token');
    for (const block of text.split('\n\n').slice(0, 3)) assert.equal(block, `data: ${note}`);
    let lastEventId: unknown;
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${toolResponse(45, { ok: true })}\n\n`);
    };
    const resumed = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens[0]!, ...HEADERS } });
    assert.equal(resumed.status, 200);
    await resumed.text();
    assert.equal(lastEventId, 'a b');
  });
});
