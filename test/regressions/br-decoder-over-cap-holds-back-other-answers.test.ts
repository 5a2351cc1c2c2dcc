/**
 * Regression (a review of 0bb3129, which charges a br decoder to its agent's
 * `max_buffered_response_bytes`; a hostile new user's trial 15, H2): two things the docs said
 * of that charge were not so.
 * 1. README: "a seller holding `br` streams open holds back only its own agent's `br`
 *    answers". Not only its `br` answers: a decoder's charge counts in the agent's held bytes,
 *    so while decoders take the agent over its cap, every answer of the agent that is not its
 *    oldest response holding data waits after its first chunk (the oldest-first rule,
 *    src/admission/agent-guard.ts): the agent's answers are received one at a time, and a slow
 *    oldest one (a seller dribbling its body) holds an uncoded 1 KiB answer back as long as it
 *    lasts.
 * 2. docs/configuration.md, README, agent-guard.ts: what one agent's responses hold while
 *    received is "at most this (or one response's br decoder, 18.75 MiB at most, when that is
 *    larger) + the oldest response + one chunk per other". One response's decoders are charged
 *    when no other response's are, whatever the data held (BufferLease.mustWaitForDecoders: one
 *    goes over the cap alone), so the data the others took while under the cap (up to the cap)
 *    and that decoder are held together: the bound is the cap + one response's decoders.
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch), on
 * 127.0.0.1. One agent, `max_buffered_response_bytes` 2 MiB, tool `tiny` with
 * `max_response_bytes` 1000.
 * - `stream`: an SSE stream in br at lgwin 22 (7,077,888 bytes charged), one notification
 *   flushed, then held until the test releases it (the response event, the end);
 * - `tiny`: an uncoded JSON answer of 900 bytes, its first 100 sent, the rest held;
 * - `bulk`: an uncoded JSON answer (chunked) of 2 MiB, its first 1.5 MiB sent, the rest held;
 * - `quick`: an uncoded JSON answer of 1024 bytes, whole;
 * - `brjson`: a JSON answer of 1000 bytes in br at lgwin 22, whole.
 * Expectation (the docs as now written):
 * 1. With `stream` open between events and `tiny` holding its 100 bytes: `quick` waits (one
 *    buffer wait, its 1024 bytes held, no answer after 300 ms), and is answered byte for byte
 *    once `tiny` ends.
 * 2. `tiny` (100 bytes) and `bulk` (1,572,864 bytes, under the cap) held: `brjson` has its
 *    decoder charged at once (no other decoder is): the agent holds 100 + 1,572,864 +
 *    7,077,888 + 1000 = 8,651,852 bytes, over the old formula's 2 MiB max 7,077,888 + 1000 +
 *    2 x 65,536 = 7,209,960, within the new one's 2,097,152 + 7,077,888 + 1000 + 131,072.
 * After each, the agent holds 0 bytes. These pin the behaviour the docs now describe (the
 * code is unchanged: the defects were the docs' words).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { messageFrame, resultMessageOfSize } from '../support/hostile-seller.js';
import { BR22_BYTES, HEADERS, MIB, note, startBrSse, textResult } from '../helpers/brotli-seller.js';
import { openAnswer, toolCallPost, type OpenAnswer } from '../helpers/open-answer.js';
import { rawPost, toolCall, type RawResponse } from '../helpers/raw.js';
import { until as untilWhat, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = 2 * MIB;
const TINY_BYTES = 900;
const TINY_FIRST = 100;
const BULK_BYTES = 2 * MIB;
const BULK_FIRST = 1.5 * MIB;
const QUICK_BYTES = 1024;
const BRJSON_BYTES = 1000;

/** The answers the seller holds, by JSON-RPC id: call to write the rest and end. */
const held = new Map<number, () => void>();

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
  const name = msg.params.name;
  if (name === 'stream') {
    const stream = await startBrSse(res, 22, msg.id);
    held.set(msg.id, () => stream.finish(textResult(msg.id, 'done')));
    return;
  }
  if (name === 'brjson') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
    res.end(zlib.brotliCompressSync(resultMessageOfSize(msg.id, BRJSON_BYTES), { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 22 } }));
    return;
  }
  const size = name === 'tiny' ? TINY_BYTES : name === 'bulk' ? BULK_BYTES : QUICK_BYTES;
  const body = Buffer.from(resultMessageOfSize(msg.id, size));
  const first = name === 'tiny' ? TINY_FIRST : name === 'bulk' ? BULK_FIRST : size;
  res.writeHead(200, { 'content-type': 'application/json', ...(name === 'bulk' ? {} : { 'content-length': size }) });
  if (first === size) return void res.end(body);
  res.write(body.subarray(0, first));
  held.set(msg.id, () => res.end(body.subarray(first)));
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  `  a: { url: "${seller.url}", max_buffered_response_bytes: ${CAP}, response_deadline_ms: 8000, dedupe_text: off, tools: { tiny: { max_response_bytes: 1000 } } }`,
]);
const guard = () => stack.gateway.app.gateway.guard;

