/**
 * A line ended by a lone CR, then the blank line's CR LF cut between chunks: the token counts
 * the LF still to come (sse-boundaries.ts lfExpected). Was one byte short
 * (test/regressions/sse-crlf-split-token-undercount.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
test('`id: x\\r\\r` | `\\n` (id-only) and `id: x\\rdata: y\\r\\r` | `\\n` (event): the token counts the LF', async () => {
  const a = await runSseStage(['id: x\r\r', '\n']);
  const b = await runSseStage(['id: x\rdata: y\r\r', '\n']);
  assert.deepEqual([a.body, b.body], ['id: tok(x,8)\n\n', 'id: tok(x,16)\ndata: y\n\n']);
});
