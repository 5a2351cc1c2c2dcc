/**
 * Reported failure (a reviewer's suspicion, checked here): on the standalone GET stream the
 * undelivered count (src/response/sse-undelivered.ts) depended on how the seller's bytes were
 * chunked when a run of canonical `data:` blocks held invalid UTF-8. The planner
 * (sse-raw-events.ts) sends such a run to the parser as one segment, and the stage took that
 * segment as one piece (sse-chunk-taker.ts takePlanned): all its bytes were counted first, then each
 * event's frame lowered the count (to 0 at least), so the frame of an event in the middle of
 * the run also forgave the blocks after it in the same piece. Cut inside the run, those blocks
 * were counted after that frame. Here an event dropped after the last forwarded one of the run
 * (its data of 0xFF bytes goes over `max_sse_event_bytes` as U+FFFD: `sse_event`) was forgiven
 * whole and counted cut: the same bytes ended the stream (`sse_undelivered`) before a later
 * notification when cut, and delivered it when whole.
 *
 * Now the stage takes such a run one block at a time on a stream without a total (the block
 * ends found by one native search each; nothing more for any other segment).
 *
 * The stream: note 1; the run (an event forwarded with a U+FFFD, an event dropped, a valid
 * notification, an event dropped, an event forwarded with a U+FFFD, an event dropped); a
 * response (dropped, `get_stream_response`); a block of `x:` lines; note 2. Each frame in the
 * run forgives everything before it (64 x its data bytes), so after the response the count is
 * the bytes of the run's last block and of the response, and 1,024 for each of the two (events
 * dispatched and dropped, since trial 52's leftover: src/response/sse-ignored-lines.ts
 * SSE_DROPPED_EVENT_CHARGE_BYTES, charged at the event's dispatch however the bytes are cut):
 * note 2 goes out when the `x:` block
 * (its bytes, and 1,024 per line since hostile trial 52, F2: test/helpers/charged-pad.ts)
 * brings the count to the limit exactly, the stream ends before it one byte more. Run on LF and
 * CR LF line endings, whole and cut at every byte outside the `x:` block (in it, at its edges
 * and every 16th byte: short lines, ~1 KB), and deflate-coded, its coded bytes cut at every byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { padCounting } from '../helpers/charged-pad.js';
import { SSE_DROPPED_EVENT_CHARGE_BYTES as DROP_CHARGE } from '../../src/response/sse-ignored-lines.js';
import { cut, runSseStage, type StageRun } from '../unit/sse-stage-kit.js';
import { cutPoints } from '../helpers/stream-cuts.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
const MAX_RESPONSE_BYTES = 120;
/** The undelivered limit: `max_response_bytes` + the per-event cap (`max_sse_event_bytes` unset: equal to it, + the slack). */
const LIMIT = 2 * MAX_RESPONSE_BYTES + SSE_PENDING_SLACK_BYTES;
const FF = Buffer.from([0xff]);

const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
/** A notification whose string holds a 0xFF byte: forwarded, the byte as U+FFFD. */
const invalid = (n: number): Buffer => Buffer.concat([Buffer.from(`data: {"jsonrpc":"2.0","method":"n","params":"${n}`), FF, Buffer.from('"}\n\n')]);
const repaired = (n: number): string => `data: {"jsonrpc":"2.0","method":"n","params":"${n}\ufffd"}\n\n`;
/** Data of 100 0xFF bytes: a canonical block within the cap (108 bytes), its data 300 bytes as U+FFFD: dropped, `sse_event`. */
const OVER = Buffer.concat([Buffer.from('data: '), Buffer.alloc(100, 0xff), Buffer.from('\n\n')]);
const RESPONSE = 'data: {"jsonrpc":"2.0","id":5,"result":{}}\n\n';

const RUN = [invalid(1), OVER, Buffer.from(note(5)), OVER, invalid(2), OVER];

