/**
 * Reported failure (found while checking the invalid-UTF-8 runs of
 * get-stream-invalid-utf8-run-undelivered-chunks.test.ts): on a stream without a total, how
 * much an event's frame lowered the undelivered count (src/response/sse-undelivered.ts: 64 x
 * what it carries) depended on how the seller's bytes were cut. The same notification, whole
 * in a chunk without CR, went out raw and forgave 64 x its block's bytes (`data: `, its
 * `event:` line, its line breaks included); cut inside it, it was parsed and forgave 64 x its
 * data alone, counted in UTF-16 units (`é`, two bytes, as one), or held as bytes
 * (sse-held-block.ts) and forgave 64 x its data bytes. After enough bytes for nothing before
 * it, the next notification went out or the stream ended (`sse_undelivered`) according to the
 * cut.
 *
 * Now a parsed or held event forgives 64 x its frame's bytes as the host gets them, its id
 * line aside (sse-stage.ts `framedEvent`): for a block the raw path may forward, its bytes, as
 * the raw path counts them. Computed only when the lower bound (the data's length + 8) does not
 * bring the count to 0 already.
 *
 * The stream: note 1; a block of `x:` lines counting 20,000; the event (a notification with
 * 60 `é`, or the same with `event: message`, or one of ASCII text); a block of `x:` lines;
 * note 2, which goes out when the count reaches the limit exactly by the rules (each byte
 * counted once, each `x:` line 1,024 more since hostile trial 52, F2: test/helpers/charged-pad.ts; the event's frame lowers it by 64 x its block's bytes as written with LF; with
 * CR LF, the LF of a blank line is counted after its event's frame), the stream ends before
 * it one byte more. LF and CR LF, whole and cut at every byte but inside the `x:` blocks (there,
 * at their edges and every 16th byte: short lines, ~1.5 KB in all, test/helpers/charged-pad.ts;
 * they were ~1,000-byte lines, ~65 KB, and 20x the CPU); deflate-coded, the coded bytes cut at
 * every byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { RpcPeek } from '../../src/exchange.js';
import { SSE_PENDING_SLACK_BYTES } from '../../src/response/sse-stage.js';
import { padCount, padCounting } from '../helpers/charged-pad.js';
import { UNDELIVERED_FRAME_CREDIT } from '../../src/response/sse-undelivered.js';
import { cut, runSseStage, type StageRun } from '../unit/sse-stage-kit.js';
import { cutPoints } from '../helpers/stream-cuts.js';

const GET_STREAM: RpcPeek = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined };
/** Room for the events below within the per-event cap (raw-forwarded whole). */
const MAX_RESPONSE_BYTES = 1000;
/** The undelivered limit: `max_response_bytes` + the per-event cap (`max_sse_event_bytes` unset: equal to it, + the slack). */
const LIMIT = 2 * MAX_RESPONSE_BYTES + SSE_PENDING_SLACK_BYTES;
/** What the first `x:` block counts: more than the event's frame forgives (64 x its ~190 bytes). */
const BEFORE = 20_000;

const note = (n: number): string => `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"n":${n}}}\n\n`;
const EVENTS = {
  'non-ASCII': `data: {"jsonrpc":"2.0","method":"n","params":"${'é'.repeat(60)}"}\n\n`,
  'event: message, non-ASCII': `event: message\ndata: {"jsonrpc":"2.0","method":"n","params":"${'é'.repeat(60)}"}\n\n`,
  ASCII: `data: {"jsonrpc":"2.0","method":"n","params":"${'a'.repeat(120)}"}\n\n`,
} as const;
type EventName = keyof typeof EVENTS;

const bytes = (text: string): number => Buffer.byteLength(text);

/** The stream, `over` bytes past the limit point at note 2; where its `x:` blocks are. */
const streamFor = (name: EventName, eol: '\n' | '\r\n', over: number): { stream: Buffer; pads: Array<[number, number]> } => {
  const lines = (text: string): string => text.replaceAll('\n', eol);
  const lfAfter = eol.length - 1;
  const event = EVENTS[name];
  const first = padCounting(BEFORE, eol);
  // Note 1's frame: the count 0, then its blank line's LF with CR LF.
  let count = lfAfter;
  count += padCount(first);
  // The event through its blank line's last CR or LF, then its frame, then that LF with CR LF.
  count = Math.max(0, count + bytes(lines(event)) - lfAfter - UNDELIVERED_FRAME_CREDIT * bytes(event)) + lfAfter;
  assert.ok(count > lfAfter, 'the frame leaves bytes counted');
  const after = LIMIT - count - (bytes(lines(note(2))) - lfAfter) + over;
  const head = lines(note(1));
  const middle = lines(event);
  const second = padCounting(after, eol);
  const stream = Buffer.from(head + first + middle + second + lines(note(2)));
  const at = bytes(head);
  const at2 = at + first.length + bytes(middle);
  return { stream, pads: [[at, at + first.length], [at2, at2 + second.length]] };
};


const brief = (run: StageRun): string => JSON.stringify({ body: run.body, outcome: run.exchange.outcome, reason: run.exchange.reason ?? null });
const expected = (name: EventName, over: number): string => {
  const sent = note(1) + EVENTS[name];
  return JSON.stringify(over === 0 ? { body: sent + note(2), outcome: 'ok', reason: null } : { body: sent, outcome: 'resumable_end', reason: 'sse_undelivered' });
};
const runIt = (chunks: Buffer[], codings: readonly string[] = []): Promise<StageRun> =>
  runSseStage(chunks, { rpc: GET_STREAM, agentYaml: [`max_response_bytes: ${MAX_RESPONSE_BYTES}`], codings });

for (const name of Object.keys(EVENTS) as EventName[]) {
  for (const eol of ['\n', '\r\n'] as const) {
    for (const over of [0, 1]) {
      test(`${name}, ${eol === '\n' ? 'LF' : 'CR LF'}, note 2 ${over === 0 ? 'at' : 'one byte past'} the limit point: whole and cut at every byte, the same end`, async () => {
        const { stream, pads } = streamFor(name, eol, over);
        const cuts = [[], ...cutPoints(stream.length, pads, 16).map((at) => [at])];
        const differ: string[] = [];
        for (const at of cuts) if (brief(await runIt(cut(stream, at))) !== expected(name, over)) differ.push(at.length === 0 ? 'whole' : String(at[0]));
        assert.equal(differ.length, 0, `${differ.length} of ${cuts.length} (whole, cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
      });
    }
  }
}

for (const over of [0, 1]) {
  test(`non-ASCII, LF, deflate-coded, note 2 ${over === 0 ? 'at' : 'one byte past'} the limit point: whole and its coded bytes cut at every byte, the same end`, async () => {
    const coded = deflateSync(streamFor('non-ASCII', '\n', over).stream);
    const differ: string[] = [];
    for (let at = 0; at < coded.length; at++) if (brief(await runIt(cut(coded, at === 0 ? [] : [at]), ['deflate'])) !== expected('non-ASCII', over)) differ.push(at === 0 ? 'whole' : String(at));
    assert.equal(differ.length, 0, `${differ.length} of ${coded.length} (whole, coded bytes cut at each point) differ from the expected end: ${differ.slice(0, 8).join(', ')}`);
  });
}
