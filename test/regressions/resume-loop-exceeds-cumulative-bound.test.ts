/**
 * Reported failure (a new user's hostile trial, F6): the cumulative SSE bound is exceeded ~29x
 * through repeated `Last-Event-ID` resumes. The seller answers a `tools/call` with one id-only
 * block and closes, and answers every resume the same way. Each token's count left out its
 * own length (a token cannot count itself), and a resume restored that count: the token the
 * host resumed from, which it did receive, was never counted. Each resume added only the
 * seller's ~7 bytes while the host received a new ~230-byte token: 87,642 bytes to the host
 * for a 3,000-byte bound (398 resumes) before `sse_cumulative`.
 * Now (src/routing/resumed-stream.ts resumedCount) a resumed stream's count is the token's count
 * plus what that token added to the host's stream (its length over the seller id's), so it is
 * exactly what the host received through the token's event, across any number of resumes.
 *
 * Input (raw seller on 127.0.0.1, agent max_response_bytes 3000): the POST is answered
 * `id: 0` and a blank line, then closed; each GET resume `id: r<n>` and a blank line, then
 * closed. A raw host resumes from the last token it got, at most 300 times.
 * Expected: each token's count plus its added length equals the bytes the host received
 * through its block; the host receives at most 3000 bytes before one final event, the
 * RESPONSE_TOO_LARGE `sse_cumulative` error for id 8 (limit_bytes 3000, observed_bytes the
 * count with the next block and its token), after at most 3000 / 200 resumes.
 * Was: 300 resumes, the host receiving some 70 KB, and no error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { finalSseError, rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const LIMIT = 3000;
const RPC_ID = 8;
const MAX_RESUMES = 300;
const SECRET = 'resume-loop-cumulative-bound-secret-0123456789';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

let gets = 0;
const answer = (req: SeenRequest, res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(req.method === 'GET' ? `id: r${++gets}\n\n` : 'id: 0\n\n');
};
const stack = useSellerAndGateway(
  () => startRawSeller(answer),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);

/** GETs with `Last-Event-ID: token`: status and body. */
async function resume(token: string): Promise<{ status: number; body: string }> {
  const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
  return { status: res.status, body: await res.text() };
}

describe('a seller answering every resume with one id-only block', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the host receives at most max_response_bytes across the resumes, then sse_cumulative', async () => {
    const first = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(RPC_ID, 'get_products'), HEADERS), undefined, 'the POST');
    assert.equal(first.status, 200);
    let body = first.text();
    /** Bytes the host received before the body being read. */
    let received = 0;
    let resumes = 0;
    let sellerId = '0';
    for (;;) {
      const tokens = sseIds(body);
      if (tokens.length === 0) break;
      assert.equal(tokens.length, 1, body);
      const token = tokens[0]!;
      assert.equal(body, `id: ${token}\n\n`);
      received += Buffer.byteLength(body);
      const state = codec.verify(token, 's', stack.gateway.sellerUrl('s'));
      assert.ok(state.ok);
      assert.equal(state.state.upstreamId, sellerId);
      // The token's count plus its own added length: what the host received through its block.
      assert.equal(state.state.usedBytes + token.length - sellerId.length, received, `token ${resumes}`);
      assert.ok(resumes < MAX_RESUMES, `${resumes} resumes, the host received ${received} bytes for a ${LIMIT}-byte bound`);
      resumes++;
      const r = await withTimeout(resume(token), undefined, `resume ${resumes}`);
      assert.equal(r.status, 200);
      body = r.body;
      sellerId = `r${resumes}`;
    }
    assert.ok(received <= LIMIT, `the host received ${received} bytes`);
    assert.ok(resumes <= LIMIT / 200, `${resumes} resumes`);
    const { forwarded, err } = finalSseError(body, RPC_ID, LIMIT);
    assert.equal(forwarded, '');
    // The seller's next block (7 or 8 bytes) went over the bound, or its token did.
    const through = received + Buffer.byteLength(`id: ${sellerId}\n\n`);
    const observed = err.details.observed_bytes as number;
    assert.ok(observed > LIMIT);
    if (through > LIMIT) assert.equal(observed, through);
    else assert.ok(observed > through && observed <= through + 4096, `observed_bytes ${observed}`);
    assert.equal(gets, resumes);
  });
});
