/**
 * The SSE stage's raw path (src/response/sse-stage.ts, sse-chunk-taker.ts takePlanned, sse-raw-events.ts), fed
 * chunks, no sockets: event blocks the gateway neither reads nor changes go to the host as
 * the seller's bytes (views of its chunks, not copies), and the host's bytes, resume tokens
 * and errors are exactly those of the parse + encode path wherever the chunks are cut.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage, TOOL_CALL, cut } from './sse-stage-kit.js';
import { kitTokenAdded } from '../helpers/sse-token-model.js';

const progress = (n: number): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":100}}\n\n`;
const result = (id: number, text = 'done'): string =>
  `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${text}"}]}}\n\n`;

/** Whether `b` is a view into `chunk`'s bytes (not a copy). */
function isViewOf(b: Buffer, chunk: Buffer): boolean {
  return b.buffer === chunk.buffer && b.byteOffset >= chunk.byteOffset && b.byteOffset + b.length <= chunk.byteOffset + chunk.length;
}

test('progress notifications go out as views of the seller chunk: one write, no copy', async () => {
  const chunk = Buffer.from(progress(1) + progress(2) + progress(3));
  const r = await runSseStage([chunk, result(1)]);
  assert.equal(r.body, progress(1) + progress(2) + progress(3) + result(1));
  assert.equal(r.writes.length, 2);
  assert.ok(isViewOf(r.buffers[0]!, chunk), 'the same memory as the seller chunk');
  assert.equal(r.buffers[0]!.length, chunk.length);
  assert.equal(r.exchange.bytesToHost, Buffer.byteLength(r.body));
});

test('mixed chunk: raw blocks, parsed blocks and the response, in order, byte for byte', async () => {
  const stream = progress(1) + ': keepalive\n\n' + progress(2) + 'data:{"method":"x"}\n\n' + progress(3) + result(1) + progress(4);
  const r = await runSseStage([stream]);
  assert.equal(r.body, progress(1) + ': keepalive\n' + progress(2) + 'data: {"method":"x"}\n\n' + progress(3) + result(1));
  assert.equal(r.writes.length, 1, 'one corked write');
  assert.equal(r.ended, true);
  assert.equal(r.exchange.outcome, 'ok');
  assert.equal(r.exchange.bytesToHost, Buffer.byteLength(r.body));
});

test('cut at every offset into two chunks, at many pairs into three, and byte by byte: the same bytes and tokens', async () => {
  const stream =
    progress(1) + 'id: a\n' + progress(2) + progress(3) + ': c\n\n' + 'data: {"method":"café"}\n\n' + 'event: message\ndata: {"method":"a",\ndata: "b":1}\n\n' + 'id: b\n' + progress(4) + progress(5) + result(1);
  const bytes = Buffer.from(stream);
  const expected = (await runSseStage([bytes])).body;
  // The parse + encode path's output: tokens count through their event (b's count includes
  // what a's token added: sse-event-ids.ts chargeToken), the comment loses its blank line.
  const countA = Buffer.byteLength(progress(1) + 'id: a\n' + progress(2));
  const countB = Buffer.byteLength(stream) - Buffer.byteLength(progress(5) + result(1)) + kitTokenAdded('a', countA);
  assert.equal(
    expected,
    progress(1) + `id: tok(a,${countA})\n` + progress(2) + progress(3) + ': c\n' + 'data: {"method":"café"}\n\n' + 'event: message\ndata: {"method":"a",\ndata: "b":1}\n\n' + `id: tok(b,${countB})\n` + progress(4) + progress(5) + result(1),
  );
  for (let i = 0; i <= bytes.length; i++) {
    const r = await runSseStage(cut(bytes, [i]));
    assert.equal(r.body, expected, `cut at ${i}`);
    assert.equal(r.exchange.bytesToHost, Buffer.byteLength(expected));
  }
  for (let i = 0; i <= bytes.length; i += 13) {
    for (let j = i; j <= bytes.length; j += 7) {
      const r = await runSseStage(cut(bytes, [i, j]));
      assert.equal(r.body, expected, `cut at ${i}, ${j}`);
    }
  }
  const ones = await runSseStage(cut(bytes, Array.from({ length: bytes.length - 1 }, (_, k) => k + 1)));
  assert.equal(ones.body, expected, 'one byte per chunk');
});

