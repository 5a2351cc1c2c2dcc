/**
 * Regression (a review of 9e985ac, the first fix of a hostile new user's trial 15, H2, which
 * was reverted): a response whose decoders would take its agent over
 * `max_buffered_response_bytes` waited for room before they were made; on the standalone GET
 * stream (gzip, charged 64 KiB then) that wait began after the stream's head was written,
 * with no timer at all: the GET stream has no deadline, and the idle timeout is off while the
 * gateway waits. With the room held by a long-lived answer, the host's GET stream waited
 * forever, its events unread.
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch / a raw
 * POST), on 127.0.0.1. One agent, `max_buffered_response_bytes` 8 MiB; tool `quick` has
 * `sse_deadline_ms` 1000, tool `quickjson` `response_deadline_ms` 1000:
 * - tools/call `hold`: an SSE stream in br at lgwin 24 (charged 16 MiB + 2.75 MiB: over the
 *   cap alone), one notification flushed, then held until the test releases it;
 * - GET: the standalone GET stream in gzip, one notification flushed, then held open;
 * - tools/call `quick`: an SSE stream in br at lgwin 22, one notification flushed, held;
 * - tools/call `quickjson`: a JSON answer in br at lgwin 22, its first 100 bytes flushed, held.
 * Expectation (src/response/decode.ts, docs/configuration.md max_buffered_response_bytes):
 * only a request's answer decodes br, the only coding charged, so every wait for decoder room
 * has the deadline of its answer:
 * 1. `hold`'s stream holds 19,660,800 bytes while open.
 * 2. The GET stream, opened then, gets its notification at once: gzip is not charged, and
 *    the GET stream (not offered br) never waits for decoder room. No buffer wait counted.
 * 3. `quick` waits for room for its decoder (another's is charged, the agent over its cap):
 *    one buffer wait; at its sse_deadline_ms (1000) the host gets the `sse_deadline` error
 *    event for its id, its notification never decoded; the agent holds `hold`'s bytes again.
 * 4. `quickjson` likewise gets `deadline_exceeded` at its response_deadline_ms (1000).
 * 5. `hold`, released, delivers its response byte for byte; the agent then holds 0 bytes.
 * With 9e985ac (checked on its merge, cc05f6b): 2 failed, 1/5 (the GET stream waited for
 * room for its gzip decoder, no notification, no timer). On main before this fix, nothing was
 * charged: 4/5 failed (1 and 2: held 0; 3 and 4: no wait, `quick` got its notification,
 * `quickjson` its answer).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { expectedErrorFrame, expectedErrorJson, messageFrame, observedMsAtLeast } from '../support/hostile-seller.js';
import { BR24_BYTES, HEADERS, MIB, brotli, holdGzipGetStream, note, startBrSse, textResult, writeFlushed } from '../helpers/brotli-seller.js';
import { openAnswer, toolCallPost } from '../helpers/open-answer.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = 8 * MIB;
const QUICK_MS = 1000;
const done1 = textResult(1, 'done');

/** `hold`'s stream, held by the seller: call to write its response and end. */
let releaseHold: (() => void) | undefined;

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  if (req.method === 'GET') return holdGzipGetStream(res, 'get'); // held open until the host leaves
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
  const tool = msg.params.name;
  if (tool === 'quickjson') {
    const enc = brotli(22);
    res.on('close', () => enc.destroy());
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
    await writeFlushed(enc, res, textResult(msg.id, 'never').slice(0, 100));
    return; // held until the gateway leaves
  }
  const stream = await startBrSse(res, tool === 'hold' ? 24 : 22, msg.id);
  if (tool !== 'hold') return; // held until the gateway leaves
  releaseHold = () => stream.finish(done1);
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  '  a:',
  `    url: "${seller.url}"`,
  `    max_buffered_response_bytes: ${CAP}`,
  '    dedupe_text: off',
  '    tools:',
  `      quick: { sse_deadline_ms: ${QUICK_MS} }`,
  `      quickjson: { response_deadline_ms: ${QUICK_MS} }`,
]);
const guard = () => stack.gateway.app.gateway.guard;

/** A host's request to agent `a` whose answer is read as it arrives. */
const open = (init: RequestInit) => openAnswer(stack.gateway.agentUrl('a'), init);
const post = (id: number, tool: string): RequestInit => toolCallPost(id, tool, HEADERS);

describe('every wait for decoder room has a deadline; the GET stream never waits for one', { timeout: TEST_TIMEOUT_MS }, () => {
  let hold: Awaited<ReturnType<typeof open>>;

  test('a long-lived br answer holds its decoder, over the cap alone', async () => {
    hold = await open(post(1, 'hold'));
    assert.equal(hold.status, 200);
    await until('hold has its notification', () => hold.text === messageFrame(note(1)));
    assert.equal(guard().heldBytes('a'), BR24_BYTES);
  });

  test('the standalone GET stream (gzip) opened now gets its notification at once', async () => {
    const waits = guard().bufferWaits('a');
    const get = await open({ headers: { accept: 'text/event-stream', ...HEADERS } });
    try {
      assert.equal(get.status, 200);
      await until('the GET stream has its notification', () => get.text === messageFrame(note('get')));
      assert.equal(guard().bufferWaits('a'), waits);
      assert.equal(guard().heldBytes('a'), BR24_BYTES);
    } finally {
      get.cancel();
      await get.done;
    }
  });

  test('a br stream waiting for decoder room gets sse_deadline at its sse_deadline_ms', async () => {
    const waits = guard().bufferWaits('a');
    const quick = await open(post(2, 'quick'));
    assert.equal(quick.status, 200);
    await until('quick waits for room', () => guard().bufferWaits('a') === waits + 1);
    const text = await withTimeout(quick.done, undefined, 'quick');
    const observedMs = observedMsAtLeast(text, QUICK_MS);
    assert.equal(text, expectedErrorFrame({ id: 2, method: 'tools/call', toolName: 'quick', reason: 'sse_deadline', limitMs: QUICK_MS, observedMs }));
    await until('quick gave back its first chunk', () => guard().heldBytes('a') === BR24_BYTES);
  });

  test('a br JSON answer waiting for decoder room gets deadline_exceeded at its response_deadline_ms', async () => {
    const waits = guard().bufferWaits('a');
    const r = await withTimeout(rawPost(stack.gateway.agentUrl('a'), toolCall(3, 'quickjson'), HEADERS), undefined, 'quickjson');
    assert.equal(guard().bufferWaits('a'), waits + 1);
    assert.equal(r.status, 200);
    const observedMs = observedMsAtLeast(r.text(), QUICK_MS);
    assert.equal(r.text(), expectedErrorJson({ id: 3, method: 'tools/call', toolName: 'quickjson', reason: 'deadline_exceeded', limitMs: QUICK_MS, observedMs }));
    await until('quickjson gave back its first chunk', () => guard().heldBytes('a') === BR24_BYTES);
  });

  test('the long-lived answer, released, delivers its response; then nothing is held', async () => {
    releaseHold!();
    assert.equal(await withTimeout(hold.done, undefined, 'hold'), messageFrame(note(1)) + messageFrame(done1));
    await until('it gave its decoder back', () => guard().heldBytes('a') === 0);
  });
});
