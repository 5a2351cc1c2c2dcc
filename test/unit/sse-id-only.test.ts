/**
 * Blocks with an `id` field and no `data` (src/response/sse-id-only.ts, wired in
 * src/response/sse-stage.ts): such a block sets the last event ID and dispatches nothing
 * (WHATWG HTML §9.2.6), so its id is the stream's pending id: the next event without an id of
 * its own carries it as its resume token, a later id supersedes it, and the stream's end writes
 * it alone (`id: <token>` and a blank line, the count through the stream's end). Reported
 * failures: test/regressions/sse-id-only-block-drops-id.test.ts (its id was dropped),
 * get-stream-id-only-token-amplification.test.ts (a new user's trial 9, F3: each block went out
 * as its own token, 20.4x the seller's bytes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { SseIdOnlyBlocks } from '../../src/response/sse-id-only.js';
import { runSseStage } from './sse-stage-kit.js';
import { cutsWithOneByteMiddle, kitTokenAdded } from '../helpers/sse-token-model.js';

const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}';


/** What the host gets for the seller's `input`, for each way to cut it (request stream unless `opts.rpc`). */
async function hostBodies(input: string, opts: Parameters<typeof runSseStage>[1] = {}): Promise<Array<{ label: string; body: string }>> {
  const out: Array<{ label: string; body: string }> = [];
  for (const chunks of cutsWithOneByteMiddle(Buffer.from(input))) {
    const r = await runSseStage(chunks, opts);
    out.push({ label: JSON.stringify(chunks.map((c) => c.toString('latin1'))), body: r.body });
  }
  return out;
}

/** What the host gets for the seller's `input`: the same body however it is cut. */
async function hostBodyEveryCut(input: string, opts: Parameters<typeof runSseStage>[1] = {}): Promise<string> {
  const bodies = await hostBodies(input, opts);
  for (const { label, body } of bodies) assert.equal(body, bodies[0]!.body, label);
  return bodies[0]!.body;
}

test('an id-only block at the stream end goes out as its token, counted through its blank line, however it is cut and whatever its line endings', async () => {
  for (const eol of ['\n', '\r\n', '\r']) {
    const first = `id: e1${eol}data: ${PROGRESS}${eol}${eol}`;
    const idOnly = `id: e2${eol}${eol}`;
    // e2's count includes what e1's token added to the host's stream (sse-event-ids.ts chargeToken);
    // e1's count has three digits however a CR-only stream over-counts it (at most `used` + 1).
    const used = 100 + Buffer.byteLength(first + idOnly) + kitTokenAdded('e1', 100 + Buffer.byteLength(first));
    // A CR-only stream is counted through the chunk (sse-boundaries.ts): e1's count is exact with LF and CR LF only.
    const e1 = eol === '\r' ? '\\d{3}' : String(100 + Buffer.byteLength(first));
    // A CR-only stream cut after the last CR is counted one byte over (an LF may follow it: sse-boundaries.ts lfExpected).
    const e2 = eol === '\r' ? `(?:${used}|${used + 1})` : String(used);
    for (const { label, body } of await hostBodies(first + idOnly, { usedBytes: 100 })) {
      assert.match(body, new RegExp(`^id: tok\\(e1,${e1}\\)\\ndata: .*\\n\\nid: tok\\(e2,${e2}\\)\\n\\n$`), label);
    }
  }
});

test('what an id-only block may hold besides its id: an event type, a comment, a retry; the last valid id wins', async () => {
  const cases: Array<[string, string]> = [
    ['id: a\nevent: ping\n\n', 'id: tok(a,19)\n\n'],
    ['id: a\n: keep\n\n', ': keep\nid: tok(a,14)\n\n'],
    // The block's encoding adds 2 bytes over its 17 (the `retry:` goes out as a block of its
    // own, with a blank line, its value clamped to 500: sse-encode.ts clampSseRetryMs), and its
    // count has them (sse-encoding-charge.ts charge).
    ['id: a\nretry: 50\n\n', 'retry: 500\n\nid: tok(a,19)\n\n'],
    ['id: a\nid: b\n\n', 'id: tok(b,13)\n\n'],
    ['id: a\nid: b\0c\n\n', 'id: tok(a,15)\n\n'],
    // `id:a` goes out as `id: a`: one byte over the seller's 6, counted.
    ['id:a\n\n', 'id: tok(a,7)\n\n'],
    ['id:  a\n\n', 'id: tok( a,8)\n\n'],
  ];
  for (const [input, expected] of cases) {
    assert.equal(await hostBodyEveryCut(input), expected, JSON.stringify(input));
  }
  // An empty id passes unchanged (ARCHITECTURE §4). On the standalone GET stream: an empty id
  // gives the host nothing to resume from, so a request stream would end upstream_reset.
  for (const input of ['id\n\n', 'id:\n\n', 'id: \n\n']) {
    assert.equal(await hostBodyEveryCut(input, { rpc: GET_STREAM }), 'id\n\n', JSON.stringify(input));
  }
});

