/**
 * The response event on the SSE path (src/response/sse-message.ts through the stage, fed
 * chunks, no sockets): bounds by the WebAssembly scan (checkJsonBounds for data that is not
 * JSON), the seller's bytes forwarded without a parse when the rewrite provably leaves them
 * unchanged, a dedupe spliced into the seller's bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cut, runSseStage } from './sse-stage-kit.js';
import { dataBytesOf } from '../../src/response/sse-event-data-bytes.js';
import type { CompletedLine } from '../../src/response/sse-boundaries.js';

const progress = (n: number): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":100}}\n\n`;
const event = (data: string): string => `event: message\ndata: ${data.split('\n').join('\ndata: ')}\n\n`;
const sc = { products: Array.from({ length: 40 }, (_, i) => ({ id: `p${i}`, name: `Product ${i}`, price: 12.5 + i })) };

/** The event's bytes cut into chunks of `size` (a long data line arrives in pieces). */
function pieces(text: string, size: number): Buffer[] {
  const b = Buffer.from(text);
  const out: Buffer[] = [];
  for (let at = 0; at < b.length; at += size) out.push(b.subarray(at, at + size));
  return out;
}

test('a response the rewrite leaves unchanged goes out as the seller bytes, unparsed, however it is cut', async () => {
  const data = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Found 40 products.' }], structuredContent: sc } });
  const stream = progress(1) + event(data);
  for (const size of [7, 64, 1000, stream.length]) {
    const r = await runSseStage(pieces(stream, size), { wantsResponseMessage: false });
    assert.equal(r.body, stream, `chunks of ${size}`);
    assert.equal(r.exchange.outcome, 'ok');
    assert.deepEqual(r.observed, [], 'not parsed for the hook');
  }
  // Observed when the pipeline wants the message (discovery): parsed, same bytes, measured on
  // every byte the host gets through it, the event before it said apart (hostile trial 57, F2).
  const seen = await runSseStage([stream]);
  assert.equal(seen.body, stream);
  assert.deepEqual(seen.observed, [{ message: JSON.parse(data), bytes: Buffer.byteLength(stream), before: { events: 1, bytes: Buffer.byteLength(progress(1)) } }]);
});

test('a pretty-printed response over several data lines goes out line for line', async () => {
  const data = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok ✓' }], structuredContent: { a: [1, 2] } } }, null, 2);
  const r = await runSseStage([progress(1) + event(data)], { wantsResponseMessage: false });
  assert.equal(r.body, progress(1) + event(data));
});

