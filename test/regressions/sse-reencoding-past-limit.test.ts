/**
 * Reported failure (a colleague, measuring with the SSE stage's test kit): an event the
 * gateway parses and re-encodes goes to the host with normalized framing, and the cumulative
 * bound did not count what that adds. A `data:x` line (no space after the colon) goes out as
 * `data: x`: one byte more per line that the bound never saw. A seller stream of 922 bytes
 * with `max_response_bytes` at 922 reached the host as 943 bytes, with no rewrite at all; a
 * seller writing many short `data:` lines without the space gets up to +16.7% past the bound
 * (`data:x` 6 bytes, `data: x` 7), and `id:` / `event:` lines grow the same way.
 * Now (src/response/sse-encoding-charge.ts charge) each frame the gateway encodes is charged
 * what it adds over the seller's bytes of its block, before it is written (and before its
 * resume token is minted, so the token's count includes it).
 *
 * Input (raw seller on 127.0.0.1): a tools/call answered over SSE with 24 progress events
 * whose JSON is split over 7 `data:` lines without a space (with and without `id:<n>` lines,
 * also without a space), then the result, also without spaces. The host lowers the limit
 * with X-Max-Response-Bytes to the seller's exact byte count.
 * Was: every event and the result delivered, the host got more bytes than the limit (e.g.
 * 4,168 + the result's growth for 3,984 seller bytes without ids).
 * Expected: the host gets whole re-encoded events of at most the limit in all, then the final
 * `sse_cumulative` error for the request; never the result. With ids, exactly the events
 * whose count (seller bytes, what the encoding and the tokens added) fits, each token
 * carrying that count. Control: with the limit at the bytes the host receives for the whole
 * stream, every event and the result arrive, byte for byte as expected; one byte less and the
 * result does not.
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

const SECRET = 'sse-reencoding-past-limit-secret-0123456789';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });
const EVENTS = 24;

let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: 1048576\n`),
);

/** A JSON text split after each comma: one `data:` line per piece (the pieces join with LF, JSON whitespace). */
const pieces = (json: string): string[] => json.split(/(?<=,)/);
const progress = (n: number): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n, total: EVENTS, message: 'm' } });

/** The seller's block: `id:<n>` when `withId`, then a `data:` line per piece, no space after any colon. */
const sellerBlock = (json: string, id: string | undefined): string => (id === undefined ? '' : `id:${id}\n`) + pieces(json).map((p) => `data:${p}\n`).join('') + '\n';
/** The host's block for it: what sse-encode.ts writes (`id: <token>`, `data: ` lines). */
const hostBlock = (json: string, token: string | undefined): string => (token === undefined ? '' : `id: ${token}\n`) + pieces(json).map((p) => `data: ${p}\n`).join('') + '\n';


async function call(rpcId: number, body: string, limit: number): Promise<{ text: string; bytes: number }> {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  };
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(rpcId, 'get_products'), { ...HEADERS, 'x-max-response-bytes': String(limit) }), undefined, 'the POST');
  assert.equal(r.status, 200);
  return { text: r.text(), bytes: r.bytes };
}

