/**
 * Reported failure (hostile trials, after de91006): on a request's SSE stream (tools/call) a
 * seller sending many tiny events, each with a short `id:` (`id:1`, then a notification of a
 * few dozen bytes), made the gateway replace each id with its ~225-byte signed resume token:
 * the host received up to ~18x the seller's bytes, bounded only by `max_response_bytes` (which
 * counts what the host receives), and the gateway minted an HMAC per event. The standalone GET
 * stream and long-lived streams had a token budget (src/response/sse-token-credit.ts); a
 * request's stream had none.
 * Now every stream has it: tokens add at most twice the seller's bytes, plus 1 KiB to start;
 * an event that finds the budget spent goes out without its id, which waits for the next event
 * without an id of its own, or the stream's end (sse-event-ids.ts pendingId). The event carrying
 * the request's response gets its token whatever the budget (it ends the stream, and its token
 * says so: a resume from it is answered at once).
 *
 * Input (raw seller on 127.0.0.1, through the real gateway; max_response_bytes 4,000,000):
 * - tools/call: 3000 events `id:N` + `data:{"jsonrpc":"2.0","method":"n"}` (a tiny
 *   notification), then the result with no id.
 * - tools/call: 20 progress notifications of ~150 bytes, ids `1` .. `20`, then the result with
 *   id `21` (an ordinary stream).
 * - tools/call: the 3000 tiny events, then the seller ends without the result; the host resumes
 *   with the last token it got (and, as a host whose connection broke there would, with the
 *   last token before events that went out without theirs); the seller answers with the result.
 * Expected: exactly the events the budget allows carry their tokens (replayed here from the
 * tokens received), the others go out without an id; the host gets at most 3x the seller's
 * bytes plus the start and one token; the last token, on the result, is final.
 * The ordinary stream: a token on every event, the text exactly the seller's events with their
 * tokens. The resume: the seller gets `Last-Event-ID` of the token the host resumed with, the
 * host gets the result, and the resumed stream's count starts from that token's count plus
 * what the token added.
 * Was (the same test): every event its own token, 6.2x the seller's bytes for these events
 * (18x for `id:N` + `data`), no pending id at the end; now 2.9x (2.7x).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startRawSeller, toolResponse, type SeenRequest } from '../support/raw-seller.js';
import { startGateway } from '../helpers/gateway.js';
import { rawPost, sseIds, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';
import { createResumeCodec, type ResumeState } from '../../src/resume/token.js';
import { TOKEN_CREDIT_MAX_BYTES, TOKEN_CREDIT_PER_SELLER_BYTE, TOKEN_CREDIT_START_BYTES } from '../../src/response/sse-token-credit.js';

const SECRET = 'request-stream-short-id-amplification-secret-0123';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const LIMIT = 4_000_000;
const RPC_ID = 61;
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

const TINY = JSON.stringify({ jsonrpc: '2.0', method: 'n' });
const RESULT = toolResponse(RPC_ID, { content: [{ type: 'text', text: 'done' }] });

/** One seller event: its id, its block as the seller wrote it, and its frame without the id line as the gateway writes it. */
interface SellerEvent {
  readonly id: string | undefined;
  readonly block: string;
  readonly out: string;
}
/** `id:N` + the tiny notification (`data:` without the space: the gateway writes `data: `). */
const tinyEvents = (count: number): SellerEvent[] =>
  Array.from({ length: count }, (_, k) => ({ id: String(k + 1), block: `id:${k + 1}\ndata:${TINY}\n\n`, out: `data: ${TINY}\n\n` }));
const RESULT_EVENT: SellerEvent = { id: undefined, block: `data: ${RESULT}\n\n`, out: `data: ${RESULT}\n\n` };
const text = (events: readonly SellerEvent[]): string => events.map((e) => e.block).join('');

