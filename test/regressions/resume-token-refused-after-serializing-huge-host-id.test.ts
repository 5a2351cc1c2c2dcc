/**
 * Reported failure (an algorithmic-complexity audit after the hostile new-user trial 16, H1):
 * every SSE event with an id mints a resume token, and a token over 4,096 characters was
 * refused only after its whole payload had been serialized, base64url-encoded and hashed. The
 * payload carries the host's request id, so its cost per event grew with the host's request:
 * a `tools/call` whose id is a string of 4,000,000 characters (within max_request_bytes), its
 * seller sending 400 progress notifications with ids (18,690 bytes), stalled the event loop
 * 34 s (100 events: 13 s; ~85 ms per event, every agent's calls waiting). A batch's tokens did
 * the same with its requests' ids: `JSON.stringify` of the whole awaited list, for each event,
 * only to compare its length with 1,024 (100 ids of 40,000 characters: 400 events stalled the
 * loop 1.5 s). Now `mint` refuses such a state from its strings' lengths alone
 * (resume/token.ts leastTokenLength), and a batch's list is serialized only when its entries'
 * lengths may fit (awaitedFitsToken): 400 events 34 s -> 110 ms, 8,000 events 216 ms (the
 * 4 MB request's own cost); the batch's 1.5 s -> 55 ms.
 *
 * What this test holds, without timing anything: how many `JSON.stringify` calls return a
 * text at least as long as the host's id (or the batch's ids together) while one stream
 * passes, one per event before (50 events: 50 and more), none now; that the lower bound
 * never refuses a token that fits; and the bytes the host gets (events without ids for the
 * single call, tokens without the awaited list for the batch).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_AWAITED_CHARS, MAX_RESUME_TOKEN_LENGTH, ResumeMintError, awaitedFitsToken, createResumeCodec, leastTokenLength } from '../../src/resume/token.js';
import { toolCallState } from '../helpers/resume-codec.js';
import { startRawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway } from '../helpers/gateway.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { rawPost } from '../helpers/raw.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const HUGE_ID = 'h'.repeat(1_000_000);
const EVENTS = 50;
const BATCH = 100;
const BATCH_ID_CHARS = 10_000;
const batchId = (k: number) => `b${k}-${'x'.repeat(BATCH_ID_CHARS)}`;
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}';
const notes = Array.from({ length: EVENTS }, (_, k) => `id: e${k}\ndata: ${NOTE}\n\n`).join('');
// Every text built before any count starts (the counts watch the whole process).
const SINGLE_REQUEST = `{"jsonrpc":"2.0","id":"${HUGE_ID}","method":"tools/call","params":{"name":"t","arguments":{}}}`;
const SINGLE_RESPONSE = `{"jsonrpc":"2.0","id":"${HUGE_ID}","result":{"content":[{"type":"text","text":"done"}]}}`;
const SINGLE_ANSWER = `${notes}data: ${SINGLE_RESPONSE}\n\n`;
const BATCH_REQUEST = `[${Array.from({ length: BATCH }, (_, k) => `{"jsonrpc":"2.0","id":"${batchId(k)}","method":"tools/call","params":{"name":"t","arguments":{}}}`).join(',')}]`;
const BATCH_RESPONSES = `[${Array.from({ length: BATCH }, (_, k) => `{"jsonrpc":"2.0","id":"${batchId(k)}","result":{"content":[{"type":"text","text":"done"}]}}`).join(',')}]`;
const BATCH_ANSWER = `${notes}data: ${BATCH_RESPONSES}\n\n`;
const BATCH_IDS_CHARS = BATCH * BATCH_ID_CHARS;

/** How many `JSON.stringify` calls returned `atLeast` characters or more while `run` ran. */
async function largeStringifies<T>(atLeast: number, run: () => Promise<T>): Promise<{ large: number; value: T }> {
  const stringify = JSON.stringify;
  let large = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    const text = stringify(...args);
    if (typeof text === 'string' && text.length >= atLeast) large++;
    return text;
  }) as typeof JSON.stringify;
  try {
    const value = await run();
    return { large, value };
  } finally {
    JSON.stringify = stringify;
  }
}

const STATE = toolCallState('e1', 'acme', 7);
const SELLER = new URL('http://127.0.0.1:9/mcp');
const codec = createResumeCodec({ secret: 'a-test-secret-that-is-at-least-32-characters-long', ttlMs: 3_600_000, now: () => 1_767_225_600_000 });

