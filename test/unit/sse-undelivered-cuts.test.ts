/**
 * The undelivered count of a stream without a total (src/response/sse-undelivered.ts; hostile
 * trial 37, F1) ends the standalone GET stream at the same byte however the seller's bytes
 * are cut into chunks: the stage takes that stream's parsed blocks one at a time, holds,
 * forwards raw or reads as a simple block only what fits under the limit, and parses a range
 * that crosses it only up to the limit point. Here a mixed stream (raw notifications, id-only
 * blocks, dropped responses, unknown-field blocks, comments, a response held as bytes, CR line
 * endings) is run whole and cut in two at every byte of it, and in three at a spread of
 * pairs, at several limits: the host gets the same bytes and the exchange the same outcome
 * and reason.
 *
 * The count's limit is `max_response_bytes` plus the per-event cap (`max_sse_event_bytes`,
 * unset here: equal to it, + SSE_PENDING_SLACK_BYTES; test/regressions/
 * get-stream-event-at-cap-ends-stream.test.ts). So each run of undelivered blocks starts with
 * a pad: a block of unknown-field lines of exactly that cap's bytes, after which the run has
 * `max_response_bytes` of room, as it had before the cap was added. Within the pads only their
 * edges and a stride are cut (their lines are all alike). The pads count their lines' charge
 * (below): sized by their bytes alone, as they were from 477ed0c on, each counted ~2x the cap
 * and every run ended inside the first pad, ~32 KB in, where cuts are 4,099 bytes apart (and at
 * twice the bytes per run). Counted, the runs at these limits end at the first block of `x:`
 * lines after the first pad (2,072 counted: more than any limit here), cut at every byte. A comment only lowers the count
 * (64 x its frame's bytes: sse-undelivered.ts UNDELIVERED_FRAME_CREDIT), so the comments
 * before pads are followed by a notification, which sets it to 0. Each unknown-field line
 * also counts SSE_IGNORED_LINE_CHARGE_BYTES (1,024) more than its bytes (hostile trial 52, F2:
 * src/response/sse-ignored-lines.ts): the pads end their runs sooner, at the same byte
 * however they are cut.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { SSE_IGNORED_LINE_CHARGE_BYTES as CHARGE } from '../../src/response/sse-ignored-lines.js';
import { cut, runSseStage, type StageRun } from './sse-stage-kit.js';
import { cutPoints } from '../helpers/stream-cuts.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const response = (id: number, pad: number): string => `{"jsonrpc":"2.0","id":${id},"result":{"p":"${'p'.repeat(pad)}"}}`;

/** A block of unknown-field lines of exactly `bytes` bytes, its blank line included. */
const pad = (bytes: number): string => {
  const line = `x: ${'a'.repeat(996)}\n`;
  const lines = Math.floor((bytes - 1) / line.length) - 1;
  const last = bytes - 1 - lines * line.length - 'x: \n'.length;
  return `${line.repeat(lines)}x: ${'b'.repeat(last)}\n\n`;
};

/**
 * A block of unknown-field lines that counts exactly `count`: its bytes, its blank line
 * included, plus CHARGE for each line. The lines share the bytes evenly (at most 1,000 each).
 */
const countedPad = (count: number): string => {
  const lines = Math.ceil((count - 1) / (1000 + CHARGE));
  const text = count - 1 - lines * CHARGE;
  const out = Array.from({ length: lines }, (_, i) => `x: ${'a'.repeat(Math.floor(text / lines) + (i < text % lines ? 1 : 0) - 4)}\n`).join('') + '\n';
  assert.equal(out.length + lines * CHARGE, count);
  return out;
};

/** The mixed stream for `limit`, each run of undelivered blocks after a frame starting with a pad that counts the per-event cap; and where the pads are. */
const streamFor = (limit: number): { stream: Buffer; pads: Array<[number, number]> } => {
  const padText = countedPad(limit + SSE_PENDING_SLACK_BYTES);
  const parts = [
    note(1),
    padText,
    'id: a\n\n',
    `data: ${response(5, 10)}\n\n`,
    'x: junk\nx: more junk\n\n',
    ': ping\n\n',
    note(3),
    padText,
    `event: message\ndata: ${response(6, 120)}\n\n`,
    'id: b\n\n',
    note(2),
    padText,
    `data: ${response(7, 40)}\r\n\r\n`,
    ': cr\r\r',
    note(4),
    padText,
    'id: c\r\r',
    `data: ${response(8, 60)}\n\n`,
    'id: d\n\n',
    'x: endless\n'.repeat(30),
  ];
  const pads: Array<[number, number]> = [];
  let at = 0;
  for (const part of parts) {
    if (part === padText) pads.push([at, at + part.length]);
    at += part.length;
  }
  return { stream: Buffer.from(parts.join('')), pads };
};


/** `max_response_bytes` (max_sse_event_bytes unset: equal to it): the room each run has after its pad. */
const LIMITS = [120, 170, 230, 290];

const outcome = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason, drops: run.drops });

