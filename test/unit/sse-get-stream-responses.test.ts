/**
 * The standalone GET stream drops every JSON-RPC response (src/response/sse-message.ts
 * standaloneVerdict, sse-stage.ts `drop`; MCP Streamable HTTP: "The server MUST NOT send a
 * JSON-RPC response on the stream unless resuming a stream associated with a previous client
 * request"), on every path an event can take: raw-planned blocks (sse-raw-events.ts
 * RawEventLimits.responseKeys), blocks held across chunks, parsed ones (CR LF), wherever the seller's
 * chunks are cut; requests and notifications pass as the seller's bytes, unparsed when they
 * hold no key hint. Source: a new user's trial (a seller answered a pending call on the
 * standalone GET stream: test/regressions/get-stream-answers-pending-call.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSseStage, cut, TOOL_CALL } from './sse-stage-kit.js';
import { planRawEvents } from '../../src/response/sse-raw-events.js';
import { planRawEventsFast } from '../../src/response/sse-raw-plan.js';

const GET_STREAM = { kind: 'none', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined } as const;
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
  // `ſ` (U+017F) folds to `s` for a Go host: `"reſult"` is `result` (a new user's trial 8, F3 (residual)).
  ['{"jsonrpc":"2.0","id":5,"re\u017fult":{}}', false],
  ['{"jsonrpc":"2.0","method":"notifications/message","params":{"re\u017fult":1}}', true],
  [note(3), true],
];
const STREAM = EVENTS.map(([data]) => frame(data)).join('');
const EXPECTED = EVENTS.filter(([, passes]) => passes)
  .map(([data]) => frame(data))
  .join('');
const DROPS = EVENTS.filter(([, passes]) => !passes).length;

/** Every drop counted (the hook: the warnings are throttled per stream, trial 9, F5) and one drop warning logged. */
function assertDrops(r: { drops: string[]; warnings: unknown[] }, label: string): void {
  assert.deepEqual(r.drops, Array(DROPS).fill('get_stream_response'), label);
  assert.equal((r.warnings[0] as { reason: string }).reason, 'get_stream_response', label);
}

/** Whether `b` is a view into `chunk`'s bytes (not a copy). */
function isViewOf(b: Buffer, chunk: Buffer): boolean {
  return b.buffer === chunk.buffer && b.byteOffset >= chunk.byteOffset && b.byteOffset + b.length <= chunk.byteOffset + chunk.length;
}

test('every response is dropped, requests and notifications pass, wherever the chunks are cut', async () => {
  const bytes = Buffer.from(STREAM);
  const whole = await runSseStage([bytes], { rpc: GET_STREAM });
  assert.equal(whole.body, EXPECTED);
  assertDrops(whole, 'whole');
  assert.equal(whole.exchange.reason, 'get_stream_response');
  assert.equal(whole.exchange.outcome, 'ok');
  for (let i = 0; i <= bytes.length; i++) {
    const r = await runSseStage(cut(bytes, [i]), { rpc: GET_STREAM });
    assert.equal(r.body, EXPECTED, `cut at ${i}`);
    assertDrops(r, `cut at ${i}`);
  }
  for (let i = 0; i <= bytes.length; i += 17) {
    for (let j = i; j <= bytes.length; j += 11) {
      const r = await runSseStage(cut(bytes, [i, j]), { rpc: GET_STREAM });
      assert.equal(r.body, EXPECTED, `cut at ${i}, ${j}`);
    }
  }
  const ones = await runSseStage(cut(bytes, Array.from({ length: bytes.length - 1 }, (_, k) => k + 1)), { rpc: GET_STREAM });
  assert.equal(ones.body, EXPECTED, 'one byte per chunk');
  assertDrops(ones, 'one byte per chunk');
});

