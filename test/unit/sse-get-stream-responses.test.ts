/**
 * The standalone GET stream drops every JSON-RPC response (src/response/sse-message.ts
 * standaloneVerdict, sse-stage.ts `drop`; MCP Streamable HTTP: "The server MUST NOT send a
 * JSON-RPC response on the stream unless resuming a stream associated with a previous client
 * request"), on every path an event can take: raw-planned blocks (sse-raw-events.ts
 * withResponsesParsed), blocks held across chunks, parsed ones (CR LF), wherever the seller's
 * chunks are cut; requests and notifications pass as the seller's bytes, unparsed when they
 * hold no key hint. Source: a new user's trial (a seller answered a pending call on the
 * standalone GET stream: test/regressions/get-stream-answers-pending-call.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage, cut, TOOL_CALL } from './sse-stage-kit.js';
import { planRawEvents, withResponsesParsed } from '../../src/response/sse-raw-events.js';

const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined } as const;
const frame = (data: string): string => `event: message\ndata: ${data}\n\n`;
const note = (n: number): string => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n}}}`;

/** [data, passes]: the stream's events in order. */
const EVENTS: ReadonlyArray<readonly [string, boolean]> = [
  [note(1), true],
  ['{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"injected"}]}}', false],
  [note(2), true],
  ['{"jsonrpc":"2.0","id":"s-1","method":"ping"}', true],
  ['{"jsonrpc":"2.0","result":{}}', false],
  ['{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}', false],
  ['{"jsonrpc":"2.0","id":2,"method":"tools/call","result":{}}', false],
  ['[{"jsonrpc":"2.0","id":3,"result":{}}]', false],
  ['[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error"}}]', true],
  ['{"jsonrpc":"2.0","id":4,"\\u0065rror":{"code":1,"message":"m"}}', false],
  ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"caf\\u00e9 \\"result\\""}}', true],
  [note(3), true],
];
const STREAM = EVENTS.map(([data]) => frame(data)).join('');
const EXPECTED = EVENTS.filter(([, passes]) => passes)
  .map(([data]) => frame(data))
  .join('');
const DROPS = EVENTS.filter(([, passes]) => !passes).length;

function assertDrops(warnings: unknown[], label: string): void {
  assert.equal(warnings.length, DROPS, label);
  for (const w of warnings) assert.equal((w as { reason: string }).reason, 'get_stream_response', label);
}

/** Whether `b` is a view into `chunk`'s bytes (not a copy). */
function isViewOf(b: Buffer, chunk: Buffer): boolean {
  return b.buffer === chunk.buffer && b.byteOffset >= chunk.byteOffset && b.byteOffset + b.length <= chunk.byteOffset + chunk.length;
}

test('every response is dropped, requests and notifications pass, wherever the chunks are cut', async () => {
  const bytes = Buffer.from(STREAM);
  const whole = await runSseStage([bytes], { rpc: GET_STREAM });
  assert.equal(whole.body, EXPECTED);
  assertDrops(whole.warnings, 'whole');
  assert.equal(whole.exchange.reason, 'get_stream_response');
  assert.equal(whole.exchange.outcome, 'ok');
  for (let i = 0; i <= bytes.length; i++) {
    const r = await runSseStage(cut(bytes, [i]), { rpc: GET_STREAM });
    assert.equal(r.body, EXPECTED, `cut at ${i}`);
    assertDrops(r.warnings, `cut at ${i}`);
  }
  for (let i = 0; i <= bytes.length; i += 17) {
    for (let j = i; j <= bytes.length; j += 11) {
      const r = await runSseStage(cut(bytes, [i, j]), { rpc: GET_STREAM });
      assert.equal(r.body, EXPECTED, `cut at ${i}, ${j}`);
    }
  }
  const ones = await runSseStage(cut(bytes, Array.from({ length: bytes.length - 1 }, (_, k) => k + 1)), { rpc: GET_STREAM });
  assert.equal(ones.body, EXPECTED, 'one byte per chunk');
  assertDrops(ones.warnings, 'one byte per chunk');
});