describe('re-encoded SSE events reach the host past max_response_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('data: lines without a space, no ids, limit at the seller bytes: at most the limit, then sse_cumulative', async () => {
    const rpcId = 71;
    const jsons = Array.from({ length: EVENTS }, (_, k) => progress(k + 1));
    const result = toolResponse(rpcId, { content: [{ type: 'text', text: 'done' }] });
    const body = jsons.map((j) => sellerBlock(j, undefined)).join('') + sellerBlock(result, undefined);
    const limit = Buffer.byteLength(body);
    const r = await call(rpcId, body, limit);
    const { forwarded } = finalSseError(r.text, rpcId, limit);
    // Was: every event and the result, more bytes than the limit.
    assert.ok(Buffer.byteLength(forwarded) <= limit, `the host got ${Buffer.byteLength(forwarded)} bytes of events for a limit of ${limit}`);
    // Whole re-encoded events, in order, and not the result.
    const hostBlocks = jsons.map((j) => hostBlock(j, undefined));
    let k = 0;
    let expected = '';
    while (k < EVENTS && forwarded.length > expected.length) expected += hostBlocks[k++];
    assert.equal(forwarded, expected);
    assert.ok(k > 0 && k < EVENTS, `${k} events delivered`);
  });

  test('data: and id: lines without a space, limit at the seller bytes: exactly the events that fit, each token with its count', async () => {
    const rpcId = 72;
    const jsons = Array.from({ length: EVENTS }, (_, k) => progress(k + 1));
    const result = toolResponse(rpcId, { content: [{ type: 'text', text: 'done' }] });
    const body = jsons.map((j, k) => sellerBlock(j, String(k + 1))).join('') + sellerBlock(result, undefined);
    const limit = Buffer.byteLength(body);
    const r = await call(rpcId, body, limit);
    const { forwarded, err } = finalSseError(r.text, rpcId, limit);
    assert.ok(Buffer.byteLength(forwarded) <= limit, `the host got ${Buffer.byteLength(forwarded)} bytes of events for a limit of ${limit}`);
    const tokens = sseIds(forwarded);
    const k = tokens.length;
    assert.ok(k > 0 && k < EVENTS, `${k} events delivered`);
    assert.equal(forwarded, tokens.map((t, i) => hostBlock(jsons[i]!, t)).join(''));
    // Each token's count: the seller's bytes through its block, what each block's encoding added
    // over them (its own included) and what the earlier tokens added.
    let count = 0;
    for (let i = 0; i < k; i++) {
      const id = String(i + 1);
      const seller = Buffer.byteLength(sellerBlock(jsons[i]!, id));
      const encoded = Buffer.byteLength(hostBlock(jsons[i]!, id));
      count += encoded; // the block as the host gets it, with the seller's id in place of the token (it grew: encoded > seller)
      assert.ok(encoded > seller);
      const state = codec.verify(tokens[i]!, 's', stack.gateway.sellerUrl('s'));
      assert.ok(state.ok, `token ${id}`);
      assert.equal(state.state.usedBytes, count, `token ${id}`);
      count += tokens[i]!.length - id.length;
    }
    // What the host got before the error is the count the gateway kept.
    assert.equal(Buffer.byteLength(forwarded), count);
    // The next block is where the count went over: its own bytes (the count through it, as the
    // seller sent it), else its encoding's growth (charged before its token).
    const next = String(k + 1);
    const sellerThrough = count + Buffer.byteLength(sellerBlock(jsons[k]!, next));
    const through = sellerThrough > limit ? sellerThrough : count + Buffer.byteLength(hostBlock(jsons[k]!, next));
    assert.ok(through > limit);
    assert.equal(err.details.observed_bytes, through);
  });

  test('control: the limit at the bytes the host receives lets every event and the result through; one less does not', async () => {
    const rpcId = 73;
    const jsons = Array.from({ length: EVENTS }, (_, k) => progress(k + 1));
    const result = toolResponse(rpcId, { content: [{ type: 'text', text: 'done' }] });
    const body = jsons.map((j) => sellerBlock(j, undefined)).join('') + sellerBlock(result, undefined);
    const expected = jsons.map((j) => hostBlock(j, undefined)).join('') + hostBlock(result, undefined);
    const hostBytes = Buffer.byteLength(expected);
    assert.ok(hostBytes > Buffer.byteLength(body));
    const r = await call(rpcId, body, hostBytes);
    assert.equal(r.text, expected);
    assert.equal(r.bytes, hostBytes);
    const short = await call(rpcId, body, hostBytes - 1);
    const { forwarded } = finalSseError(short.text, rpcId, hostBytes - 1);
    assert.ok(Buffer.byteLength(forwarded) <= hostBytes - 1);
    assert.ok(!forwarded.includes('"done"'));
  });
});