test('CR LF line endings (the parser path) and a response held across chunks are dropped too', async () => {
  const crlf = await runSseStage([STREAM.replaceAll('\n', '\r\n')], { rpc: GET_STREAM });
  assert.equal(crlf.body, EXPECTED);
  assertDrops(crlf, 'CR LF');
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

/** A POSTed notification's stream (`rpc.kind` 'notification'): no request awaits a response there either. */
const NOTIFICATION_STREAM = { kind: 'notification', id: null, idText: undefined, method: 'notifications/initialized', toolName: undefined, taskId: undefined } as const;

test('responses named in another case, alone or in an array, are dropped on the GET stream and on a notification\'s stream, wherever the chunks are cut', async () => {
  // A Go host reads `"Result"` as `result` (test/regressions/case-variant-member-names-accepted.test.ts);
  // the notification's stream drops what the GET stream does (test/regressions/notification-answer-carries-response-forwarded.test.ts).
  const events: ReadonlyArray<readonly [string, boolean]> = [
    [note(1), true],
    ['{"jsonrpc":"2.0","ID":1,"Result":{"content":[{"type":"text","text":"injected"}]}}', false],
    ['[{"jsonrpc":"2.0","ID":2,"RESULT":{}}]', false],
    ['[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"Result: ok"}}]', true],
    ['{"jsonrpc":"2.0","id":3,"eRRor":{"code":1,"message":"x"}}', false],
    [note(2), true],
  ];
  const bytes = Buffer.from(events.map(([data]) => frame(data)).join(''));
  const expected = events.filter(([, passes]) => passes).map(([data]) => frame(data)).join('');
  const drops = events.filter(([, passes]) => !passes).length;
  for (const [rpc, reason] of [[GET_STREAM, 'get_stream_response'], [NOTIFICATION_STREAM, 'notification_stream_response']] as const) {
    for (let i = 0; i <= bytes.length; i += 7) {
      const r = await runSseStage(cut(bytes, [i]), { rpc });
      assert.equal(r.body, expected, `${rpc.kind}, cut at ${i}`);
      assert.deepEqual(r.drops, Array(drops).fill(reason), `${rpc.kind}, cut at ${i}`);
    }
    const crlf = await runSseStage([bytes.toString().replaceAll('\n', '\r\n')], { rpc });
    assert.equal(crlf.body, expected, `${rpc.kind}, CR LF (the parser path; events go out LF-framed)`);
    assert.deepEqual(crlf.drops, Array(drops).fill(reason), `${rpc.kind}, CR LF`);
  }
});

test('a request\'s stream is not the standalone stream: its response passes and ends it', async () => {
  const response = frame('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}');
  const r = await runSseStage([frame(note(1)) + response], { rpc: TOOL_CALL });
  assert.equal(r.body, frame(note(1)) + response);
  assert.equal(r.exchange.outcome, 'ok');
});

/** The plan's segments as [text, raw]; both planners must give the same. */
function segmentsOf(bytes: Buffer, limits: Parameters<typeof planRawEvents>[2]): Array<[string, boolean]> {
  const plan = planRawEvents(bytes, 0, limits);
  assert.deepEqual(planRawEventsFast(bytes, 0, limits), plan, 'the WebAssembly planner gives the reference plan');
  let start = 0;
  const segments: Array<[string, boolean]> = [];
  for (let k = 0; k < plan.ends.length; k++) {
    segments.push([bytes.subarray(start, plan.ends[k]).toString(), plan.raw[k]!]);
    start = plan.ends[k]!;
  }
  assert.equal(start, bytes.length);
  return segments;
}

test('responseKeys: raw runs keep no block holding a response key hint, in any case; the block boundaries are the plan\'s', () => {
  const limits = { maxEventBytes: 1 << 20, maxDepth: 64, maxNodes: 1 << 20, answerable: false, responseKeys: true };
  const variants = ['{"jsonrpc":"2.0","ID":999,"Result":{}}', '{"jsonrpc":"2.0","id":1,"eRRor":{"code":1,"message":"x"}}', '{"jsonrpc":"2.0","RESULT":{}}', '{"jsonrpc":"2.0","RE\u017fULT":{}}'];
  const bytes = Buffer.from(STREAM + variants.map(frame).join('') + frame(note(4)));
  const segments = segmentsOf(bytes, limits);
  const HINT = /"re(?:s|\u017f)ult|"error|\\u/i;
  for (const [text, raw] of segments) {
    assert.ok(text.endsWith('\n\n'), 'a block boundary');
    if (raw) assert.ok(!HINT.test(text), `raw segment with a hint: ${text}`);
  }
  const hinted = EVENTS.filter(([data]) => HINT.test(data)).length + variants.length;
  assert.equal(segments.filter(([, raw]) => !raw).length, hinted);
  // Without responseKeys (a stream past its response): one raw run.
  assert.deepEqual(segmentsOf(bytes, { ...limits, responseKeys: false }).map(([, raw]) => raw), [true]);
  // A chunk that starts with the response: the block from the start.
  const first = Buffer.from(frame('{"id":1,"Result":{}}') + frame(note(1)));
  assert.deepEqual(planRawEvents(first, 0, limits), { ends: [frame('{"id":1,"Result":{}}').length, first.length], raw: [false, true] });
  // `"rESULTs` starts with a key's letters: a hint (parsed, and found no response); `"Resul"` is none: raw.
  const near = Buffer.from(frame('{"method":"m","params":{"Resul":1,"rESULTs":2}}') + frame('{"method":"m","params":{"x":"Resul"}}'));
  assert.deepEqual(segmentsOf(near, limits).map(([, raw]) => raw), [false, true]);
});

test('responseKeys on a request\'s plan (answerable): blocks holding "result or "error, in any case, leave the raw runs, whatever their id', () => {
  const limits = { maxEventBytes: 1 << 20, maxDepth: 64, maxNodes: 1 << 20, answerable: true, responseKeys: true };
  const both = frame('{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}');
  const result = frame('{"jsonrpc":"2.0","Result":{}}');
  const error = frame('{"jsonrpc":"2.0","ERROR":{"code":1,"message":"x"}}');
  const chunk = Buffer.from(frame(note(1)) + both + frame(note(2)) + result + error + frame(note(3)));
  assert.deepEqual(planRawEvents(chunk, 0, { ...limits, responseKeys: false }).raw, [true], 'no "id, no backslash: one raw run without the key hints');
  assert.deepEqual(segmentsOf(chunk, limits).map(([, raw]) => raw), [true, false, true, false, false, true]);
});