describe('a resume token over its length, refused before it is serialized', () => {
  test('a host id of 1,000,000 characters: resume_token_too_long, the id never serialized', async () => {
    let thrown: unknown;
    const { large } = await largeStringifies(HUGE_ID.length, async () => {
      try {
        codec.mint({ ...STATE, rpcId: HUGE_ID }, SELLER);
      } catch (err) {
        thrown = err;
      }
    });
    assert.ok(thrown instanceof ResumeMintError);
    assert.equal(thrown.code, 'resume_token_too_long');
    assert.equal(large, 0);
  });

  test('the bound refuses no token that fits: the longest seller id minted, one more character refused, at 4,096', () => {
    for (const [char, extra] of [['a', {}], ['é', {}], ['"', {}], ['\u2028', { awaited: ['sfoo', 'n1'] }], ['a', { rpcId: 'r'.repeat(300), toolName: '\u{1F600}'.repeat(50) }]] as const) {
      const state = (n: number) => ({ ...STATE, ...extra, upstreamId: char.repeat(n) });
      const fits = (n: number) => {
        try {
          codec.mint(state(n), SELLER);
          return true;
        } catch (err) {
          assert.ok(err instanceof ResumeMintError && err.code === 'resume_token_too_long', String(err));
          return false;
        }
      };
      let n = 0;
      while (fits(n + 1)) n++;
      const token = codec.mint(state(n), SELLER);
      assert.ok(token.length <= MAX_RESUME_TOKEN_LENGTH && token.length > MAX_RESUME_TOKEN_LENGTH - 8, `${JSON.stringify(char)}: ${token.length}`);
      assert.ok(leastTokenLength(state(n)) <= token.length);
      assert.ok(leastTokenLength(state(n + 1)) <= MAX_RESUME_TOKEN_LENGTH + 8, 'a longer state is refused after encoding, as before');
    }
  });

  test('a batch\'s awaited list fits as its JSON text does, and 100 ids of 10,000 characters are never serialized', async () => {
    for (const list of [[], ['a'], ['a'.repeat(MAX_AWAITED_CHARS - 4)], ['a'.repeat(MAX_AWAITED_CHARS - 3)], ['"'.repeat(600)], Array.from({ length: 204 }, () => 'sab'), Array.from({ length: 205 }, () => 'sab')]) {
      assert.equal(awaitedFitsToken(list), JSON.stringify(list).length <= MAX_AWAITED_CHARS, `${list.length} entries of ${list[0]?.length}`);
    }
    const ids = Array.from({ length: BATCH }, (_, k) => `s${batchId(k)}`);
    const { large, value } = await largeStringifies(BATCH_IDS_CHARS, async () => awaitedFitsToken(ids));
    assert.equal(value, false);
    assert.equal(large, 0);
  });
});

describe('through the gateway: 50 events with ids on the stream of a request with huge ids', { timeout: TEST_TIMEOUT_MS }, () => {
  const stack = useSellerAndGateway(
    () =>
      startRawSeller((req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(req.body.subarray(0, 1).toString() === '[' ? BATCH_ANSWER : SINGLE_ANSWER);
      }),
    (seller) => startGateway(agentsYaml({ acme: seller.url }, ['log_level: silent'])),
  );

  test('a tools/call with an id of 1,000,000 characters: the id is serialized for no event, the events go out without ids', async () => {
    const { large, value: res } = await largeStringifies(HUGE_ID.length, () => withTimeout(rawPost(stack.gateway.agentUrl('acme'), SINGLE_REQUEST, { 'mcp-protocol-version': '2025-06-18' })));
    assert.equal(res.status, 200);
    assert.equal(res.text(), `${`data: ${NOTE}\n\n`.repeat(EVENTS)}data: ${SINGLE_RESPONSE}\n\n`);
    assert.equal(large, 0);
  });

  test('a batch of 100 calls with ids of 10,000 characters: the ids are serialized together for no event, tokens go out without them', async () => {
    const { large, value: res } = await largeStringifies(BATCH_IDS_CHARS, () => withTimeout(rawPost(stack.gateway.agentUrl('acme'), BATCH_REQUEST, { 'mcp-protocol-version': '2025-03-26' })));
    assert.equal(res.status, 200);
    const blocks = res.text().split('\n\n').slice(0, -1);
    assert.equal(blocks.length, EVENTS + 1);
    for (const block of blocks.slice(0, EVENTS)) {
      const [idLine, dataLine] = block.split('\n');
      assert.match(idLine!, /^id: agw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      const payload = JSON.parse(Buffer.from(idLine!.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
      assert.equal(Object.hasOwn(payload, 'w'), false);
      assert.equal(dataLine, `data: ${NOTE}`);
    }
    assert.equal(blocks[EVENTS], `data: ${BATCH_RESPONSES}`);
    assert.equal(large, 0);
  });
});
