/**
 * Reported failure (review of the CR LF split fix, 2026-12-02): the fix (SseLineFeeder.lfExpected) only counts
 * the pending LF when the char before the trailing CR is an LF. When the line before the blank
 * line ended with a lone CR (mixed endings, valid per WHATWG HTML 9.2.6: CR, LF or CR LF per
 * line), the blank line's CR LF cut between chunks still gives a token one byte short.
 *
 * Input: seller writes `id: e1\rdata: <progress>\r\r` (id and data lines ended by lone CR, the
 * blank line's CR), then, once the host read the event, `\n` (the blank line's LF) and ends.
 * Bytes of the event block: first write + 1. Expected token usedBytes: first write + 1.
 * Was: first write (one short); after a resume the bound tripped one byte late.
 * The same for an id-only block `id: e2\r\r` + `\n`.
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
const SECRET = 'lone-cr-crlf-secret-0123456789abcdef';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const RPC_ID = 61;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);

const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
/** The event up to the CR of its blank line: the seller's first write. */
const FIRST_WRITE = `id: e1\rdata: ${PROGRESS}\r\r`;
/** The event's bytes, the LF of its blank line (the second write) included. */
const EVENT_BYTES = Buffer.byteLength(FIRST_WRITE) + 1;

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

describe('1-byte resume-token under-count after a lone-CR line, the blank line CR LF split', { timeout: TEST_TIMEOUT_MS }, () => {
  test('the token counts the LF of a CR LF cut between chunks; the limit trips at its exact byte after a resume', async () => {
    let second!: () => void;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(FIRST_WRITE);
      second = () => res.end('\n');
    };
    const text = await withTimeout(postAndRead(() => second()), undefined, 'the POST stream');
    const [token] = sseIds(text);
    assert.equal(text, `id: ${token}\ndata: ${PROGRESS}\n\n`);

    const verified = createResumeCodec({ secret: SECRET, ttlMs: 60_000 }).verify(token!, 's');
    assert.ok(verified.ok, 'the token verifies');
    assert.equal(verified.state.usedBytes, EVENT_BYTES);
    assert.equal(verified.state.limitBytes, LIMIT);

    // At the limit: delivered as sent (line endings LF), no error.
    const atLimit = await withTimeout(resumeWithResult(token!, LIMIT - EVENT_BYTES), undefined, 'resume at the limit');
    assert.equal(atLimit.lastEventId, 'e1');
    assert.equal(atLimit.text, atLimit.event);

    // One byte past it: sse_cumulative for the original request id, at the exact byte.
    const over = await withTimeout(resumeWithResult(token!, LIMIT - EVENT_BYTES + 1), undefined, 'resume one byte over');
    assert.equal(over.lastEventId, 'e1');
    const msgs = sseMessages(over.text) as Array<{ id: number; result: { structuredContent: { adcp_error: { code: string; details: unknown } } } }>;
    assert.equal(msgs.length, 1);
    assert.equal(msgs[0]!.id, RPC_ID);
    assert.equal(msgs[0]!.result.structuredContent.adcp_error.code, 'RESPONSE_TOO_LARGE');
    assert.deepEqual(msgs[0]!.result.structuredContent.adcp_error.details, { reason: 'sse_cumulative', limit_bytes: LIMIT, observed_bytes: LIMIT + 1 });
  });

  test('id-only block: `id: e2\\r\\r` then `\\n`: the token counts the LF', async () => {
    const first = `data: ${PROGRESS}\n\nid: e2\r\r`;
    let second!: () => void;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      second = () => res.end('\n');
    };
    const text = await withTimeout(postAndRead(() => second()), undefined, 'the POST stream');
    const [token] = sseIds(text);
    assert.equal(text, `data: ${PROGRESS}\n\nid: ${token}\n\n`);
    const verified = createResumeCodec({ secret: SECRET, ttlMs: 60_000 }).verify(token!, 's');
    assert.ok(verified.ok);
    assert.equal(verified.state.usedBytes, Buffer.byteLength(first) + 1);
  });
});

