/**
 * Reported failure (review of the resume tokens): a hostile seller amplifies what the host
 * receives far past `max_response_bytes`. On a request's SSE stream the gateway replaces every
 * non-empty seller event id with its own signed resume token (~230-310 characters), while the
 * cumulative bound counted only the seller's bytes: a seller sending id-only blocks
 * (`id: 1\n\n`, 7 bytes) made the host receive ~32x the bound (14.7x with one-byte data
 * events), and the bound exists to protect the host.
 * Now (src/response/sse-event-ids.ts chargeToken) the bound counts, on a request's stream, the
 * seller's bytes plus what each token adds to the host's stream (its length over the seller
 * id's); a token's count is the count before its own length (the next token's includes it).
 *
 * Input (raw seller on 127.0.0.1, agent max_response_bytes 262144): a tools/call answered over
 * SSE with 20,000 id-only blocks `id: <n>\n\n` (n = 1..20000, 208,894 bytes), then the result;
 * and with 12,000 one-byte data events with ids `id: <n>\ndata: x\n\n` (216,894 bytes), then
 * the result. Both are within 262144 bytes as the seller sent them.
 * Was: the host received all of it with every id a token (~225-235 characters here), then the
 * result: ~4.76 MB and ~2.95 MB (~18x and ~11x the bound). Now ~263 KB each: the blocks up
 * to 262144 bytes and the ~800-byte error event.
 * Expected: the host gets only whole blocks, of at most 262144 bytes in all (the count the
 * gateway kept, the seller's bytes plus what the tokens added, less the id lines of blocks sent
 * without theirs), then one final `message`
 * event: RESPONSE_TOO_LARGE `sse_cumulative` for the request's id, limit_bytes 262144,
 * observed_bytes the count with the next block and its token; never the result. The body is at
 * most the limit plus that final event.
 * The id-only blocks no longer get tokens of their own (a new user's trial 9, F3:
 * test/regressions/get-stream-id-only-token-amplification.test.ts): they dispatch no event, so
 * the last one's id goes out on the result, its one token, the count the seller's bytes. And the
 * data events get their tokens only within the stream's token budget (src/response/sse-token-credit.ts,
 * on a request's stream too since test/regressions/request-stream-short-id-token-amplification.test.ts):
 * the others go out without their ids (replayed here from the tokens received), so the bound is
 * reached later, after more of the seller's events.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { finalSseError, rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec } from '../../src/resume/token.js';
import { TOKEN_CREDIT_MAX_BYTES, TOKEN_CREDIT_PER_SELLER_BYTE, TOKEN_CREDIT_START_BYTES } from '../../src/response/sse-token-credit.js';

const LIMIT = 262_144;
const SECRET = 'sse-token-amplification-secret-0123456789';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);


/**
 * Sends `blocks(1..count)` then the result for `rpcId`, and checks what the host got
 * (file comment). `blockOf(n)`: the seller's block with id `n`; `hostBlockOf(token, n)`: the
 * host's block for it.
 */
