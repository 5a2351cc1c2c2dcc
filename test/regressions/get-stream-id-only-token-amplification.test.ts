/**
 * Reported failure (a new user's trial 9, F3 (High)): on the standalone GET stream a seller's
 * id-only blocks (`id:N` and a blank line, ~9 bytes, no data) each went out as a ~180-byte
 * signed resume token: 2 MB from the seller became 40.8 MB at the host (20.4x), with no bound
 * (that stream has no cumulative bound), and minting the tokens slowed another agent's calls
 * from ~23 ms to 210-500 ms. Events with ids and no data to speak of (`id:N`, `data`, the blank
 * line) did the same, 14.3x.
 * Such a block dispatches no event: it only sets the last event ID (WHATWG HTML §9.2.6). Now
 * (src/response/sse-event-ids.ts pendingId) its id waits: the next event without an id of its own
 * carries it as its token, a later id supersedes it, and the stream's end writes it alone; on
 * every stream kind. Without a cumulative bound, tokens add at most twice the seller's bytes
 * (src/response/sse-token-credit.ts): an event refused one goes out without an id, its id
 * pending in turn.
 *
 * Input (raw seller on 127.0.0.1, through the real gateway):
 * - GET stream: 1000 id-only blocks `id:1` .. `id:1000`, a notification, 500 more `id:1001` ..
 *   `id:1500`, then the end; the host resumes with the last token it got (a second GET).
 * - A request's stream (tools/call, max_response_bytes 65536): 1000 id-only blocks, a progress
 *   notification, 500 more, then the end without the result; the host resumes with its last
 *   token, and the seller answers the resume with the result.
 * - GET stream: 3000 events `id:N`, `data`, the blank line.
 * Expected: the host gets exactly `id: <token 1000>` + the notification, then `id: <token
 * 1500>` and a blank line: two token lines for 1500 blocks (was 1500 lines); the request's
 * tokens count the seller's bytes through them (plus the byte each `id:N` block's frame adds:
 * `id: N`); each resume sends the seller `Last-Event-ID: 1500`. The 3000 events: exactly the
 * events the budget allows carry their tokens (replayed here from the tokens received), the
 * others go out as `data: ` alone, the last refused id at the end; the host gets at most 3x
 * the seller's bytes and the start (2.72x here; was 14.3x).
 * Was (before this fix, the same test): 1500 token lines on the GET stream, one per block (the
 * notification without one); on the request's stream 279 token lines, then `sse_cumulative` at
 * 65536 bytes (the tokens counted there) before the progress event; each event its own token
 * on the last.
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

const SECRET = 'get-stream-id-only-amplification-secret-0123456789';
const HEADERS = { 'mcp-protocol-version': '2025-11-25' };
const LIMIT = 65_536;
const RPC_ID = 93;
const codec = createResumeCodec({ secret: SECRET, ttlMs: 60_000 });

const NOTE = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } });
const PROGRESS = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } });
const RESULT = toolResponse(RPC_ID, { content: [{ type: 'text', text: 'done' }] });

/** `id:from` .. `id:to`, each an id-only block as the trial's seller wrote them. */
const idOnly = (from: number, to: number): string => {
  let out = '';
  for (let n = from; n <= to; n++) out += `id:${n}\n\n`;
  return out;
};
const FIRST = idOnly(1, 1000);
const MORE = idOnly(1001, 1500);

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

/** A GET through the gateway, with `Last-Event-ID` when given: status and body. */
async function get(lastEventId?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...HEADERS, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) };
  const res = await fetch(stack.gateway.agentUrl('s'), { headers });
  return { status: res.status, text: await res.text() };
}

/** The verified state of a token the host got. */
const stateOf = (token: string): ResumeState => {
  const v = codec.verify(token, 's', stack.gateway.sellerUrl('s'));
  assert.ok(v.ok, token);
  return v.state;
};

/** The `last-event-id` header of the seller's last request. */
const lastSeenId = (): unknown => stack.seller.requests.at(-1)!.headers['last-event-id'];

