/**
 * Reported failure (found while checking the invalid-UTF-8 runs of
 * get-stream-invalid-utf8-run-undelivered-chunks.test.ts): on a stream without a total, the
 * undelivered count (src/response/sse-undelivered.ts) of a CR LF stream depended on whether
 * the seller's bytes were cut between the CR and the LF of an event's blank line. The parser
 * dispatches the event at that CR; the stage counted its whole block first, that LF included,
 * so the event's frame forgave the LF with the block, but cut after the CR, the LF came in the
 * next chunk and was counted after the frame: one byte more. A stream whose later bytes reached
 * the limit exactly ended (`sse_undelivered`) before its next event when cut there, and
 * delivered it whole.
 *
 * Now the stage takes a range that ends with CR LF as the range through the CR, then the LF
 * (sse-chunk-taker.ts `take`), as it takes a comment's line (sse-frame-lines.ts: a CR's LF counts
 * after the frame): the LF is counted after the frame however the bytes are cut.
 *
 * The stream (CR LF): note 1, a block of `x:` lines, note 2, which goes out when the count
 * (note 1's last LF, the `x:` block, note 2 through its blank line's CR) reaches the limit
 * exactly (each `x:` line counting 1,024 more than its bytes since hostile trial 52, F2:
 * test/helpers/charged-pad.ts); one byte more and the stream ends before it. Whole, cut at every byte outside the `x:` block (in it, at its edges and every 16th byte: short lines, ~1 KB), and
 * deflate-coded, the coded bytes cut at every byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { cut, runSseStage, type StageRun } from '../unit/sse-stage-kit.js';
import { cutPoints } from '../helpers/stream-cuts.js';
import { padCounting } from '../helpers/charged-pad.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const MAX_RESPONSE_BYTES = 120;
/** The undelivered limit: `max_response_bytes` + the per-event cap (`max_sse_event_bytes` unset: equal to it, + the slack). */
const LIMIT = 2 * MAX_RESPONSE_BYTES + SSE_PENDING_SLACK_BYTES;

const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const crlf = (text: string): string => text.replaceAll('\n', '\r\n');

/**
 * `over`: bytes past the limit point at note 2's blank line's CR. The count after note 1's
 * frame is its blank line's LF (1), then the `x:` block, then note 2 through that CR.
 */
const streamFor = (over: number): { stream: Buffer; pad: [number, number] } => {
  const head = crlf(note(1));
  const x = padCounting(LIMIT - 1 - (crlf(note(2)).length - 1) + over, '\r\n');
  return { stream: Buffer.from(head + x + crlf(note(2))), pad: [head.length, head.length + x.length] };
};

const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason ?? null });
const expected = (over: number): string =>
  JSON.stringify(over === 0 ? { body: note(1) + note(2), outcome: 'ok', reason: null } : { body: note(1), outcome: 'resumable_end', reason: 'sse_undelivered' });
const runIt = (chunks: Buffer[], codings: readonly string[] = []): Promise<StageRun> =>
  runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${MAX_RESPONSE_BYTES}`], codings });

for (const over of [0, 1]) {
  const name = `CR LF, note 2 ${over === 0 ? 'at' : 'one byte past'} the limit point`;
  test(`${name}: whole and cut at every byte, the same end`, async () => {
    const { stream, pad: [from, to] } = streamFor(over);
    const cuts: number[][] = [[], ...cutPoints(stream.length, [[from, to]], 16).map((at) => [at])];
    const differ: string[] = [];
    for (const at of cuts) if (brief(await runIt(cut(stream, at))) !== expected(over)) differ.push(at.length === 0 ? 'whole' : String(at[0]));
    assert.equal(differ.length, 0, `${differ.length} of ${cuts.length} (whole, cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
  });
  test(`${name}, deflate-coded: whole and its coded bytes cut at every byte, the same end`, async () => {
    const coded = deflateSync(streamFor(over).stream);
    const differ: string[] = [];
    for (let at = 0; at < coded.length; at++) if (brief(await runIt(cut(coded, at === 0 ? [] : [at]), ['deflate'])) !== expected(over)) differ.push(at === 0 ? 'whole' : String(at));
    assert.equal(differ.length, 0, `${differ.length} of ${coded.length} (whole, coded bytes cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
  });
}

test('one byte past: whole, and note 1 cut between the CR and the LF of its blank line, end alike (before: whole, note 2 went out)', async () => {
  const { stream } = streamFor(1);
  assert.equal(brief(await runIt(cut(stream, [crlf(note(1)).length - 1]))), expected(1), 'cut');
  assert.equal(brief(await runIt([stream])), expected(1), 'whole');
});
