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
 * edges and a stride are cut (their lines are all alike).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { cut, runSseStage, type StageRun } from './sse-stage-kit.js';

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

/** The mixed stream for `limit`, each run of undelivered blocks after a frame starting with a pad of the per-event cap; and where the pads are. */
const streamFor = (limit: number): { stream: Buffer; pads: Array<[number, number]> } => {
  const padText = pad(limit + SSE_PENDING_SLACK_BYTES);
  assert.equal(padText.length, limit + SSE_PENDING_SLACK_BYTES);
  const parts = [
    note(1),
    padText,
    'id: a\n\n',
    `data: ${response(5, 10)}\n\n`,
    'x: junk\nx: more junk\n\n',
    ': ping\n\n',
    padText,
    `event: message\ndata: ${response(6, 120)}\n\n`,
    'id: b\n\n',
    note(2),
    padText,
    `data: ${response(7, 40)}\r\n\r\n`,
    ': cr\r\r',
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

/** Offsets to cut at: every byte outside the pads; in a pad, 4 bytes at each edge and a stride. */
const cutPoints = (length: number, pads: ReadonlyArray<[number, number]>): number[] => {
  const out: number[] = [];
  for (let at = 1; at < length; at++) {
    const inPad = pads.find(([from, to]) => at > from + 4 && at < to - 4);
    if (inPad === undefined || (at - inPad[0]) % 4099 === 0) out.push(at);
  }
  return out;
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
    assert.ok(whole.body.startsWith(note(1)), whole.body);
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
  const run = await runCut(100_000, [Buffer.from(stream.toString('latin1').replace(/(x: endless\n)+$/, ''), 'latin1')]);
  assert.deepEqual([run.exchange.outcome, run.drops.length], ['ok', 4]);
});