test('CR LF line endings (the parser path) and a response held across chunks are dropped too', async () => {
  const crlf = await runSseStage([STREAM.replaceAll('\n', '\r\n')], { rpc: GET_STREAM });
  assert.equal(crlf.body, EXPECTED);
  assertDrops(crlf.warnings, 'CR LF');
  // A large response in the form MCP servers write, spanning chunks (sse-held-block.ts).
  const big = frame(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${'x'.repeat(100_000)}"}]}}`);
  const r = await runSseStage([frame(note(1)) + big.slice(0, 30_000), big.slice(30_000, 70_000), big.slice(70_000) + frame(note(2))], { rpc: GET_STREAM });
  assert.equal(r.body, frame(note(1)) + frame(note(2)));
  assert.deepEqual(
    r.warnings.map((w) => (w as { reason: string; observed_bytes: number }).observed_bytes),
    [Buffer.byteLength(big) - 'event: message\ndata: \n\n'.length],
  );
});

test('notifications without a key hint stay on the raw path: views of the seller chunk, around a dropped response', async () => {
  const chunk = Buffer.from(frame(note(1)) + frame(note(2)) + frame('{"jsonrpc":"2.0","id":1,"result":{}}') + frame(note(3)));
  const r = await runSseStage([chunk], { rpc: GET_STREAM });
  assert.equal(r.body, frame(note(1)) + frame(note(2)) + frame(note(3)));
  const views = r.buffers.filter((b) => isViewOf(b, chunk));
  assert.deepEqual(
    views.map((b) => b.toString()),
    [frame(note(1)) + frame(note(2)), frame(note(3))],
  );
});

test('a request\'s stream is not the standalone stream: its response passes and ends it', async () => {
  const response = frame('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}');
  const r = await runSseStage([frame(note(1)) + response], { rpc: TOOL_CALL });
  assert.equal(r.body, frame(note(1)) + response);
  assert.equal(r.exchange.outcome, 'ok');
});

test('withResponsesParsed: raw runs keep no block holding a hint; the block boundaries are the plan\'s', () => {
  const limits = { maxEventBytes: 1 << 20, maxDepth: 64, maxNodes: 1 << 20, answerable: false };
  const bytes = Buffer.from(STREAM + frame(note(4)));
  const plan = planRawEvents(bytes, 0, limits);
  assert.deepEqual(plan.raw, [true], 'all canonical: one raw run before');
  const out = withResponsesParsed(bytes, 0, plan, false);
  let start = 0;
  const segments: Array<[string, boolean]> = [];
  for (let k = 0; k < out.ends.length; k++) {
    segments.push([bytes.subarray(start, out.ends[k]).toString(), out.raw[k]!]);
    start = out.ends[k]!;
  }
  assert.equal(start, bytes.length);
  for (const [text, raw] of segments) {
    assert.ok(text.endsWith('\n\n'), 'a block boundary');
    if (raw) assert.ok(!/"result|"error|\\u/.test(text), `raw segment with a hint: ${text}`);
  }
  const hinted = EVENTS.filter(([data]) => /"result|"error|\\u/.test(data)).length;
  assert.equal(segments.filter(([, raw]) => !raw).length, hinted);
  // A chunk that starts with the response (no blank line before it in the chunk): the block from the start.
  const first = Buffer.from(frame('{"id":1,"result":{}}') + frame(note(1)));
  assert.deepEqual(withResponsesParsed(first, 0, planRawEvents(first, 0, limits), false), { ends: [frame('{"id":1,"result":{}}').length, first.length], raw: [false, true] });
  // Nothing to take out: the same plan object.
  const quiet = Buffer.from(frame(note(1)) + frame(note(2)));
  const quietPlan = planRawEvents(quiet, 0, limits);
  assert.equal(withResponsesParsed(quiet, 0, quietPlan, false), quietPlan);
});

test('withResponsesParsed on a request\'s plan (answerable): blocks holding "result or "error leave the raw runs, whatever their id', () => {
  const limits = { maxEventBytes: 1 << 20, maxDepth: 64, maxNodes: 1 << 20, answerable: true };
  const both = frame('{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}');
  const result = frame('{"jsonrpc":"2.0","result":{}}');
  const error = frame('{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}');
  const chunk = Buffer.from(frame(note(1)) + both + frame(note(2)) + result + error + frame(note(3)));
  const plan = planRawEvents(chunk, 0, limits);
  assert.deepEqual(plan.raw, [true], 'no "id, no backslash: one raw run before');
  let at = 0;
  const ends = [frame(note(1)), both, frame(note(2)), result, error, frame(note(3))].map((block) => (at += block.length));
  assert.deepEqual(withResponsesParsed(chunk, 0, plan, true), { ends, raw: [true, false, true, false, false, true] });
  // A response after the last raw run (it ends the chunk) is not searched again: the plan itself.
  const tail = Buffer.from(frame(note(1)) + frame('{"jsonrpc":"2.0","id":1,"result":{},"error":{}}'));
  const tailPlan = planRawEvents(tail, 0, limits);
  assert.deepEqual(tailPlan.raw, [true, false]);
  assert.equal(withResponsesParsed(tail, 0, tailPlan, true), tailPlan);
  // No raw run at all: the plan itself.
  const only = Buffer.from(frame('{"jsonrpc":"2.0","id":1,"result":{}}'));
  const onlyPlan = planRawEvents(only, 0, limits);
  assert.equal(withResponsesParsed(only, 0, onlyPlan, true), onlyPlan);
});