test('a dedupe is spliced into the seller bytes: its spacing and number spellings stay', async () => {
  const text = JSON.stringify(sc);
  const data = `{"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": ${text}, "content": [{"type": "text", "text": ${JSON.stringify(text)}}], "_meta": {"n": 1.50}}}`;
  for (const wantsResponseMessage of [false, true]) {
    const r = await runSseStage([progress(1), event(data)], { wantsResponseMessage });
    assert.equal(r.exchange.outcome, 'rewritten');
    assert.deepEqual(r.exchange.actions, ['deduped']);
    const out = /^event: message\ndata: (.*)\n\n$/.exec(r.writes[1]!)![1]!;
    const summary = (JSON.parse(out) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
    assert.equal(out, data.replace(JSON.stringify(text), JSON.stringify(summary)));
    assert.equal(r.exchange.bytesSaved, Buffer.byteLength(data) - Buffer.byteLength(out));
    if (wantsResponseMessage) assert.deepEqual(r.observed, [{ message: JSON.parse(out), bytes: Buffer.byteLength(r.body), before: { events: 1, bytes: Buffer.byteLength(r.writes[0]!) } }]);
  }
});

test('a response with an escaped key is parsed: still the response', async () => {
  const data = '{"jsonrpc":"2.0","\\u0069d":1,"result":{"content":[{"type":"text","text":"x"}]}}';
  const r = await runSseStage([progress(1) + event(data) + progress(2)], { wantsResponseMessage: false });
  assert.equal(r.body, progress(1) + event(data));
  assert.equal(r.ended, true);
});

test('data that only looks like the response is forwarded and the stream goes on', async () => {
  // A response to another id, alone or in a batch, is not forwarded: the next test.
  const other = ['{"jsonrpc":"2.0","method":"n","params":{"result":1}}', '[{"jsonrpc":"2.0","method":"n","params":{"result":1}}]', '"result"', 'not json: result'];
  const done = event('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
  for (const data of other) {
    const r = await runSseStage([progress(1) + event(data) + done], { wantsResponseMessage: false });
    assert.equal(r.body, progress(1) + event(data) + done, data);
  }
});

test('a response to another id ends the stream with upstream_not_mcp for the request (test/regressions/sse-response-for-another-id.test.ts)', async () => {
  const done = event('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
  // Alone; with a `method` beside its `result` (sse-method-and-result-for-another-id-forwarded);
  // in a batch, the request's own response in it or not (sse-batch-shaped-response-for-another-id-forwarded).
  const foreign = [
    '{"jsonrpc":"2.0","id":2,"result":{}}',
    '{"jsonrpc":"2.0","id":2,"method":"n","result":{}}',
    '[{"jsonrpc":"2.0","id":2,"result":{}}]',
    '[{"jsonrpc":"2.0","id":1,"result":{"content":[]}},{"jsonrpc":"2.0","id":2,"result":{}}]',
  ];
  for (const data of foreign) {
    for (const wantsResponseMessage of [false, true]) {
      const r = await runSseStage([progress(1) + event(data) + done], { wantsResponseMessage });
      assert.equal(r.exchange.reason, 'upstream_not_mcp', data);
      assert.ok(r.body.startsWith(progress(1) + 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":'), data);
      assert.ok(r.body.endsWith('"details":{"reason":"upstream_not_mcp","upstream_status":200}}}}}\n\n'), data);
      assert.ok(!r.body.includes('"id":2'), data);
    }
  }
});

test('a message with result and/or error and no id ends the stream with upstream_not_mcp, wherever the chunks are cut (test/regressions/sse-result-and-error-without-id-forwarded.test.ts)', async () => {
  const done = event('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
  const noId = ['{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}', '{"jsonrpc":"2.0","result":{}}', '{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}', '[{"jsonrpc":"2.0","result":{}}]'];
  for (const data of noId) {
    const bytes = Buffer.from(progress(1) + event(data) + progress(2) + done);
    for (let i = 0; i <= bytes.length; i += 7) {
      for (const wantsResponseMessage of [false, true]) {
        const r = await runSseStage(cut(bytes, [i]), { wantsResponseMessage });
        assert.equal(r.exchange.reason, 'upstream_not_mcp', `${data}, cut at ${i}`);
        assert.ok(r.body.startsWith(progress(1) + 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":'), `${data}, cut at ${i}`);
        assert.ok(!r.body.includes(data), `${data}, cut at ${i}`);
      }
    }
  }
});

test('structure bounds of a possible response: the scan, exact at the limit', async () => {
  const nested = (depth: number): string => `{"jsonrpc":"2.0","id":1,"result":{"x":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;
  const agentYaml = ['max_json_depth: 10'];
  const ok = await runSseStage([event(nested(10))], { agentYaml, wantsResponseMessage: false });
  assert.equal(ok.body, event(nested(10)));
  const over = await runSseStage([event(nested(11))], { agentYaml, wantsResponseMessage: false });
  assert.equal(over.exchange.reason, 'json_depth');
  assert.ok(over.body.includes(`"details":{"reason":"json_depth","limit_depth":10,"observed_depth":11,"limit_bytes":4194304,"observed_bytes":${nested(11).length}}`));
});

test('plain text that is not JSON is forwarded as it is; data that starts as an array or object is counted past a syntax error', async () => {
  // Text (not starting with `[` or `{`) holding 12 levels (max 10): forwarded, the host's client decides.
  const done = event('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
  for (const data of [`error: ${'['.repeat(12)}`, `result: {x ${'{'.repeat(12)}`, `{"jsonrpc":"2.0","id":1,"result":{x ${'['.repeat(3)}`]) {
    const fwd = await runSseStage([event(data) + done], { agentYaml: ['max_json_depth: 10'], wantsResponseMessage: false });
    assert.equal(fwd.body, event(data) + done, data);
  }
  // Review of be8fed7: a lenient parser (Python's json.loads) reads NaN / Infinity and goes on.
  const bombs = [
    `{"jsonrpc":"2.0","id":1,"result":${'['.repeat(10)} x`,
    `{"jsonrpc":"2.0","id":1,"result":{x ${'['.repeat(12)}`,
    ` [NaN,${'['.repeat(12)}${']'.repeat(12)}]`,
    `{"error":Infinity,"y":[${'0,'.repeat(30)}0]}`,
  ];
  for (const data of bombs) {
    const r = await runSseStage([event(data)], { agentYaml: ['max_json_depth: 10', 'max_json_nodes: 20'], wantsResponseMessage: false });
    assert.ok(r.exchange.reason === 'json_depth' || r.exchange.reason === 'json_nodes', `${data}: ${r.exchange.reason}`);
  }
});

test('review of be8fed7: a stream ending with a CR and then an incomplete character dispatches no unfinished event', async () => {
  const r = await runSseStage([Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\r'), Buffer.from([0xe2])], { wantsResponseMessage: false });
  assert.equal(r.exchange.reason, 'upstream_reset');
});

test('a batch holding the response is the response: forwarded as it is, and the stream ends there (MCP 2025-03-26)', async () => {
  for (const data of ['[{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]', ' [{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}]']) {
    const r = await runSseStage([progress(1) + event(data) + progress(2)], { wantsResponseMessage: false, protocolVersion: '2025-03-26' });
    assert.equal(r.body, progress(1) + event(data), data);
    assert.equal(r.ended, true);
    assert.equal(r.exchange.outcome, 'ok');
  }
});

test('no batches from 2025-06-18 on: an array holding the response, an array with an element that is no object, end the stream upstream_not_mcp (a new user\'s trial, 2026-12-03)', async () => {
  for (const [data, protocolVersion] of [
    ['[{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]', '2025-06-18'],
    ['["result"]', '2025-06-18'],
    ['[[{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]]', '2025-03-26'],
  ] as const) {
    const r = await runSseStage([progress(1) + event(data) + progress(2)], { wantsResponseMessage: false, protocolVersion });
    assert.equal(r.exchange.reason, 'upstream_not_mcp', data);
    assert.ok(!r.body.includes(data), data);
  }
});

test('a long notification the cheap test cannot prove within the node bound is scanned, and passes or fails exactly', async () => {
  const note = (values: number): string => `{"jsonrpc":"2.0","method":"n","params":{"v":[${Array.from({ length: values }, () => '"' + 'x'.repeat(20) + '"').join(',')}]}}`;
  // Nodes: the message, "2.0", "n", params, v, then the values: 5 + values.
  const agentYaml = ['max_json_nodes: 60'];
  const done = event('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}');
  const ok = await runSseStage([event(note(55)) + done], { agentYaml, wantsResponseMessage: false });
  assert.equal(ok.body, event(note(55)) + done);
  const over = await runSseStage([event(note(56)) + done], { agentYaml, wantsResponseMessage: false });
  assert.equal(over.exchange.reason, 'json_nodes');
});

test('dataBytesOf: the held line value is the data only when it is its one data line, in valid UTF-8', () => {
  const line = (text: string, utf8 = true): CompletedLine => ({ bytes: Buffer.from(text), textLength: text.length, utf8 });
  assert.equal(dataBytesOf('{"a":1}', line('data: {"a":1}'))!.toString(), '{"a":1}');
  assert.equal(dataBytesOf('{"a":1}', line('data:{"a":1}'))!.toString(), '{"a":1}');
  assert.equal(dataBytesOf(' {"a":1}', line('data:  {"a":1}'))!.toString(), ' {"a":1}');
  assert.equal(dataBytesOf('"é✓"', line('data: "é✓"'))!.toString(), '"é✓"');
  assert.equal(dataBytesOf('x\n{"a":1}', line('data: {"a":1}')), undefined, 'a second data line');
  assert.equal(dataBytesOf('{"a":1}', line('data: {"a":1}', false)), undefined, 'not valid UTF-8');
  assert.equal(dataBytesOf('{"a":1}', undefined), undefined);
});
