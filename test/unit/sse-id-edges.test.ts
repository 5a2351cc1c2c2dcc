/**
 * Resume tokens at the edges of the SSE stage's whole-chunk path (src/response/sse-stage.ts,
 * SseIdFieldWatch in src/response/sse-boundaries.ts), the cases an SDK 2025-11-25 seller
 * produces: a priming event (an id, `retry:`, empty data) and then the end of its stream,
 * in one chunk or cut anywhere; and a stream that starts with a BOM cut over chunk edges
 * (the decoder drops the BOM, so the parser sees the `id:` line: its token must still carry
 * the exact count).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseIdFieldWatch } from '../../src/response/sse-boundaries.js';
import { runSseStage } from './sse-stage-kit.js';
import { cutsWithOneByteMiddle, kitTokenAdded } from '../helpers/sse-token-model.js';

const PRIMING = 'id: p1\nretry: 25\ndata: \n\n';
/**
 * The priming block's count: its bytes and the 2 its encoding adds (the `retry:` goes out as a
 * block of its own, its value clamped to 500: sse-encode.ts clampSseRetryMs; sse-encoding-charge.ts charge).
 */
const PRIMING_COUNT = Buffer.byteLength('retry: 500\n\nid: p1\ndata: \n\n');
const progress = 'event: message\nid: p2\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}\n\n';


test('a priming event, then the stream closes: its token goes out and the stream ends resumable, however it is cut', async () => {
  const bytes = Buffer.from(PRIMING + progress);
  // p2's count includes what p1's token added to the host's stream (sse-event-ids.ts chargeToken).
  assert.equal(PRIMING_COUNT, Buffer.byteLength(PRIMING) + 2);
  const through = [PRIMING_COUNT, bytes.length + 2 + kitTokenAdded('p1', PRIMING_COUNT)];
  for (const chunks of cutsWithOneByteMiddle(bytes)) {
    const r = await runSseStage(chunks);
    const label = JSON.stringify(chunks.map((c) => c.length));
    assert.deepEqual([...r.body.matchAll(/^id: tok\((\w+),(\d+)\)$/gm)].map((m) => [m[1], Number(m[2])]), [['p1', through[0]], ['p2', through[1]]], label);
    assert.equal(r.exchange.outcome, 'resumable_end', label);
    assert.ok(r.ended, label);
  }
});

test('a priming event alone, its blank line arriving with the close: still its token, still resumable', async () => {
  for (const chunks of [[PRIMING], [PRIMING.slice(0, -1), '\n'], [PRIMING.slice(0, -2), '\n\n']]) {
    const r = await runSseStage(chunks);
    assert.match(r.body, new RegExp(`^retry: 500\\n\\nid: tok\\(p1,${PRIMING_COUNT}\\)\\ndata: \\n\\n$`));
    assert.equal(r.exchange.outcome, 'resumable_end');
  }
});

test('CR LF line endings cut anywhere, between a CR and its LF too: every token counts through its event block', async () => {
  // test/regressions/sse-crlf-split-token-undercount.test.ts: a CR at a chunk's end that
  // ends a blank line gets its event dispatched at once, its LF counted in the token.
  const bytes = Buffer.from((PRIMING + progress).replaceAll('\n', '\r\n'));
  const priming = Buffer.byteLength(PRIMING.replaceAll('\n', '\r\n'));
  for (const chunks of cutsWithOneByteMiddle(bytes)) {
    const r = await runSseStage(chunks);
    const label = JSON.stringify(chunks.map((c) => c.length));
    assert.deepEqual([...r.body.matchAll(/^id: tok\((\w+),(\d+)\)$/gm)].map((m) => [m[1], Number(m[2])]), [['p1', priming], ['p2', bytes.length + kitTokenAdded('p1', priming)]], label);
    assert.equal(r.exchange.outcome, 'resumable_end', label);
  }
});

test('a lone CR after a line ended by LF, at a chunk end: the token counts the LF that may follow (one byte over when none does)', async () => {
  const event = 'id: e1\ndata: x\n\r';
  for (const [chunks, count] of [
    [[event, '\n'], event.length + 1],
    [[event, 'data: y\n\n'], event.length + 1],
  ] as const) {
    const r = await runSseStage(chunks);
    assert.deepEqual([...r.body.matchAll(/^id: tok\((\w+),(\d+)\)$/gm)].map((m) => [m[1], Number(m[2])]), [['e1', count]], JSON.stringify(chunks));
  }
});

test('a BOM cut over the first chunks: the id after it gets the exact count', async () => {
  // No id after the first event: nothing else would make the stage feed event by event.
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(PRIMING + progress.replace('id: p2\n', ''))]);
  // Also: the BOM cut, and the id line complete (nothing held) in the chunk that ends the BOM.
  const idLineEnd = 3 + 'id: p1\n'.length;
  const split = [1, 2].map((a) => [bytes.subarray(0, a), bytes.subarray(a, idLineEnd), bytes.subarray(idLineEnd)]);
  for (const chunks of [...cutsWithOneByteMiddle(bytes), ...split]) {
    const r = await runSseStage(chunks);
    assert.deepEqual(
      [...r.body.matchAll(/^id: tok\((\w+),(\d+)\)$/gm)].map((m) => [m[1], Number(m[2])]),
      [['p1', 3 + Buffer.byteLength(PRIMING)]],
      JSON.stringify(chunks.map((c) => c.length)),
    );
  }
});

test('SseIdFieldWatch: an id line behind a BOM cut over chunks is seen', () => {
  for (const parts of [[[0xef], [0xbb, 0xbf]], [[0xef, 0xbb], [0xbf]], [[0xef], [0xbb], [0xbf]]]) {
    const watch = new SseIdFieldWatch();
    const chunks = parts.map((p) => Buffer.from(p));
    chunks[chunks.length - 1] = Buffer.concat([chunks[chunks.length - 1]!, Buffer.from('id: 1\ndata: a\n\n')]);
    const answers = chunks.map((c, i) => watch.check(c, i === chunks.length - 1 ? c.length : -1));
    assert.equal(answers.at(-1), true, JSON.stringify(parts));
  }
});
