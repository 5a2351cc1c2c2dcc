/**
 * Regression (carried from an earlier review): "a resume from the final event's token gives a
 * contradicting error". The token the gateway minted on the event that carried the response
 * to the request was, on a `Last-Event-ID` resume, forwarded to the seller like any other;
 * the seller had nothing to replay, so:
 * - when it answered an empty SSE stream and closed it, the host got an `upstream_reset`
 *   error event for the request id it already had its answer for;
 * - when it kept the stream open (SDK servers may), the host waited for `sse_idle`, then got
 *   that error.
 * MCP Streamable HTTP: once the response has been sent, the stream for that request is over.
 * Now the token minted on the response's event says so (payload key `f`, resume/token.ts),
 * and a resume from it gets an SSE stream with nothing in it, the seller not contacted; the
 * exchange line says outcome `already_answered`, reason null. The stream is held until
 * sse_idle_timeout_ms and then ends after `id: <token>` (changed on purpose: it ended at once:
 * test/regressions/already-answered-resume-ends-at-once-sdk-reconnect-loop.test.ts).
 *
 * Input (agent `s`, raw seller on 127.0.0.1, sse_idle_timeout_ms 1000): a tools/call (id 7)
 * answered over SSE with `id: e1` (a progress notification) and `id: e2` (the response); the
 * host GETs with `Last-Event-ID: <token of e2>`; the seller, if asked, answers an empty SSE
 * stream (closed, or kept open). Expectation: HTTP 200, `text/event-stream`, body exactly
 * `id: <token of e2>` and a blank line, no GET at the seller, the line above. A resume from the token of e1 is unchanged:
 * the seller gets `Last-Event-ID: e1` and the replayed response reaches the host.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type RawSeller, type SeenRequest } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway, type ObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway<RawSeller, ObservedGateway>(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, sse_idle_timeout_ms: 1000 } }, RESUME_YAML)),
);

/** POSTs tools/call `id`, answered over SSE by a progress event (`e1`) and the response (`e2`): the two tokens. */
async function answeredStreamTokens(id: number): Promise<{ progress: string; final: string }> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`id: e1\ndata: ${PROGRESS}\n\nid: e2\ndata: ${toolResponse(id, { content: [{ type: 'text', text: 'done' }] })}\n\n`);
  };
  const r = await rawPost(stack.gateway.agentUrl('s'), toolCall(id, 'get_products'), HEADERS);
  assert.equal(r.status, 200);
  const [progress, final] = sseIds(r.text());
  assert.ok(progress !== undefined && final !== undefined, r.text());
  return { progress, final };
}

/** GETs with `Last-Event-ID: token`: status, content type, body. */
async function resume(token: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

const gets = (): number => stack.seller.requests.filter((q) => q.method === 'GET').length;

describe('a resume from the token of the response event', { timeout: TEST_TIMEOUT_MS }, () => {
  for (const [label, sellerEnds] of [
    ['the seller would replay nothing and close', true],
    ['the seller would replay nothing and keep the stream open', false],
  ] as const) {
    test(`${label}: an empty SSE stream held until sse_idle_timeout_ms, the seller not contacted, outcome already_answered`, async () => {
      const id = sellerEnds ? 7 : 8;
      const { final } = await answeredStreamTokens(id);
      answer = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (sellerEnds) res.end();
        else res.flushHeaders();
      };
      const before = gets();
      const posted = await stack.gateway.exchangeLine('s', id);
      const r = await resume(final);
      assert.deepEqual(r, { status: 200, type: 'text/event-stream', body: `id: ${final}\n\n` });
      assert.equal(gets(), before, 'the seller gets no GET');
      const line = await stack.gateway.waitForLine((l) => l.msg === 'exchange' && l.rpc_id === id && l !== posted);
      assert.deepEqual(
        { status: line.status, upstream_status: line.upstream_status, outcome: line.outcome, reason: line.reason, bytes_to_host: line.bytes_to_host, bytes_from_seller: line.bytes_from_seller },
        { status: 200, upstream_status: null, outcome: 'already_answered', reason: null, bytes_to_host: r.body.length, bytes_from_seller: 0 },
      );
    });
  }

  test('a resume from an earlier event of the same stream still goes to the seller', async () => {
    const { progress } = await answeredStreamTokens(9);
    let lastEventId: unknown;
    const replay = `data: ${toolResponse(9, { content: [{ type: 'text', text: 'again' }] })}\n\n`;
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(replay);
    };
    const r = await resume(progress);
    assert.equal(lastEventId, 'e1');
    assert.deepEqual(r, { status: 200, type: 'text/event-stream', body: replay });
  });
});