const until = (what: string, ok: () => boolean): Promise<void> => untilWhat(what, ok, () => `held ${guard().heldBytes('a')}`);

function call(id: number, name: string): Promise<RawResponse> {
  return withTimeout(rawPost(stack.gateway.agentUrl('a'), toolCall(id, name), HEADERS), undefined, `${name} ${id}`);
}

function assertAnswered(r: RawResponse, id: number, bytes: number): void {
  assert.equal(r.status, 200);
  assert.equal(r.text(), resultMessageOfSize(id, bytes));
}

/** A host's request whose answer is read as it arrives: `text` so far, `done` at its end. */
async function openStream(id: number): Promise<OpenAnswer> {
  const stream = await openAnswer(stack.gateway.agentUrl('a'), toolCallPost(id, 'stream', HEADERS));
  assert.equal(stream.status, 200);
  return stream;
}

describe('a br decoder over the cap: what the agent\'s other answers see, and what it holds', { timeout: TEST_TIMEOUT_MS }, () => {
  test('with a br stream open over the cap, an uncoded 1 KiB answer waits for the agent\'s oldest answer', async () => {
    const stream = await openStream(1);
    await until('the br stream has its notification', () => stream.text === messageFrame(note(1)));
    assert.equal(guard().heldBytes('a'), BR22_BYTES);

    const tiny = call(2, 'tiny');
    await until('tiny holds its first bytes', () => guard().heldBytes('a') === BR22_BYTES + TINY_FIRST);
    const waits = guard().bufferWaits('a');
    let quickDone = false;
    const quick = call(3, 'quick').finally(() => (quickDone = true));
    await until('quick waits', () => guard().bufferWaits('a') === waits + 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(quickDone, false, 'quick is held back by tiny, the oldest answer');
    assert.equal(guard().heldBytes('a'), BR22_BYTES + TINY_FIRST + QUICK_BYTES);

    held.get(2)!();
    assertAnswered(await tiny, 2, TINY_BYTES);
    assertAnswered(await quick, 3, QUICK_BYTES);
    assert.equal(guard().bufferWaits('a'), waits + 1);

    held.get(1)!();
    assert.equal(await withTimeout(stream.done, undefined, 'the br stream'), messageFrame(note(1)) + messageFrame(textResult(1, 'done')));
    await until('the agent holds nothing', () => guard().heldBytes('a') === 0);
  });

  test('one br decoder is charged beside data up to the cap: the agent holds the cap + that decoder', async () => {
    const tiny = call(4, 'tiny');
    await until('tiny holds its first bytes', () => guard().heldBytes('a') === TINY_FIRST);
    const bulk = call(5, 'bulk');
    await until('bulk holds its first part', () => guard().heldBytes('a') === TINY_FIRST + BULK_FIRST);
    const brjson = call(6, 'brjson');
    const expected = TINY_FIRST + BULK_FIRST + BR22_BYTES + BRJSON_BYTES;
    await until('brjson holds its decoder and its message', () => guard().heldBytes('a') === expected);
    assert.equal(expected, 8_651_852);
    assert.ok(expected > BR22_BYTES + 1000 + 2 * 65_536, 'over max(cap, decoder) + oldest + one chunk per other');
    assert.ok(expected <= CAP + BR22_BYTES + 1000 + 2 * 65_536, 'within cap + decoder + oldest + one chunk per other');

    held.get(4)!();
    held.get(5)!();
    assertAnswered(await tiny, 4, TINY_BYTES);
    assertAnswered(await bulk, 5, BULK_BYTES);
    assertAnswered(await brjson, 6, BRJSON_BYTES);
    await until('the agent holds nothing', () => guard().heldBytes('a') === 0);
  });
});
