/**
 * The undelivered count of a stream without a total (src/response/sse-undelivered.ts; hostile
 * trial 37, F1) ends the standalone GET stream at the same byte however the seller's bytes
 * are cut into chunks: the stage takes that stream's parsed blocks one at a time, holds,
 * forwards raw or reads as a simple block only what fits under the limit, and parses a range
 * that crosses it only up to the limit point. Here a mixed stream (raw notifications, id-only
 * blocks, dropped responses, unknown-field blocks, comments, a response held as bytes, CR line
 * endings) is run whole and cut in two at every byte, and in three at a spread of pairs, at
 * several limits: the host gets the same bytes and the exchange the same outcome and reason.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RpcPeek } from '../../src/exchange.js';
import { cut, runSseStage, type StageRun } from './sse-stage-kit.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const response = (id: number, pad: number): string => `{"jsonrpc":"2.0","id":${id},"result":{"p":"${'p'.repeat(pad)}"}}`;

const STREAM = Buffer.from(
  [
    note(1),
    'id: a\n\n',
    `data: ${response(5, 10)}\n\n`,
    'x: junk\nx: more junk\n\n',
    ': ping\n\n',
    `event: message\ndata: ${response(6, 120)}\n\n`,
    'id: b\n\n',
    note(2),
    `data: ${response(7, 40)}\r\n\r\n`,
    ': cr\r\rid: c\r\r',
    `data: ${response(8, 60)}\n\n`,
    'id: d\n\n',
    'x: endless\n'.repeat(30),
  ].join(''),
);

const LIMITS = [120, 170, 230, 290];

const outcome = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason, drops: run.drops });

const runCut = (limit: number, chunks: Buffer[]): Promise<StageRun> => runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${limit}`] });

for (const limit of LIMITS) {
  test(`max_response_bytes ${limit}: the GET stream ends at the same byte however it is cut`, async () => {
    const whole = await runCut(limit, [STREAM]);
    assert.equal(whole.exchange.outcome, 'resumable_end');
    assert.equal(whole.exchange.reason, 'sse_undelivered');
    assert.ok(whole.body.startsWith(note(1)), whole.body);
    const expected = outcome(whole);
    for (let at = 1; at < STREAM.length; at++) {
      assert.equal(outcome(await runCut(limit, cut(STREAM, [at]))), expected, `cut at ${at}`);
    }
    for (let a = 1; a < STREAM.length; a += 37) {
      for (let b = a + 1; b < STREAM.length; b += 53) assert.equal(outcome(await runCut(limit, cut(STREAM, [a, b]))), expected, `cuts at ${a}, ${b}`);
    }
  });
}

test('the limit counts from the last frame: the same stream with a limit past its longest undelivered run ends as the seller ends it', async () => {
  const run = await runCut(100_000, [Buffer.from(STREAM.toString('latin1').replace(/(x: endless\n)+$/, ''))]);
  assert.deepEqual([run.exchange.outcome, run.drops.length], ['ok', 4]);
});
