/**
 * Reported failure (review 33, item 4): the SSE stage's `finally` (sse-stage.ts handleSseBody)
 * awaited the close of the decoders' generator (`decodedChunks.return()`) before releasing the
 * stream's buffer lease, the `onSseEnd` hook, the timers and the seller's body: had that close
 * ever rejected, those would all have been skipped, and handleSseBody, documented never to
 * reject, would have rejected. Now a rejected close is caught and the releases run.
 *
 * Input (the kit, a tools/call): a deflate-coded body (so the stage reads the decoders'
 * generator) whose generator's `return()` rejects; the seller sends the response, then a
 * progress event the stage never reads. Expected: the stage resolves, the host got the
 * response and its stream ended, `onSseEnd` ran once, and the seller's body was destroyed
 * (released unread).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import type { BodySource } from '../../src/response/body-source.js';
import { runSseStage } from '../unit/sse-stage-kit.js';

/** `body`, its generator's close rejecting after closing the real one. */
function closeRejects(body: BodySource): BodySource {
  return {
    get chunks() {
      return body.chunks;
    },
    chunksWithin(room) {
      const inner = body.chunksWithin(room);
      return {
        next: () => inner.next(),
        throw: (e: unknown) => inner.throw(e),
        return: async (v: unknown) => {
          await inner.return(v as Buffer);
          throw new Error('the decoders would not close');
        },
        [Symbol.asyncIterator]() {
          return this;
        },
        [Symbol.asyncDispose]: async () => {},
      } as AsyncGenerator<Buffer>;
    },
    raw: body.raw,
    decoded: body.decoded,
    stream: body.stream,
    direct: false,
  };
}

test("the decoders' close rejects: the stage still resolves and releases the body", { timeout: 10_000 }, async () => {
  const response = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } });
  const progress = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } });
  const coded = deflateSync(Buffer.from(`data: ${response}\n\ndata: ${progress}\n\n`));
  const r = await runSseStage([coded], { codings: ['deflate'], wrapBody: closeRejects });
  assert.equal(r.body, `data: ${response}\n\n`);
  assert.equal(r.ended, true);
  assert.equal(r.exchange.outcome, 'ok');
  assert.equal(r.sseEnds, 1);
  assert.equal(r.stream.destroyed, true);
});