/** What the seller answers: the test sets it; every request is recorded. */
let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};
const stack = useSellerAndGateway(
  () => startRawSeller((req, res) => answer(req, res)),
  (seller) => startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\nagents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`),
);
const sse = (res: ServerResponse, body: string): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(body);
};

const stateOf = (token: string): ResumeState => {
  const v = codec.verify(token, 's', stack.gateway.sellerUrl('s'));
  assert.ok(v.ok, token);
  return v.state;
};
const lastSeenId = (): unknown => stack.seller.requests.at(-1)!.headers['last-event-id'];

async function call(): Promise<string> {
  const post = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(RPC_ID, 'get_products'), HEADERS), undefined, 'the POST');
  assert.equal(post.status, 200);
  return post.text();
}
async function resume(token: string): Promise<string> {
  const res = await withTimeout(fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', ...HEADERS, 'last-event-id': token } }), undefined, 'the resume');
  assert.equal(res.status, 200);
  return res.text();
}

/**
 * The host's text for `events` as the token budget (sse-token-credit.ts) lets their ids through,
 * replayed from `tokens` (what the host got, in order): each event's block earns twice its
 * bytes before it goes out; an event with an id (its own, or the one waiting) gets a token while
 * the budget is above zero, spending the token's length over the seller id's; refused, its id
 * waits. `answered`: the last event carries the response (its token whatever the budget).
 * Returns the text, how many tokens it used, the id still waiting at the end, each event's
 * token (undefined: it went out without one).
 */
function replay(events: readonly SellerEvent[], tokens: readonly string[], answered: boolean): { expected: string; used: number; pending: string | undefined; tokenOf: Array<string | undefined> } {
  const tokenOf: Array<string | undefined> = [];
  let credit = TOKEN_CREDIT_START_BYTES;
  let used = 0;
  let expected = '';
  let pending: string | undefined;
  events.forEach((e, k) => {
    credit = Math.min(credit + TOKEN_CREDIT_PER_SELLER_BYTE * Buffer.byteLength(e.block), TOKEN_CREDIT_MAX_BYTES);
    const id = e.id ?? pending;
    pending = undefined;
    if (id !== undefined && (credit > 0 || (answered && k === events.length - 1))) {
      const token = tokens[used++];
      assert.ok(token !== undefined, `a token for ${id}`);
      assert.equal(stateOf(token).upstreamId, id);
      credit -= token.length - id.length;
      expected += `id: ${token}\n`;
      tokenOf.push(token);
    } else {
      pending = id;
      tokenOf.push(undefined);
    }
    expected += e.out;
  });
  return { expected, used, pending, tokenOf };
}

describe("a request's stream: short-id events each became a resume token (hostile trials)", { timeout: TEST_TIMEOUT_MS }, () => {
  test('3000 tiny events with short ids, then the result: tokens within twice the seller\'s bytes; the result\'s token is final', async () => {
    const events = [...tinyEvents(3000), RESULT_EVENT];
    const seller = text(events);
    answer = (_req, res) => sse(res, seller);
    const host = await call();
    const tokens = sseIds(host);
    const { expected, used, pending } = replay(events, tokens, true);
    assert.equal(pending, undefined);
    assert.equal(used, tokens.length);
    assert.equal(host, expected);
    const longest = Math.max(...tokens.map((t) => t.length));
    // Was 6.2x (each event its own token); 2.9x here.
    assert.ok(Buffer.byteLength(host) <= 3 * Buffer.byteLength(seller) + TOKEN_CREDIT_START_BYTES + longest, `host ${Buffer.byteLength(host)} bytes, seller ${Buffer.byteLength(seller)}`);
    assert.ok(tokens.length < 3000 / 2, `${tokens.length} tokens`);
    // The result's token says the response went out (a resume from it ends at once).
    assert.equal(stateOf(tokens.at(-1)!).final, true);
  });

  test('an ordinary stream: 20 progress notifications of ~150 bytes and the result, each with an id, each get a token', async () => {
    const events: SellerEvent[] = Array.from({ length: 20 }, (_, k) => {
      const data = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', progress: k + 1, total: 20, message: `step ${String(k + 1).padStart(2, '0')} of 20: fetching products` } });
      return { id: String(k + 1), block: `id: ${k + 1}\ndata: ${data}\n\n`, out: `data: ${data}\n\n` };
    });
    assert.ok(events.every((e) => Math.abs(Buffer.byteLength(e.out) - 150) < 15), 'events of ~150 bytes');
    events.push({ id: '21', block: `id: 21\ndata: ${RESULT}\n\n`, out: `data: ${RESULT}\n\n` });
    answer = (_req, res) => sse(res, text(events));
    const host = await call();
    const tokens = sseIds(host);
    assert.equal(tokens.length, 21);
    assert.deepEqual(
      tokens.map((t) => stateOf(t).upstreamId),
      events.map((e) => e.id),
    );
    assert.equal(host, events.map((e, k) => `id: ${tokens[k]}\n${e.out}`).join(''));
  });

  test('the seller ends without the result: the last waiting id goes out at the end; resumes from the last token, and from one before ids went out without theirs, get the result', async () => {
    const events = tinyEvents(3000);
    const seller = text(events);
    answer = (_req, res) => sse(res, seller);
    const host = await call();
    const tokens = sseIds(host);
    const { expected, used, pending, tokenOf } = replay(events, tokens, false);
    // The last event went out without its id (the budget spent): its id ends the stream.
    assert.equal(pending, '3000');
    assert.equal(used, tokens.length - 1);
    const last = tokens.at(-1)!;
    assert.equal(host, `${expected}id: ${last}\n\n`);
    // Its count: the seller's bytes, the two bytes each block's encoding adds (`id: `, `data: `),
    // and what every earlier token added over its seller id.
    const added = tokens.slice(0, -1).reduce((n, t) => n + t.length - stateOf(t).upstreamId.length, 0);
    assert.deepEqual([stateOf(last).upstreamId, stateOf(last).usedBytes, stateOf(last).final === true], ['3000', Buffer.byteLength(seller) + 2 * 3000 + added, false]);

    // The resume from the last token: the seller gets 3000, the host the result; the resumed
    // stream counts from the token's count plus what it added (a token on the result says so).
    answer = (_req, res) => sse(res, `id:R\ndata: ${RESULT}\n\n`);
    const resumed = await resume(last);
    assert.equal(lastSeenId(), '3000');
    const [final] = sseIds(resumed);
    assert.equal(resumed, `id: ${final}\ndata: ${RESULT}\n\n`);
    const seeded = stateOf(last).usedBytes + last.length - '3000'.length;
    assert.deepEqual([stateOf(final!).upstreamId, stateOf(final!).usedBytes, stateOf(final!).final], ['R', seeded + Buffer.byteLength(`id:R\ndata: ${RESULT}\n\n`) + 1, true]);

    // A host whose connection broke after an event with a token, before events that went out
    // without theirs, resumes from that token: the seller gets its id.
    const k = tokenOf.findIndex((t, i) => i > 0 && t === undefined && tokenOf[i - 1] !== undefined);
    assert.ok(k > 0, 'an event without its token right after one with it');
    const before = tokenOf[k - 1]!;
    answer = (_req, res) => sse(res, `data: ${RESULT}\n\n`);
    assert.equal(await resume(before), `data: ${RESULT}\n\n`);
    assert.equal(lastSeenId(), events[k - 1]!.id);
  });
});
