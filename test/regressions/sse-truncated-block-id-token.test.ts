/**
 * Reported failure (review of the id-only fix, 2026-12-02): an SSE block cut after its `id:` line by the end of the
 * seller's response (no data line, no blank line) is now forwarded as an id-only block with a
 * resume token (now: dropped, src/response/sse-stage.ts `streamEnded`). WHATWG HTML §9.2.6: at the end of the stream a pending block is discarded and
 * the last event ID is NOT set. The MCP TypeScript SDK writes
 * `event: message\nid: <id>\ndata: <json>\n\n`, so a response cut after the id line is an
 * event whose data never came; the token makes the host resume AFTER it, and the seller's
 * replay skips that event (possibly the final result). Before 182ff8c the block was dropped
 * and the host resumed from the previous id (the event replayed).
 *
 * Input (raw seller on 127.0.0.1): `id: e1\ndata: <progress>\n\nevent: message\nid: e2\n`,
 * then the response ends cleanly (chunked terminator).
 * Expected: the host gets only e1's token; resuming with its last id, the seller gets
 * `Last-Event-ID: e1`. Was: the host also got `id: <token(e2)>\n\n` and the resume sent e2.
 * Contrast: the same bytes then a connection reset: no e2 token either way.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const SECRET = 'truncated-block-secret-0123456789abcdef';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
const BODY = `id: e1\ndata: ${PROGRESS}\n\nevent: message\nid: e2\n`;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n`),
);

const upstreamIds = (text: string): string[] => {
  const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });
  return sseIds(text).map((t) => {
    const v = codec.verify(t, 's', stack.gateway.sellerUrl('s'));
    return v.ok ? v.state.upstreamId : `invalid:${t}`;
  });
};

describe('an SSE block cut after its id line by the end of the response gets no resume token', { timeout: TEST_TIMEOUT_MS }, () => {
  test('response ended cleanly after `event: message\\nid: e2\\n`: no token for e2; the resume sends e1', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(BODY);
    };
    const post = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(5, 'get_products'), HEADERS), undefined, 'the POST');
    const tokens = sseIds(post.text());
    let lastEventId: unknown;
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 5, result: { content: [] } })}\n\n`);
    };
    await withTimeout(
      fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens.at(-1)!, ...HEADERS } }).then((r) => r.text()),
      undefined,
      'the resume',
    );
    assert.deepEqual({ ids: upstreamIds(post.text()), lastEventId }, { ids: ['e1'], lastEventId: 'e1' }, post.text());
  });

  test('contrast: the same bytes, then the connection is reset: no e2 token', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(BODY, () => setTimeout(() => res.destroy(), 50));
    };
    const post = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(6, 'get_products'), HEADERS), undefined, 'the POST');
    assert.deepEqual(upstreamIds(post.text()), ['e1'], post.text());
  });
});
