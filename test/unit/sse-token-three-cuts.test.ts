/**
 * Resume tokens: every cut of a stream of id-only blocks and events into three chunks gives
 * the reference model's host body, exact counts included (LF and CR LF endings).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage } from './sse-stage-kit.js';
import { allCuts, model } from '../helpers/sse-token-model.js';
const BLOCKS = ['data: a\n\n', 'id: x1\n\n', 'id: e1\ndata: b\n\n', ': c\nid: x2\n\n', 'id: x3\nretry: 10\n\n', 'event: foo\nid: x4\n\n', 'id\n\n', 'id: y1\nid: y2\n\n', 'id: z\ndata: c\n\n'];
for (const eol of ['\n', '\r\n']) test(`every 3-cut ${JSON.stringify(eol)}`, async () => {
  const bytes = Buffer.from(BLOCKS.join('').replaceAll('\n', eol));
  const exp = model(bytes).body;
  const fails: string[] = [];
  let runs = 0;
  for (const chunks of allCuts(bytes, true)) {
    runs++;
    const r = await runSseStage(chunks);
    if (r.body !== exp) fails.push(`${JSON.stringify(chunks.map((c) => c.toString()))}\n ${JSON.stringify(r.body)}`);
    if (fails.length > 3) break;
  }
  console.log('runs', runs);
  assert.deepEqual(fails, []);
});