test('not id-only blocks: no id frame', async () => {
  // An id with NUL is ignored (the block has no id); fields whose names start with `id`.
  // On the standalone GET stream: a request stream without an id would end upstream_reset.
  for (const input of ['id: a\0b\n\n', 'idx: 1\n\n', 'ids\n\n', 'id : 1\n\n']) {
    assert.equal(await hostBodyEveryCut(input, { rpc: GET_STREAM }), '', JSON.stringify(input));
  }
  const cases: Array<[string, string]> = [
    // The data before the id line, the id after it, or both in one line each: one event with its token.
    ['data: x\nid: 5\n\n', 'id: tok(5,15)\ndata: x\n\n'],
    ['id: 5\ndata: x\n\n', 'id: tok(5,15)\ndata: x\n\n'],
    // `data:` goes out as `data: `: one byte over the seller's 13, counted.
    ['id: 5\ndata:\n\n', 'id: tok(5,14)\ndata: \n\n'],
    // An id-only block, then an event with an id: the event's id supersedes it (no token for
    // a; b's count: the 22 seller bytes). An event, then an id-only block: at the end.
    ['id: a\n\nid: b\ndata: x\n\n', 'id: tok(b,22)\ndata: x\n\n'],
    ['data: x\n\nid: a\n\n', 'data: x\n\nid: tok(a,16)\n\n'],
    // An id-only block, then an event without an id: the event carries it, its token counted
    // through the event (7 + 9 bytes: `id: a` was charged with its own block, none over).
    ['id: a\n\ndata: x\n\n', 'id: tok(a,16)\ndata: x\n\n'],
    // Several: only the last one's id goes out, once.
    ['id: a\n\nid: b\n\nid: c\n\ndata: x\n\n', 'id: tok(c,30)\ndata: x\n\n'],
    // `id:a` goes out as `id: a` (its block is charged the byte) on the event that carries it.
    ['id:a\n\ndata: x\n\n', 'id: tok(a,16)\ndata: x\n\n'],
  ];
  for (const [input, expected] of cases) {
    assert.equal(await hostBodyEveryCut(input), expected, JSON.stringify(input));
  }
  // An empty id-only id is carried as `id`; comments and `retry:` between do not carry it (the
  // standalone GET stream: a request's stream with no id would end upstream_reset).
  const empty = 'id\n\n: k\n\nretry: 600\n\ndata: x\n\n';
  assert.equal(await hostBodyEveryCut(empty, { rpc: GET_STREAM }), ': k\nretry: 600\n\nid\ndata: x\n\n');
});

test('the stream ends after an id-only block: resumable, not upstream_reset', async () => {
  // 18 seller bytes; the `retry:` block's blank line is the encoding's, and so is the digit its
  // value clamped to 500 adds (2 bytes, counted).
  const r = await runSseStage(['id: p1\nretry: 25\n\n']);
  assert.equal(r.body, 'retry: 500\n\nid: tok(p1,20)\n\n');
  assert.equal(r.exchange.outcome, 'resumable_end');
  assert.equal(r.exchange.lastEventIdSent, 'tok(p1,20)');
});

test('the standalone GET stream: an id-only block\'s id goes out with the next event, a token with count 0', async () => {
  const r = await runSseStage(['id: g1\n\n', `data: ${PROGRESS}\n\n`], { rpc: GET_STREAM });
  assert.equal(r.body, `id: tok(g1,0)\ndata: ${PROGRESS}\n\n`);
  // A run of them: one token, the last id's, on the event (raw-forwarded otherwise: it is parsed).
  let ids = '';
  for (let n = 1; n <= 50; n++) ids += `id:${n}\n\n`;
  const run = await runSseStage([ids + `data: ${PROGRESS}\n\ndata: ${PROGRESS}\n\n`], { rpc: GET_STREAM });
  assert.equal(run.body, `id: tok(50,0)\ndata: ${PROGRESS}\n\ndata: ${PROGRESS}\n\n`);
  // Ended by the seller with one pending: written alone before the end.
  const end = await runSseStage([`data: ${PROGRESS}\n\n` + ids], { rpc: GET_STREAM });
  assert.equal(end.body, `data: ${PROGRESS}\n\nid: tok(50,0)\n\n`);
  assert.equal(end.exchange.outcome, 'ok');
});

