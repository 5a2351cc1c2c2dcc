/**
 * Reported failure (review of the SSE resume fixes, 2026-12-02): a UTF-8 BOM alone in the
 * seller's first chunk, then a CR LF stream: the id watch (sse-boundaries.ts SseIdFieldWatch)
 * did not look for `id:` in the chunk starting at byte 3, so that chunk was counted in one
 * piece and its event's token carried the count through the chunk's end (25 for 14 bytes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from '../unit/sse-stage-kit.js';
import { allCuts } from '../helpers/sse-token-model.js';
test('BOM then an id-only block, every 2/3-cut: the token counts the BOM', async () => {
  for (const eol of ['\n', '\r\n']) {
    const body = `id: é1${eol}${eol}data: x${eol}${eol}`;
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]);
    const end = 3 + Buffer.byteLength(`id: é1${eol}${eol}`);
    const fails: string[] = [];
    for (const chunks of allCuts(bytes, true)) {
      const r = await runSseStage(chunks);
      if (r.body !== `id: tok(é1,${end})\n\ndata: x\n\n`) fails.push(`${JSON.stringify(chunks.map((c) => [...c]))} ${JSON.stringify(r.body)}`);
      if (fails.length > 3) break;
    }
    assert.deepEqual(fails, []);
  }
});
