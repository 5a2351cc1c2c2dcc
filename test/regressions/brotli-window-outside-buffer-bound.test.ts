/**
 * Regression (a hostile new user's trial 15, H2): a seller's brotli windows sat outside every
 * bound. A brotli decoder fills the window its stream declares (up to 16 MiB, lgwin 24) and
 * keeps it for as long as its stream lives. The standalone GET stream is no longer offered br
 * (test/regressions/brotli-window-on-get-stream-unbounded.test.ts), but a request's answer
 * still was, its window counted nowhere: 30 POSTed calls answered by lgwin-24 SSE streams
 * (16 MB of notifications each, then a comment every 2 s) took the gateway from 94 to 659 MB
 * RSS with `adcp_gateway_agent_buffered_response_bytes` at 0. docs/configuration.md bounds
 * what an agent's responses hold by `max_buffered_response_bytes` "whatever its seller sends".
 *
 * Input: a raw seller (node:http) -> the real gateway (buildApp) -> the host (fetch), on
 * 127.0.0.1. Both agents have `max_buffered_response_bytes` 8 MiB and the default
 * `accept_encoding` (gzip, deflate, br).
 * - `calls`: tools/call answered by an SSE stream in br at the lgwin the call asks for (one
 *   notification flushed, then held until the test releases it: the response event, the end).
 * - `json`: tools/call answered by a JSON body in br at lgwin 22, its first part flushed, the
 *   rest held until the test releases it.
 * Expectation (docs/configuration.md max_buffered_response_bytes, src/response/decode.ts):
 * 1. A call's lgwin-24 stream holds exactly 16 MiB + 2.75 MiB (19,660,800 bytes) while open,
 *    its event dispatched. A second one (its decoder would take the agent over the 8 MiB cap
 *    beside the first's) waits before its decoder is made: one buffer wait; it holds only its
 *    first wire chunk; the host has its head, no event. It goes on once the first ends: both
 *    get their events and responses byte for byte.
 * 2. A legitimate lgwin-22 stream (the encoders' default) alone: works byte for byte, holding
 *    4 MiB + 2.75 MiB (7,077,888 bytes) while open.
 * 3. A JSON answer in br holds its decoder's 7,077,888 bytes + the decoded bytes so far while
 *    it is received, and the host gets the seller's message byte for byte.
 * After each, the agent holds 0 bytes. Before the fix: every held count was 0, the second
 * call never waited (4/4 tests failed: 1-3 and the gauge's). No memory is measured here (the
 * counts are what the gateway charges); the RSS of the process is printed as a diagnostic.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { SeenRequest } from '../support/raw-seller.js';
import { messageFrame, resultMessage } from '../support/hostile-seller.js';
import { BR22_BYTES, BR24_BYTES, HEADERS, MIB, brotli, endThrough, note, startBrSse, textResult, writeFlushed } from '../helpers/brotli-seller.js';
import { openAnswer, toolCallPost, type OpenAnswer } from '../helpers/open-answer.js';
import { until, useRawSellerAndGateway } from '../helpers/raw-stack.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const CAP = 8 * MIB;

/** The JSON answer to `json` call `id`, and the part of it the seller sends first. */
const jsonAnswer = (id: number): string => resultMessage(id, { content: [{ type: 'text', text: `json ${id} `.repeat(200) }] });
const JSON_FIRST_PART = 1000;

/** The calls the seller holds open, by JSON-RPC id: call to write the rest and end. */
const held = new Map<number, () => void>();
/** The wire bytes of each call's first write (its compressed notification), by id. */
const firstWrite = new Map<number, number>();

async function answer(req: SeenRequest, res: ServerResponse): Promise<void> {
  const mode = new URL(req.url, 'http://seller').searchParams.get('mode');
  const msg = JSON.parse(req.body.toString('utf8')) as { id: number; params: { arguments: { lgwin?: number } } };
  const lgwin = msg.params.arguments.lgwin ?? 22;
  if (mode === 'json') {
    const enc = brotli(lgwin);
    res.on('close', () => enc.destroy());
    const text = jsonAnswer(msg.id);
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
    firstWrite.set(msg.id, await writeFlushed(enc, res, text.slice(0, JSON_FIRST_PART)));
    held.set(msg.id, () => {
      enc.write(text.slice(JSON_FIRST_PART));
      endThrough(enc, res);
    });
    return;
  }
  const stream = await startBrSse(res, lgwin, msg.id);
  firstWrite.set(msg.id, stream.firstWrite);
  held.set(msg.id, () => stream.finish(textResult(msg.id, `done ${msg.id}`)));
}

