/**
 * Regression: "an id-only SSE block drops its id". A block with an `id:` field and no `data:`
 * dispatches no event but does set the stream's last event ID (WHATWG HTML §9.2.6, "dispatch
 * the event": the last event ID is set before an empty data buffer returns). The gateway's
 * parser (eventsource-parser 3) drops such a block whole, so the host never got that position:
 * its Last-Event-ID stayed at the event before, and a resume replayed from there (or, with no
 * id before it, the stream's end was `upstream_reset` instead of resumable).
 *
 * Input (raw seller on 127.0.0.1, max_response_bytes 4096): a tools/call answered over SSE with
 * `id: e1` + a progress event, then `id: e2\n\n` (no data), in one write; the seller then ends
 * the response. The host resumes with the last id it got.
 * Expectation: the host gets exactly `id: <t1>\ndata: <progress>\n\nid: <t2>\n\n` (both ids
 * resume tokens), its stream ends plainly; t2 carries the count through the id-only block (with
 * what t1 added to the host's stream over `e1`: test/regressions/sse-resume-token-amplification.test.ts);
 * resuming with t2, the seller gets `Last-Event-ID: e2`, and its result reaches the host as sent.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const LIMIT = 4096;
const SECRET = 'sse-id-only-block-secret-0123456789abcdef';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const RPC_ID = 71;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);

const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
const FIRST = `id: e1\ndata: ${PROGRESS}\n\n`;
const ID_ONLY = 'id: e2\n\n';

describe('an id-only SSE block drops its id', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the block goes to the host as its resume token; resuming with it sends the seller that id', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(FIRST + ID_ONLY);
    };
    const post = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(RPC_ID, 'get_products'), HEADERS), undefined, 'the POST');
    assert.equal(post.status, 200);
    const tokens = sseIds(post.text());
    assert.equal(tokens.length, 2, post.text());
    assert.equal(post.text(), `id: ${tokens[0]}\ndata: ${PROGRESS}\n\nid: ${tokens[1]}\n\n`);

    const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });
    const states = tokens.map((t) => codec.verify(t, 's', stack.gateway.sellerUrl('s')));
    assert.deepEqual(
      states.map((v) => (v.ok ? [v.state.upstreamId, v.state.usedBytes] : v.reason)),
      [
        ['e1', Buffer.byteLength(FIRST)],
        ['e2', Buffer.byteLength(FIRST + ID_ONLY) + tokens[0]!.length - 'e1'.length],
      ],
    );

    const result = toolResponse(RPC_ID, { content: [{ type: 'text', text: 'done' }] });
    let lastEventId: unknown;
    answer = (req, res) => {
      lastEventId = req.headers['last-event-id'];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${result}\n\n`);
    };
    const resumed = await withTimeout(
      fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': tokens[1]!, ...HEADERS } }).then(async (r) => ({ status: r.status, text: await r.text() })),
      undefined,
      'the resume',
    );
    assert.equal(resumed.status, 200);
    assert.equal(lastEventId, 'e2');
    assert.equal(resumed.text, `data: ${result}\n\n`);
  });
});
