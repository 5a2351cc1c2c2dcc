/**
 * Regression (a review of 9e985ac, the first fix of a hostile new user's trial 15, H2, which
 * was reverted): a response holding nothing but its decoders' charge stayed in its agent's
 * oldest-first holding list (src/admission/agent-guard.ts), so an idle stream became the
 * agent's "oldest" response for good, and once the agent held more than its
 * `max_buffered_response_bytes`, no other answer could read on until its deadline. Checked
 * with the cap at 1 MiB: an idle gzip GET stream (64 KiB of decoder charge then) kept a
 * 1 MiB - 1000 byte JSON answer waiting until its `response_deadline_ms`. The same with a
 * POSTed br stream between two events (its decoder charged, 6.75 MiB at lgwin 22).
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch), on
 * 127.0.0.1. One agent, `max_buffered_response_bytes` 1 MiB, `response_deadline_ms` 3000:
 * - GET: the standalone GET stream in gzip, one notification flushed, then held open;
 * - tools/call `stream`: an SSE stream in br at lgwin 22, one notification flushed, then held
 *   until the test releases it (the response event, the end);
 * - tools/call `big`: a JSON answer (no coding) of exactly 1 MiB - 1000 bytes.
 * Expectation (docs/configuration.md max_buffered_response_bytes): the oldest-first order
 * counts data bytes only, so a response holding only its decoder (or nothing: gzip is not
 * charged) never holds the others back:
 * 1. With the GET stream idle: `big` is answered with the seller's bytes, byte for byte.
 * 2. With the br stream idle after its event (the agent holding 7,077,888 bytes, over its
 *    cap by that decoder alone): `big` is answered byte for byte; two `big` at once are both
 *    answered byte for byte (one waits for the other: the agent is over its cap).
 * 3. The br stream itself reads on although the agent is over its cap by its own decoder:
 *    released, it delivers its response event byte for byte; then the agent holds 0 bytes.
 * With 9e985ac (checked on its merge, cc05f6b): 2/2 failed, `big` answered
 * `deadline_exceeded` after 3 s in both (the idle stream was the oldest). On main before this
 * fix, nothing was charged: 1/2 failed, on the held count of 2 (0, not 7,077,888).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { messageFrame, resultMessageOfSize } from '../support/hostile-seller.js';
import { BR22_BYTES, HEADERS, MIB, holdGzipGetStream, note, startBrSse, textResult } from '../helpers/brotli-seller.js';
import { openAnswer, toolCallPost } from '../helpers/open-answer.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = MIB;
const BIG_BYTES = MIB - 1000;

/** The streams the seller holds open, by JSON-RPC id: call to write the response and end. */
const held = new Map<number, () => void>();

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  if (req.method === 'GET') return holdGzipGetStream(res, 'get'); // held open until the host leaves
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
  if (msg.params.name === 'big') {
    const body = resultMessageOfSize(msg.id, BIG_BYTES);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const stream = await startBrSse(res, 22, msg.id);
  held.set(msg.id, () => stream.finish(textResult(msg.id, 'done')));
}

const stack = useRawSellerAndGateway(answer, (seller) => [`  a: { url: "${seller.url}", max_buffered_response_bytes: ${CAP}, response_deadline_ms: 3000, dedupe_text: off }`]);
const guard = () => stack.gateway.app.gateway.guard;

/** A host's request to agent `a` whose answer is read as it arrives. */
const open = (init: RequestInit) => openAnswer(stack.gateway.agentUrl('a'), init);

/** `big` call `id`: asserts the seller's exact bytes came back. */
async function assertBigAnswered(id: number): Promise<void> {
  const r = await withTimeout(rawPost(stack.gateway.agentUrl('a'), toolCall(id, 'big'), HEADERS), undefined, `big ${id}`);
  assert.equal(r.status, 200);
  const expected = resultMessageOfSize(id, BIG_BYTES);
  assert.equal(r.text().length, expected.length, `big ${id}: ${r.text().slice(0, 300)}`);
  assert.equal(r.text(), expected);
}

describe('a response holding only its decoder (or nothing) never holds its agent\'s other answers back', { timeout: TEST_TIMEOUT_MS }, () => {
  test('an idle gzip GET stream: a 1 MiB - 1000 byte answer goes through', async () => {
    const get = await open({ headers: { accept: 'text/event-stream', ...HEADERS } });
    try {
      assert.equal(get.status, 200);
      await until('the GET stream has its notification', () => get.text === messageFrame(note('get')));
      await assertBigAnswered(1);
      assert.equal(guard().heldBytes('a'), 0, 'gzip is not charged');
    } finally {
      get.cancel();
      await get.done;
    }
  });

  test('an idle br stream between events (the agent over its cap by its decoder): the answers go through', async () => {
    const stream = await open(toolCallPost(2, 'stream', HEADERS));
    assert.equal(stream.status, 200);
    await until('the br stream has its notification', () => stream.text === messageFrame(note(2)));
    assert.equal(guard().heldBytes('a'), BR22_BYTES);

    await assertBigAnswered(3);
    await Promise.all([assertBigAnswered(4), assertBigAnswered(5)]);
    assert.equal(guard().heldBytes('a'), BR22_BYTES);

    // The stream itself reads on, its own decoder taking the agent over its cap.
    held.get(2)!();
    assert.equal(await withTimeout(stream.done, undefined, 'the br stream'), messageFrame(note(2)) + messageFrame(textResult(2, 'done')));
    await until('it gave its decoder back', () => guard().heldBytes('a') === 0);
  });
});