const runCut = (limit: number, chunks: Buffer[]): Promise<StageRun> => runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${limit}`] });

for (const limit of LIMITS) {
  test(`max_response_bytes ${limit}: the GET stream ends at the same byte however it is cut`, async () => {
    const { stream, pads } = streamFor(limit);
    const whole = await runCut(limit, [stream]);
    assert.equal(whole.exchange.outcome, 'resumable_end');
    assert.equal(whole.exchange.reason, 'sse_undelivered');
    // Past the first pad, its id-only block and a dropped response, the `x: junk` block ends it.
    assert.equal(whole.body, `${note(1)}id: tok(a,0)\n\n`);
    assert.deepEqual(whole.drops, ['get_stream_response']);
    const expected = outcome(whole);
    const points = cutPoints(stream.length, pads);
    for (const at of points) assert.equal(outcome(await runCut(limit, cut(stream, [at]))), expected, `cut at ${at}`);
    for (let a = 0; a < points.length; a += 37) {
      for (let b = a + 1; b < points.length; b += 53) assert.equal(outcome(await runCut(limit, cut(stream, [points[a]!, points[b]!]))), expected, `cuts at ${points[a]}, ${points[b]}`);
    }
  });
}

test('the limit counts from the last frame: the same stream with a limit past its longest undelivered run ends as the seller ends it', async () => {
  const { stream } = streamFor(290);
  // Its four pads, counting 65,826 each (32,034 bytes and 33 unknown-field lines), count
  // ~270,000 bytes with the frames between them (a notification forgives 64 x its ~75 bytes):
  // under the limit at max_response_bytes 300,000 (665,536).
  const run = await runCut(300_000, [Buffer.from(stream.toString('latin1').replace(/(x: endless\n)+$/, ''), 'latin1')]);
  assert.deepEqual([run.exchange.outcome, run.drops.length], ['ok', 4]);
});

/**
 * A comment or `retry:` line in the middle of a block (review of e72ea9d, flaw 1): its frame
 * clears the count only through its own line. Before, the stage counted the whole range it
 * parsed first, and the frame set the count to 0 with the bytes after that line in the range:
 * sent whole, the block's `x:` lines after the comment were forgiven and note 2 went out; cut
 * right after the comment, they were counted and the stream ended before note 2.
 * The block: a 60-byte `event:` line, the frame's line, then `x:` lines of `after` bytes and
 * the blank line; then note 2. After the frame's line the count holds `after` + 1,024 per `x:`
 * line (their charge, hostile trial 52, F2) + 1 + note 2's bytes: at the limit note 2 goes out,
 * one byte more and the stream ends before it. (The line before the frame was a 60-byte `x:`
 * line; with its charge, 1,084 bytes, a 4-byte comment's frame, forgiving 256, would no longer
 * clear it: an `event:` line, which costs its bytes only, keeps what is tested.)
 */
const IN_BLOCK_LIMIT = 120;
/** The undelivered limit at `max_response_bytes` IN_BLOCK_LIMIT (max_sse_event_bytes unset: equal to it). */
const IN_BLOCK_ROOM = 2 * IN_BLOCK_LIMIT + SSE_PENDING_SLACK_BYTES;
/** The unknown-field lines of `after` bytes ({@link pad} less its blank line), each charged CHARGE. */
const xLines = (after: number): number => pad(after + 1).split('\n').length - 2;
/** The `x:` bytes whose count with their charges is `target`, where one byte more counts one more (no line added). */
const afterFor = (target: number): number => {
  for (let after = target; after > 0; after--) if (after + CHARGE * xLines(after) === target && xLines(after + 1) === xLines(after)) return after;
  throw new Error(`no x: lines count ${target}`);
};
const inBlockStream = (frameLine: string, after: number): { stream: Buffer; pads: Array<[number, number]> } => {
  const head = note(1) + `event: ${'a'.repeat(52)}\n` + frameLine;
  const lines = pad(after + 1).slice(0, -1);
  assert.equal(lines.length, after);
  return { stream: Buffer.from(head + lines + '\n' + note(2)), pads: [[head.length, head.length + after]] };
};
for (const [name, frameLine, frame] of [
  ['a comment', ': c\n', ': c\n'],
  ['a retry: line', 'retry: 1000\n', 'retry: 1000\n\n'],
] as const) {
  for (const over of [0, 1]) {
    const after = afterFor(IN_BLOCK_ROOM - 1 - note(2).length) + over;
    test(`${name} in the middle of a block clears the count through its own line only, ${over === 0 ? 'at' : 'one byte past'} the limit: the same end at every cut`, async () => {
      const { stream, pads } = inBlockStream(frameLine, after);
      const expected = JSON.stringify(over === 0 ? { body: note(1) + frame + note(2), outcome: 'ok' } : { body: note(1) + frame, outcome: 'resumable_end', reason: 'sse_undelivered' });
      const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason });
      assert.equal(brief(await runCut(IN_BLOCK_LIMIT, [stream])), expected, 'whole');
      for (const at of cutPoints(stream.length, pads)) assert.equal(brief(await runCut(IN_BLOCK_LIMIT, cut(stream, [at]))), expected, `cut at ${at}`);
    });
  }
}