const stack = useRawSellerAndGateway(answer, (seller) => [
  `  calls: { url: "${seller.url}?mode=call", max_buffered_response_bytes: ${CAP}, dedupe_text: off }`,
  `  json: { url: "${seller.url}?mode=json", max_buffered_response_bytes: ${CAP}, dedupe_text: off }`,
]);
const guard = () => stack.gateway.app.gateway.guard;

const postCall = (agent: string, id: number, lgwin: number): Promise<OpenAnswer> =>
  openAnswer(stack.gateway.agentUrl(agent), toolCallPost(id, 'get_products', HEADERS, { lgwin }), `${agent} ${id}: the head`);

const rssMb = (): string => (process.memoryUsage.rss() / MIB).toFixed(0);
const doneFrame = (id: number): string => messageFrame(textResult(id, `done ${id}`));

describe('brotli decoder windows count against max_buffered_response_bytes', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a br stream holds its window; a second one whose decoder would take the agent over the cap waits before it is made, then flows', async (t) => {
    const waitsBefore = guard().bufferWaits('calls');
    const first = await postCall('calls', 1, 24);
    await until('the first stream has its notification', () => first.text === messageFrame(note(1)));
    assert.equal(guard().heldBytes('calls'), BR24_BYTES);

    const second = await postCall('calls', 2, 24);
    await until('the second stream waits for room', () => guard().bufferWaits('calls') === waitsBefore + 1);
    assert.equal(second.status, 200);
    assert.ok(firstWrite.has(2));
    // It holds its first wire chunk while it waits (nothing decoded), the first its decoder.
    assert.equal(guard().heldBytes('calls'), BR24_BYTES + firstWrite.get(2)!);
    assert.equal(second.text, '');
    t.diagnostic(`two lgwin-24 streams open, one waiting: held ${guard().heldBytes('calls')} bytes; RSS ${rssMb()} MB`);

    held.get(1)!();
    assert.equal(await withTimeout(first.done, undefined, 'the first stream'), messageFrame(note(1)) + doneFrame(1));
    await until('the second stream has its notification', () => second.text === messageFrame(note(2)));
    assert.equal(guard().heldBytes('calls'), BR24_BYTES);
    assert.equal(guard().bufferWaits('calls'), waitsBefore + 1);

    held.get(2)!();
    assert.equal(await withTimeout(second.done, undefined, 'the second stream'), messageFrame(note(2)) + doneFrame(2));
    await until('both gave their decoders back', () => guard().heldBytes('calls') === 0);
  });

  test('a legitimate lgwin-22 stream works, holding 4 MiB + 2.75 MiB while open', async () => {
    const call = await postCall('calls', 3, 22);
    await until('the stream has its notification', () => call.text === messageFrame(note(3)));
    assert.equal(guard().heldBytes('calls'), BR22_BYTES);
    held.get(3)!();
    assert.equal(await withTimeout(call.done, undefined, 'the stream'), messageFrame(note(3)) + doneFrame(3));
    await until('it gave its decoder back', () => guard().heldBytes('calls') === 0);
  });

  test('a JSON answer in br holds its decoder and the bytes decoded so far while received', async () => {
    // Its head comes once the whole answer is read: not awaited before the seller ends it.
    const call = postCall('json', 4, 22);
    await until('the first part is decoded and held', () => guard().heldBytes('json') === BR22_BYTES + JSON_FIRST_PART);
    held.get(4)!();
    const answered = await call;
    assert.equal(answered.status, 200);
    assert.equal(await withTimeout(answered.done, undefined, 'the JSON answer'), jsonAnswer(4));
    await until('it gave its decoder back', () => guard().heldBytes('json') === 0);
  });

  test('the gauge says what the decoders are charged', async () => {
    const call = await postCall('calls', 5, 22);
    await until('the stream has its notification', () => call.text === messageFrame(note(5)));
    const metrics = await (await fetch(new URL('/metrics', stack.gateway.agentUrl('calls')))).text();
    assert.match(metrics, new RegExp(`^adcp_gateway_agent_buffered_response_bytes\\{agent="calls"\\} ${BR22_BYTES}$`, 'm'));
    held.get(5)!();
    assert.equal(await withTimeout(call.done, undefined, 'the stream'), messageFrame(note(5)) + doneFrame(5));
    await until('it gave its decoder back', () => guard().heldBytes('calls') === 0);
  });
});