async function check(rpcId: number, count: number, blockOf: (n: number) => string, hostBlockOf: (token: string | undefined, n: number) => string): Promise<void> {
  let stream = '';
  for (let n = 1; n <= count; n++) stream += blockOf(n);
  const result = `event: message\ndata: ${toolResponse(rpcId, { content: [{ type: 'text', text: 'done' }] })}\n\n`;
  assert.ok(Buffer.byteLength(stream + result) <= LIMIT, 'the seller stays within the bound');
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(stream + result);
  };
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(rpcId, 'get_products'), HEADERS), undefined, 'the POST');
  assert.equal(r.status, 200);
  const text = r.text();
  // Was: several MB, the result at the end.
  assert.ok(r.bytes <= LIMIT + 4096, `the host got ${r.bytes} bytes`);

  // The final event: the error for the request, and nothing after it.
  const { forwarded, finalEvent, err } = finalSseError(text, rpcId, LIMIT);
  assert.ok(r.bytes <= LIMIT + Buffer.byteLength(finalEvent), `host got ${r.bytes} bytes`);

  // Before it: whole blocks 1..k, those the token budget allows with their tokens (each block
  // earns twice its bytes; a token is minted while the budget is above zero and spends its
  // length over the seller id's), exactly as the gateway counted them.
  const tokens = sseIds(forwarded);
  assert.ok(Buffer.byteLength(forwarded) <= LIMIT);
  let sellerBytes = 0;
  let added = 0;
  let credit = TOKEN_CREDIT_START_BYTES;
  let expected = '';
  let used = 0;
  let k = 0;
  /** The id lines of the blocks that went out without theirs: counted (the seller's bytes), not sent. */
  let withheld = 0;
  while (expected.length < forwarded.length) {
    k++;
    credit = Math.min(credit + TOKEN_CREDIT_PER_SELLER_BYTE * Buffer.byteLength(blockOf(k)), TOKEN_CREDIT_MAX_BYTES);
    sellerBytes += Buffer.byteLength(blockOf(k));
    let token: string | undefined;
    if (credit > 0) {
      token = tokens[used++];
      assert.ok(token !== undefined, `a token for ${k}`);
      const state = codec.verify(token, 's', stack.gateway.sellerUrl('s'));
      assert.ok(state.ok, `token ${k}`);
      assert.equal(state.state.upstreamId, String(k));
      // Its count: the seller's bytes through its block and what the earlier tokens added.
      assert.equal(state.state.usedBytes, sellerBytes + added, `token ${k}`);
      added += token.length - String(k).length;
      credit -= token.length - String(k).length;
    } else withheld += Buffer.byteLength(`id: ${k}\n`);
    expected += hostBlockOf(token, k);
  }
  assert.equal(forwarded, expected);
  assert.equal(used, tokens.length);
  assert.ok(used > 0 && k < count);
  // What the host got before the error is the count the gateway kept, but for the id lines
  // not sent (the count stays the seller's bytes plus what the tokens added).
  assert.ok(withheld > 0);
  assert.equal(Buffer.byteLength(forwarded), sellerBytes + added - withheld);
  // The next block (or its token, which the budget allows then) is where the count went over the bound.
  const through = sellerBytes + added + Buffer.byteLength(blockOf(k + 1));
  credit = Math.min(credit + TOKEN_CREDIT_PER_SELLER_BYTE * Buffer.byteLength(blockOf(k + 1)), TOKEN_CREDIT_MAX_BYTES);
  assert.ok(through > LIMIT || credit > 0, 'a block that fits and gets no token is forwarded');
  const nextToken = codec.mint({
    upstreamId: String(k + 1),
    agent: 's',
    rpcId,
    method: 'tools/call',
    toolName: 'get_products',
    usedBytes: Math.min(through, LIMIT),
    limitBytes: LIMIT,
    protocolVersion: HEADERS['mcp-protocol-version'],
    streamStartedAt: Date.now(),
  }, stack.gateway.sellerUrl('s'));
  const observed = through > LIMIT ? through : through + nextToken.length - String(k + 1).length;
  assert.ok(observed > LIMIT);
  assert.equal(err.details.observed_bytes, observed);
}

describe('resume tokens amplify the host stream past max_response_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('20,000 id-only blocks: one token, on the result, counting the seller\'s bytes', async () => {
    let stream = '';
    for (let n = 1; n <= 20_000; n++) stream += `id: ${n}\n\n`;
    const result = toolResponse(61, { content: [{ type: 'text', text: 'done' }] });
    const resultEvent = `event: message\ndata: ${result}\n\n`;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(stream + resultEvent);
    };
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(61, 'get_products'), HEADERS), undefined, 'the POST');
    assert.equal(r.status, 200);
    const [token, ...more] = sseIds(r.text());
    assert.deepEqual(more, []);
    assert.equal(r.text(), `id: ${token}\n${resultEvent}`);
    const state = codec.verify(token!, 's', stack.gateway.sellerUrl('s'));
    assert.ok(state.ok);
    assert.deepEqual([state.state.upstreamId, state.state.usedBytes, state.state.final], ['20000', Buffer.byteLength(stream + resultEvent), true]);
  });

  test('12,000 one-byte data events with ids: at most 256 KiB of events, tokens within the budget, then sse_cumulative', async () => {
    await check(
      62,
      12_000,
      (n) => `id: ${n}\ndata: x\n\n`,
      (token) => `${token === undefined ? '' : `id: ${token}\n`}data: x\n\n`,
    );
  });
});