test('a chunk holding a CR is parsed whole, as before', async () => {
  const stream = Buffer.from(progress(1) + 'data: {"method":"x"}\r\n\r\n' + progress(2) + result(1));
  const r = await runSseStage([stream]);
  assert.equal(r.body, progress(1) + 'data: {"method":"x"}\n\n' + progress(2) + result(1));
  assert.ok(!r.buffers.some((b) => isViewOf(b, stream)), 'nothing forwarded raw');
});

test('after raw blocks at the stream start, a later U+FEFF is a character, not a BOM to drop', async () => {
  // Mid-stream, `\ufeffdata:` is an unknown field for a client: the event is not dispatched.
  const r = await runSseStage([progress(1) + '\ufeffdata: {"method":"x"}\n\n' + progress(2) + result(1)]);
  assert.equal(r.body, progress(1) + progress(2) + result(1));
  // At the stream's start it is the BOM: dropped, the event flows.
  const start = await runSseStage(['\ufeffdata: {"method":"x"}\n\n' + progress(2) + result(1)]);
  assert.equal(start.body, 'data: {"method":"x"}\n\n' + progress(2) + result(1));
});

test('the per-event bound at exactly the limit: raw below it, the limit itself passes, one byte more fails', async () => {
  const head = 'event: message\ndata: ';
  const event = (dataBytes: number): string => `${head}"${'x'.repeat(dataBytes - 2)}"\n\n`;
  const limit = 2048;
  for (const dataBytes of [limit - 1, limit]) {
    const r = await runSseStage([progress(1) + event(dataBytes) + result(1)], { agentYaml: [`max_sse_event_bytes: ${limit}`] });
    assert.equal(r.body, progress(1) + event(dataBytes) + result(1), `${dataBytes} bytes`);
  }
  const over = await runSseStage([progress(1) + event(limit + 1) + result(1)], { agentYaml: [`max_sse_event_bytes: ${limit}`] });
  assert.equal(over.exchange.reason, 'sse_event');
  assert.ok(over.body.startsWith(progress(1)));
  assert.match(over.body, /"observed_bytes":2049/);
});

test('the depth bound: a block with more brackets than the limit is parsed and judged exactly', async () => {
  const note = (depth: number): string => `event: message\ndata: {"jsonrpc":"2.0","method":"n","params":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}\n\n`;
  const agentYaml = ['max_json_depth: 8'];
  // 2 + 6 = 8 brackets: raw; 2 + 7 = 9 brackets but depth 9 > 8: json_depth.
  const ok = await runSseStage([progress(1) + note(6) + result(1)], { agentYaml });
  assert.equal(ok.body, progress(1) + note(6) + result(1));
  assert.equal(ok.buffers[0]!.length, Buffer.byteLength(progress(1) + note(6)), 'both notifications raw');
  const deep = await runSseStage([progress(1) + note(7) + result(1)], { agentYaml });
  assert.equal(deep.exchange.reason, 'json_depth');
  // Brackets inside strings count for the raw test only: the parse finds the real depth.
  const inString = `event: message\ndata: {"method":"${'['.repeat(20)}"}\n\n`;
  const s = await runSseStage([progress(1) + inString + result(1)], { agentYaml });
  assert.equal(s.body, progress(1) + inString + result(1));
});

test('the cumulative bound: the chunk that crosses it reports the count through the block that crossed', async () => {
  const stream = progress(1) + progress(2) + progress(3);
  const limit = Buffer.byteLength(progress(1) + progress(2)) + 10;
  const r = await runSseStage([progress(1), progress(2) + progress(3) + result(1)], { agentYaml: [`max_response_bytes: ${limit}`] });
  assert.equal(r.exchange.reason, 'sse_cumulative');
  assert.ok(r.body.startsWith(progress(1) + progress(2)));
  assert.match(r.body, new RegExp(`"observed_bytes":${Buffer.byteLength(stream)}`));
  // Raw blocks count: exactly at the limit, the stream goes on.
  const exact = Buffer.byteLength(progress(1) + progress(2) + result(1));
  const fits = await runSseStage([progress(1) + progress(2), result(1)], { agentYaml: [`max_response_bytes: ${exact}`] });
  assert.equal(fits.body, progress(1) + progress(2) + result(1));
  const tight = await runSseStage([progress(1) + progress(2), result(1)], { agentYaml: [`max_response_bytes: ${exact - 1}`] });
  assert.equal(tight.exchange.reason, 'sse_cumulative');
});

