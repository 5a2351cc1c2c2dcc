/**
 * Regression (a leftover of trial 15 H2's fix, named in its review and in session 20's note:
 * "waits for decoder room are not first-come-first-served"): a br answer whose decoder would
 * take its agent over `max_buffered_response_bytes` beside the decoders already charged
 * waited for room, but an answer that came after it with a smaller window, which did fit
 * beside them, was charged at once and passed it. Smaller windows coming one after another
 * kept a 16 MiB window waiting until its deadline.
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch), on
 * 127.0.0.1. One agent, `max_buffered_response_bytes` 24 MiB; each tools/call is answered by
 * an SSE stream in br, one notification flushed, then held until the test finishes it:
 * `hold` at lgwin 22 (charged 7,077,888 bytes), then `big` at lgwin 24 (19,660,800: with
 * `hold`'s, over the cap), then `small` at lgwin 22 (with `hold`'s and `big`'s first chunk,
 * under the cap).
 * Expectation (src/admission/agent-guard.ts mustWaitForDecoders, docs/configuration.md
 * max_buffered_response_bytes: decoders wait first come, first served):
 * 1. `big` waits for room (one buffer wait), `small` then waits behind it (a second one):
 *    neither has its notification while `hold`'s decoder is charged.
 * 2. `hold` finished: `big` is charged and delivers its notification; `small` still waits
 *    (19,660,800 + 7,077,888 is over the cap beside `big`'s).
 * 3. `big` finished: `small` delivers its notification, then its response when finished; the
 *    agent holds 0 bytes at the end.
 * On main before the fix: 3/3 failed (`small` was charged at once and had its notification
 * beside `hold`'s, one buffer wait counted; the later steps' expectations of it with it).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { messageFrame } from '../support/hostile-seller.js';
import { BR22_BYTES, BR24_BYTES, HEADERS, MIB, note, startBrSse, textResult } from '../helpers/brotli-seller.js';
import { openAnswer, toolCallPost } from '../helpers/open-answer.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = 24 * MIB;
const LGWIN: Record<string, number> = { hold: 22, big: 24, small: 22 };

/** Each held stream's `finish`, by tool name. */
const finish = new Map<string, (data: string) => void>();

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { name: string } };
  const tool = msg.params.name;
  const stream = await startBrSse(res, LGWIN[tool]!, msg.id);
  finish.set(tool, stream.finish);
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  '  a:',
  `    url: "${seller.url}"`,
  `    max_buffered_response_bytes: ${CAP}`,
  '    dedupe_text: off',
  '    sse_deadline_ms: 60000',
]);
const guard = () => stack.gateway.app.gateway.guard;
const open = (id: number, tool: string) => openAnswer(stack.gateway.agentUrl('a'), toolCallPost(id, tool, HEADERS));

describe('decoder room is served first come, first served', { timeout: TEST_TIMEOUT_MS }, () => {
  let hold: Awaited<ReturnType<typeof open>>;
  let big: Awaited<ReturnType<typeof open>>;
  let small: Awaited<ReturnType<typeof open>>;

  test('a smaller window coming after a waiting larger one waits behind it', async () => {
    hold = await open(1, 'hold');
    await until('hold has its notification', () => hold.text === messageFrame(note(1)));
    assert.equal(guard().heldBytes('a'), BR22_BYTES);
    const waits = guard().bufferWaits('a');
    big = await open(2, 'big');
    await until('big waits for room', () => guard().bufferWaits('a') === waits + 1);
    small = await open(3, 'small');
    await until('small waits, or passed big', () => guard().bufferWaits('a') === waits + 2 || small.text !== '');
    assert.deepEqual([big.text, small.text, guard().bufferWaits('a')], ['', '', waits + 2]);
  });

  test('hold finished: big is charged and delivers; small still waits', async () => {
    finish.get('hold')!(textResult(1, 'hold done'));
    assert.equal(await withTimeout(hold.done, undefined, 'hold'), messageFrame(note(1)) + messageFrame(textResult(1, 'hold done')));
    await until('big has its notification', () => big.text === messageFrame(note(2)));
    assert.equal(small.text, '');
  });

  test('big finished: small delivers; the agent holds 0 bytes at the end', async () => {
    finish.get('big')!(textResult(2, 'big done'));
    assert.equal(await withTimeout(big.done, undefined, 'big'), messageFrame(note(2)) + messageFrame(textResult(2, 'big done')));
    await until('small has its notification', () => small.text === messageFrame(note(3)));
    assert.equal(guard().heldBytes('a'), BR22_BYTES);
    finish.get('small')!(textResult(3, 'small done'));
    assert.equal(await withTimeout(small.done, undefined, 'small'), messageFrame(note(3)) + messageFrame(textResult(3, 'small done')));
    await until('the agent holds nothing', () => guard().heldBytes('a') === 0);
    assert.equal(BR24_BYTES + BR22_BYTES > CAP, true, 'the premise: big and small do not fit together');
  });
});
