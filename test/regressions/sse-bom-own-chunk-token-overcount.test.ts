/**
 * Reported failure (review of the SSE resume fixes, 2026-12-02): a UTF-8 BOM alone in the
 * seller's first chunk, then a CR LF stream: the id watch (sse-boundaries.ts SseIdFieldWatch)
 * did not look for `id:` in the chunk starting at byte 3, so that chunk was counted in one
 * piece and its event's token carried the count through the chunk's end (25 for 14 bytes).
 * The id-only block of the report now gives its id to the event after it (a new user's trial
 * 9, F3: sse-event-ids.ts pendingId), its token counted through that event; an event with the id
 * itself, before another, keeps the case of the report (a count through its own end).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from '../unit/sse-stage-kit.js';
import { allCuts } from '../helpers/sse-token-model.js';

/** Every 2/3-cut of the BOM and `body`: the host gets `expected(end)`, `end` = the BOM and `counted`. */
async function everyCut(body: string, counted: string, expected: (end: number) => string): Promise<void> {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]);
  const want = expected(3 + Buffer.byteLength(counted));
  const fails: string[] = [];
  for (const chunks of allCuts(bytes, true)) {
    const r = await runSseStage(chunks);
    if (r.body !== want) fails.push(`${JSON.stringify(chunks.map((c) => [...c]))} ${JSON.stringify(r.body)}`);
    if (fails.length > 3) break;
  }
  assert.deepEqual(fails, []);
}

test('BOM then an id-only block, every 2/3-cut: the token counts the BOM', async () => {
  for (const eol of ['\n', '\r\n']) {
    const body = `id: é1${eol}${eol}data: x${eol}${eol}`;
    await everyCut(body, body, (end) => `id: tok(é1,${end})\ndata: x\n\n`);
  }
});

test('BOM then an event with an id and another event, every 2/3-cut: the token counts the BOM, through its own event', async () => {
  for (const eol of ['\n', '\r\n']) {
    const first = `id: é1${eol}data: y${eol}${eol}`;
    await everyCut(`${first}data: x${eol}${eol}`, first, (end) => `id: tok(é1,${end})\ndata: y\n\ndata: x\n\n`);
  }
});