describe('id-only SSE blocks each became a resume token (a new user\'s trial 9, F3)', { timeout: TEST_TIMEOUT_MS }, () => {
  test('GET stream: 1500 id-only blocks around a notification give two token lines; a resume sends the last id', async () => {
    const seller = `${FIRST}data: ${NOTE}\n\n${MORE}`;
    answer = (_req, res) => sse(res, seller);
    const r = await withTimeout(get(), undefined, 'the GET');
    assert.equal(r.status, 200);
    const tokens = sseIds(r.text);
    assert.equal(tokens.length, 2, `token lines: ${tokens.length}`);
    assert.equal(r.text, `id: ${tokens[0]}\ndata: ${NOTE}\n\nid: ${tokens[1]}\n\n`);
    assert.deepEqual(
      tokens.map((t) => [stateOf(t).upstreamId, stateOf(t).usedBytes]),
      [
        ['1000', 0],
        ['1500', 0],
      ],
    );
    // Was: 1501 tokens, ~270 KB for the seller's 14 KB.
    assert.ok(Buffer.byteLength(r.text) < Buffer.byteLength(seller), `host ${Buffer.byteLength(r.text)} bytes, seller ${Buffer.byteLength(seller)}`);

    // The host resumes from the last id it could know: the seller gets 1500.
    answer = (_req, res) => sse(res, `data: ${NOTE}\n\n`);
    const resumed = await withTimeout(get(tokens[1]), undefined, 'the resume');
    assert.equal(resumed.status, 200);
    assert.equal(lastSeenId(), '1500');
    assert.equal(resumed.text, `data: ${NOTE}\n\n`);
  });

  test('a request\'s stream: the progress event carries the 1000th id, the end the 1500th; the resume sends 1500 and gets the result', async () => {
    answer = (_req, res) => sse(res, `${FIRST}data: ${PROGRESS}\n\n${MORE}`);
    const post = await withTimeout(rawPost(stack.gateway.agentUrl('s'), toolCall(RPC_ID, 'get_products'), HEADERS), undefined, 'the POST');
    assert.equal(post.status, 200);
    const tokens = sseIds(post.text());
    assert.equal(tokens.length, 2, `token lines: ${tokens.length}`);
    assert.equal(post.text(), `id: ${tokens[0]}\ndata: ${PROGRESS}\n\nid: ${tokens[1]}\n\n`);
    // Counts: the seller's bytes through the event (the end), plus the one byte each `id:N`
    // block's frame `id: N` adds (charged with its block: sse-stage.ts onIdOnly), plus what
    // the first token added over `1000`.
    const progressBlock = `data: ${PROGRESS}\n\n`;
    const first = Buffer.byteLength(FIRST + progressBlock) + 1000;
    const end = first + tokens[0]!.length - '1000'.length + Buffer.byteLength(MORE) + 500;
    assert.deepEqual(
      tokens.map((t) => [stateOf(t).upstreamId, stateOf(t).usedBytes, stateOf(t).rpcId]),
      [
        ['1000', first, RPC_ID],
        ['1500', end, RPC_ID],
      ],
    );

    answer = (_req, res) => sse(res, `data: ${RESULT}\n\n`);
    const resumed = await withTimeout(get(tokens[1]), undefined, 'the resume');
    assert.equal(resumed.status, 200);
    assert.equal(lastSeenId(), '1500');
    assert.equal(resumed.text, `data: ${RESULT}\n\n`);
  });

  test('GET stream: 3000 events `id:N` with no data to speak of: tokens within twice the seller\'s bytes, the last id at the end', async () => {
    const blocks = Array.from({ length: 3000 }, (_, k) => `id:${k + 1}\ndata\n\n`);
    const seller = blocks.join('');
    answer = (_req, res) => sse(res, seller);
    const r = await withTimeout(get(), undefined, 'the GET');
    assert.equal(r.status, 200);
    const tokens = sseIds(r.text);
    // The budget (sse-token-credit.ts), replayed from the tokens the host got: each block
    // earns twice its bytes; a token is minted while the budget is above zero and spends its
    // length over the seller id's.
    let credit = TOKEN_CREDIT_START_BYTES;
    let next = 0;
    let expected = '';
    let pending: string | undefined;
    for (let k = 0; k < blocks.length; k++) {
      const id = String(k + 1);
      credit = Math.min(credit + TOKEN_CREDIT_PER_SELLER_BYTE * Buffer.byteLength(blocks[k]!), TOKEN_CREDIT_MAX_BYTES);
      if (credit > 0) {
        const token = tokens[next++];
        assert.ok(token !== undefined, `a token for ${id}`);
        assert.equal(stateOf(token).upstreamId, id);
        credit -= token.length - id.length;
        expected += `id: ${token}\ndata: \n\n`;
        pending = undefined;
      } else {
        expected += 'data: \n\n';
        pending = id;
      }
    }
    if (pending !== undefined) {
      assert.equal(stateOf(tokens[next]!).upstreamId, pending);
      expected += `id: ${tokens[next++]}\n\n`;
    }
    assert.equal(next, tokens.length);
    assert.equal(r.text, expected);
    // Was 14.3x (each event its token); 2.72x here. Tokens add at most twice the seller's
    // bytes, plus the start and one token; the events without theirs are shorter than the seller's.
    const longest = Math.max(...tokens.map((t) => t.length));
    assert.ok(Buffer.byteLength(r.text) <= 3 * Buffer.byteLength(seller) + TOKEN_CREDIT_START_BYTES + longest, `host ${Buffer.byteLength(r.text)} bytes, seller ${Buffer.byteLength(seller)}`);
    assert.ok(tokens.length < blocks.length / 5, `${tokens.length} tokens`);
  });
});
