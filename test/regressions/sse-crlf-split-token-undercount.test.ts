/**
 * Regression: "1-byte resume-token under-count with CR LF split". The count a resume token
 * carries (`usedBytes`: the request's stream through the end of the event carrying it,
 * ARCHITECTURE §4) came out one byte short when the CR LF of the event's blank line was cut
 * between two seller chunks: the event went out at the CR (nothing waits for a byte that may
 * never come) with the count through the CR, and the LF was counted after the token was made.
 *
 * Input (agent `s`, max_response_bytes 4096; raw seller on 127.0.0.1): a tools/call answered
 * over SSE with `id: e1\r\ndata: <progress>\r\n\r` in one socket write; once the host has read
 * that event, the LF that completes its blank line in a second write, then the end of the
 * response. Then two resumes with the event's token, each answered with the request's result
 * (LF endings): one whose bytes make the stream's total exactly 4096, one a byte longer.
 * Expectation: the host gets `id: <token>\ndata: <progress>\n\n` and its stream ends plainly;
 * the token's usedBytes is the event's bytes, LF included (its first write + 1); the seller
 * gets `Last-Event-ID: e1` on both resumes; the first resume delivers the result as sent
 * (4096 bytes in all with what the token added over `e1`, counted on the resume: at the
 * limit; with the token one byte short, the second too), the second (from a second POST's
 * token: a resume from the first token again would start after what its first resume
 * delivered) answers the original id with RESPONSE_TOO_LARGE `sse_cumulative`, limit_bytes
 * 4096, observed_bytes 4097.
 *
 * Second reported failure (review of that fix, 2026-12-02): the same under-count when the
 * lines before the blank line end with a lone CR (`id: e1\rdata: <progress>\r\r`, then `\n`;
 * WHATWG HTML §9.2.6 allows CR, LF or CR LF per line), and for an id-only block
 * (`id: e2\r\r`, then `\n`): the fix had counted the LF only after an LF-ended line.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponseOfSize, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';

const LIMIT = 4096;
const SECRET = 'sse-crlf-split-secret-0123456789abcdef';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const RPC_ID = 61;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);

const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });

/** POSTs the tools/call and reads the host's stream; `onEvent` runs once the event's blank line arrived. */
async function postAndRead(onEvent: () => void): Promise<string> {
  const res = await fetch(stack.gateway.agentUrl('s'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...HEADERS },
    body: JSON.stringify(toolCall(RPC_ID, 'get_products')),
  });
  assert.equal(res.status, 200);
  const decoder = new TextDecoder();
  let text = '';
  let seen = false;
  for await (const chunk of res.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (!seen && text.endsWith('\n\n')) {
      seen = true;
      onEvent();
    }
  }
  return text;
}

/**
 * Resumes with `token`; the seller answers the result as one event of `eventBytes` bytes, LF
 * line endings (an event ending CR LF is dispatched at its last CR, a byte before its end:
 * its last LF would not show where the bound trips).
 */
async function resumeWithResult(token: string, eventBytes: number): Promise<{ text: string; lastEventId: unknown; event: string }> {
  const frame = (json: string): string => `data: ${json}\n\n`;
  const event = frame(toolResponseOfSize(RPC_ID, eventBytes - frame('').length));
  assert.equal(Buffer.byteLength(event), eventBytes);
  let lastEventId: unknown;
  answer = (req, res) => {
    lastEventId = req.headers['last-event-id'];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(event);
  };
  const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, ...HEADERS } });
  assert.equal(res.status, 200);
  return { text: await res.text(), lastEventId, event };
}

/** The seller writes `first`, then, once the host read the event, the LF of its blank line and ends; returns the host's stream. */
async function splitBlankLine(first: string): Promise<string> {
  let second!: () => void;
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(first);
    second = () => res.end('\n');
  };
  return withTimeout(postAndRead(() => second()), undefined, 'the POST stream');
}

function verifiedState(token: string): { usedBytes: number; limitBytes: number } {
  const verified = createResumeCodec({ secret: SECRET, ttlMs: 60_000 }).verify(token, 's', stack.gateway.sellerUrl('s'));
  assert.ok(verified.ok, 'the token verifies');
  return verified.state;
}

describe('1-byte resume-token under-count with CR LF split', { timeout: TEST_TIMEOUT_MS }, () => {
  // The event up to the CR of its blank line (the seller's first write): lines ended by CR LF, then by lone CRs.
  for (const [endings, firstWrite] of [
    ['CR LF', `id: e1\r\ndata: ${PROGRESS}\r\n\r`],
    ['lone CR', `id: e1\rdata: ${PROGRESS}\r\r`],
  ] as const) {
    test(`lines ended by ${endings}: the token counts the LF of the blank line's CR LF cut between chunks; the limit trips at its exact byte after a resume`, async () => {
      // The event's bytes, the LF of its blank line (the second write) included.
      const eventBytes = Buffer.byteLength(firstWrite) + 1;
      const text = await splitBlankLine(firstWrite);
      const [token] = sseIds(text);
      assert.equal(text, `id: ${token}\ndata: ${PROGRESS}\n\n`);
      const state = verifiedState(token!);
      assert.equal(state.usedBytes, eventBytes);
      assert.equal(state.limitBytes, LIMIT);
      // What the token added over `e1` reached the host: a resume from it counts it.
      const tokenAdded = token!.length - 'e1'.length;

      // At the limit: delivered as sent (line endings LF), no error.
      const atLimit = await withTimeout(resumeWithResult(token!, LIMIT - eventBytes - tokenAdded), undefined, 'resume at the limit');
      assert.equal(atLimit.lastEventId, 'e1');
      assert.equal(atLimit.text, atLimit.event);

      // One byte past it, resuming a fresh stream's token (a second resume from `token` would
      // start after what the first delivered: the gateway notes a resumed stream's bytes under
      // the token it resumed from, test/regressions/resume-without-ids-escapes-cumulative-bound.test.ts):
      // sse_cumulative for the original request id, at the exact byte.
      const [fresh] = sseIds(await splitBlankLine(firstWrite));
      assert.equal(verifiedState(fresh!).usedBytes, eventBytes);
      assert.equal(fresh!.length, token!.length);
      const over = await withTimeout(resumeWithResult(fresh!, LIMIT - eventBytes - tokenAdded + 1), undefined, 'resume one byte over');
      assert.equal(over.lastEventId, 'e1');
      const msgs = sseMessages(over.text) as Array<{ id: number; result: { structuredContent: { adcp_error: { code: string; details: unknown } } } }>;
      assert.equal(msgs.length, 1);
      assert.equal(msgs[0]!.id, RPC_ID);
      assert.equal(msgs[0]!.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
      assert.deepEqual(msgs[0]!.result.structuredContent.adcp_error.details, { reason: 'sse_cumulative', limit_bytes: LIMIT, observed_bytes: LIMIT + 1 });
    });
  }

  test('an id-only block `id: e2\\r\\r`, then `\\n`: its token counts the LF', async () => {
    const first = `data: ${PROGRESS}\n\nid: e2\r\r`;
    const text = await splitBlankLine(first);
    const [token] = sseIds(text);
    assert.equal(text, `data: ${PROGRESS}\n\nid: ${token}\n\n`);
    assert.equal(verifiedState(token!).usedBytes, Buffer.byteLength(first) + 1);
  });
});