test('the cumulative bound: the pending id written at the end counts its token; an id-only block past the limit is never dispatched', async () => {
  // No token for a (b supersedes it). The count: the 14 seller bytes (b's count), the 8 its
  // token `tok(b,14)` adds over `b`: 22 (sse-event-ids.ts chargeToken).
  const at = await runSseStage(['id: a\n\n', 'id: b\n\n'], { agentYaml: ['max_response_bytes: 22'] });
  assert.equal(at.body, 'id: tok(b,14)\n\n');
  assert.equal(at.exchange.outcome, 'resumable_end');
  // One byte less: the token does not fit: the request gets sse_cumulative instead.
  const tokenOver = await runSseStage(['id: a\n\n', 'id: b\n\n'], { agentYaml: ['max_response_bytes: 21'] });
  assert.match(tokenOver.body, /^event: message\ndata: .*"sse_cumulative".*\n\n$/);
  assert.match(tokenOver.body, /"limit_bytes":21,"observed_bytes":22/);
  // b's blank line past the limit: cut at the limit point, b never dispatched.
  const over = await runSseStage(['id: a\n\n', 'id: b\n\n'], { agentYaml: ['max_response_bytes: 13'] });
  assert.match(over.body, /^event: message\ndata: .*"sse_cumulative".*\n\n$/);
  assert.match(over.body, /"limit_bytes":13,"observed_bytes":14/);
});

test('a token that cannot be minted: the id-only block is dropped, with a warning', async () => {
  const r = await runSseStage(['id: a\n\n', `data: ${PROGRESS}\n\n`], { mint: () => undefined });
  assert.equal(r.body.startsWith(`data: ${PROGRESS}\n\n`), true, r.body);
  assert.equal(r.warnings.length, 1);
});

test('SseIdOnlyBlocks: the parser gets the text unchanged but for a lone CR sent as CR LF where the text is cut', () => {
  const input = 'data: x\r\rid: 2\r\r: c\rid: 3\rdata: y\r\r';
  const fed: string[] = [];
  const events: Array<string | undefined> = [];
  const ids: string[] = [];
  const parser = createParser({ onEvent: (ev) => (events.push(ev.id), blocks.eventDispatched()) });
  const blocks = new SseIdOnlyBlocks(
    (t) => (fed.push(t), parser.feed(t)),
    (id) => ids.push(id),
  );
  blocks.feed(input + '\n'); // as the line feeder hands a text ending with a CR
  assert.deepEqual(ids, ['2']);
  assert.deepEqual(events, [undefined, '3']);
  assert.deepEqual(fed, ['data: x\r\r\n', 'id: 2\r\r\n', ': c\r\n', 'id: 3\rdata: y\r\r\n']);
});

test('at the stream end, a block without its blank line is discarded, with data or not', async () => {
  // WHATWG HTML §9.2.6 discards a pending block at the end of the stream. An id-only block's
  // token would make the host resume after an event whose data never came (reported failure:
  // test/regressions/sse-truncated-block-id-token.test.ts); a block with data went out,
  // completed by SseLineFeeder.finish's line break (a hostile new user's trial 10, F5:
  // test/regressions/sse-unterminated-event-delivered.test.ts).
  for (const [chunks, expected] of [
    [['id: a\n'], ''],
    [['event: message\nid: a\r\n'], ''],
    [['data: x\n'], ''],
    [['data: x\r\n'], ''],
    [['id: a'], ''],
    [['data: x'], ''],
    [['data: x\n', 'id: a\n'], ''],
    [['data: x\n\n', 'data: y\n'], 'data: x\n\n'],
  ] as const) {
    const r = await runSseStage(chunks, { rpc: GET_STREAM });
    assert.equal(r.body, expected, JSON.stringify(chunks));
  }
});

test('the standalone GET stream: after an event dropped for its size (an endless line included), an id-only block\'s id goes out with the next event', async () => {
  const yaml = ['max_sse_event_bytes: 100'];
  const parsedTooBig = await runSseStage(['id: q\n', `data: ${'x'.repeat(200)}\n\n`, 'id: a\n\n', 'data: y\n\n'], { rpc: GET_STREAM, agentYaml: yaml });
  assert.equal(parsedTooBig.body, 'id: tok(a,0)\ndata: y\n\n');
  const overTheCap = await runSseStage([`id: q\ndata: ${'x'.repeat(70_000)}`, 'x\n\nid: a\n\n', 'data: y\n\n'], { rpc: GET_STREAM, agentYaml: yaml });
  assert.equal(overTheCap.body, 'id: tok(a,0)\ndata: y\n\n');
});