test('after the response, the rest of its chunk is not forwarded', async () => {
  const r = await runSseStage([progress(1) + result(1) + progress(2) + progress(3)], { rpc: TOOL_CALL });
  assert.equal(r.body, progress(1) + result(1));
  assert.equal(r.ended, true);
});

test('standalone GET stream: canonical blocks without a response key are raw; a response is dropped', async () => {
  // No response may pass there (test/regressions/get-stream-answers-pending-call.test.ts):
  // only the block holding `"result` is parsed; the blocks around it stay views of the chunk.
  const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
  const chunk = Buffer.from(progress(1) + progress(2) + result(1) + progress(3));
  const r = await runSseStage([chunk], { rpc: GET_STREAM });
  assert.equal(r.body, progress(1) + progress(2) + progress(3));
  assert.deepEqual(
    r.buffers.map((b) => isViewOf(b, chunk)),
    [true, true],
  );
  assert.equal(r.exchange.reason, 'get_stream_response');
});

test('id lines in planned chunks: a token counts through its own event, wherever the id line is', async () => {
  const idEvent = (id: string, n: number): string => `id: ${id}\ndata: {"method":"${n}"}\n\n`;
  const parsedA = ': c\n\n'; // parsed, no id
  const parsedB = 'data:{"method":"b"}\n\n'; // goes out as `data: {"method":"b"}`: one byte more, counted (sse-encoding-charge.ts charge)
  // The second chunk starts at an event start with an id line (nothing of it before the chunk).
  const first = progress(1);
  const second = idEvent('x', 1) + parsedA + parsedB + progress(2) + 'id: y\n' + progress(3) + parsedA + idEvent('z', 2) + progress(4) + result(1);
  const r = await runSseStage([first, second]);
  const through = (s: string): number => Buffer.byteLength(first + second.slice(0, second.indexOf(s) + s.length));
  // Each count includes what the earlier tokens added to the host's stream (sse-stage.ts
  // chargeToken) and the byte parsedB's encoding added (parsedA's dropped blank line does not
  // pay for it: each block counts on its own, however the chunks are cut).
  const x = through(idEvent('x', 1));
  const y = through('id: y\n' + progress(3)) + kitTokenAdded('x', x) + 1;
  const z = through(idEvent('z', 2)) + kitTokenAdded('x', x) + kitTokenAdded('y', y) + 1;
  assert.equal(
    r.body,
    first +
      `id: tok(x,${x})\ndata: {"method":"1"}\n\n` +
      ': c\n' +
      'data: {"method":"b"}\n\n' +
      progress(2) +
      `id: tok(y,${y})\n` +
      progress(3) +
      ': c\n' +
      `id: tok(z,${z})\ndata: {"method":"2"}\n\n` +
      progress(4) +
      result(1),
  );
  assert.equal(r.exchange.lastEventIdSent, `tok(z,${z})`);
  // The same bytes in one chunk, and cut at every offset: the same tokens.
  const whole = Buffer.from(first + second);
  assert.equal((await runSseStage([whole])).body, r.body);
  for (let i = 1; i < whole.length; i += 3) {
    assert.equal((await runSseStage([whole.subarray(0, i), whole.subarray(i)])).body, r.body, `cut at ${i}`);
  }
});

test('a chunk that starts with blank lines at an event start: an id event after them gets the exact count', async () => {
  // Review of 6e630d2: the planner stops at a lone LF at a chunk's start, so the id event was
  // parsed with the rest of the chunk and its token counted through the chunk's end.
  const first = progress(1);
  const second = '\n\nid: 99\ndata: {"method":"1"}\n\n' + progress(2) + progress(3);
  const r = await runSseStage([first, second, result(1)]);
  const exact = Buffer.byteLength(first + '\n\nid: 99\ndata: {"method":"1"}\n\n');
  assert.equal(r.body, first + `id: tok(99,${exact})\ndata: {"method":"1"}\n\n` + progress(2) + progress(3) + result(1));
});