/** The stream with LF or CR LF line endings; `over`: bytes the `x:` block takes past the limit point; where that block is. */
const streamFor = (eol: '\n' | '\r\n', over: number): { stream: Buffer; pad: [number, number] } => {
  const lines = (b: Buffer | string): Buffer => Buffer.from(Buffer.from(b).toString('latin1').replaceAll('\n', eol), 'latin1');
  // After the response the count holds the run's last block and the response (with CR LF,
  // and the LF of the last forwarded event's blank line, counted after its frame: the event
  // goes out at that line's CR, get-stream-crlf-blank-line-lf-undelivered-chunks.test.ts);
  // note 2 goes out at its blank line's last LF (with CR LF, at its CR). The last over-cap
  // event and the response are dropped at their dispatch: 1,024 more each.
  const counted = lines(OVER).length + lines(RESPONSE).length + 2 * DROP_CHARGE + (eol.length - 1);
  const x = Buffer.from(padCounting(LIMIT - counted - (lines(note(2)).length - (eol.length - 1)) + over, eol));
  const head = Buffer.concat([note(1), ...RUN, RESPONSE].map(lines));
  const stream = Buffer.concat([head, x, lines(note(2))]);
  return { stream, pad: [head.length, head.length + x.length] };
};


const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason, drops: run.drops });
const runIt = (chunks: Buffer[], codings: readonly string[] = []): Promise<StageRun> =>
  runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${MAX_RESPONSE_BYTES}`], codings });

const DROPS = ['sse_event', 'sse_event', 'sse_event', 'get_stream_response'];
/** What the host gets (the gateway writes LF line endings whatever the seller's). */
const expected = (over: number): string => {
  const sent = note(1) + repaired(1) + note(5) + repaired(2);
  return over === 0
    ? JSON.stringify({ body: sent + note(2), outcome: 'ok', reason: 'get_stream_response', drops: DROPS })
    : JSON.stringify({ body: sent, outcome: 'resumable_end', reason: 'sse_undelivered', drops: DROPS });
};

for (const eol of ['\n', '\r\n'] as const) {
  for (const over of [0, 1]) {
    const name = `${eol === '\n' ? 'LF' : 'CR LF'}, the x: block ${over === 0 ? 'at' : 'one byte past'} the limit point`;
    test(`${name}: whole and cut at every byte, the same end`, async () => {
      const { stream, pad: padAt } = streamFor(eol, over);
      const want = expected(over);
      const cuts = [[], ...cutPoints(stream.length, [padAt], 16).map((at) => [at])];
      const differ: string[] = [];
      for (const at of cuts) if (brief(await runIt(cut(stream, at))) !== want) differ.push(at.length === 0 ? 'whole' : String(at[0]));
      assert.equal(differ.length, 0, `${differ.length} of ${cuts.length} (whole, cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
    });
    test(`${name}, deflate-coded: whole and its coded bytes cut at every byte, the same end`, async () => {
      const { stream } = streamFor(eol, over);
      const coded = deflateSync(stream);
      const want = expected(over);
      const differ: string[] = [];
      for (let at = 0; at < coded.length; at++) if (brief(await runIt(cut(coded, at === 0 ? [] : [at]), ['deflate'])) !== want) differ.push(at === 0 ? 'whole' : String(at));
      assert.equal(differ.length, 0, `${differ.length} of ${coded.length} (whole, coded bytes cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
    });
  }
}

test('the run arrives whole in its own chunk or in one chunk with the rest: the same end as cut in the run (LF)', async () => {
  const { stream } = streamFor('\n', 1);
  const runStart = note(1).length;
  const runEnd = runStart + Buffer.concat(RUN).length;
  const want = expected(1);
  assert.equal(brief(await runIt(cut(stream, [runStart]))), want, 'the run and the rest in one chunk');
  assert.equal(brief(await runIt(cut(stream, [runStart, runEnd]))), want, 'the run alone in its chunk');
  // Each block of the run in its own chunk.
  const ends: number[] = [];
  let at = runStart;
  for (const block of RUN) ends.push((at += block.length));
  assert.equal(brief(await runIt(cut(stream, [runStart, ...ends]))), want, 'block by block');
});
