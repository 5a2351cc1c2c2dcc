/**
 * The byte-level plan of the SSE fast path (src/response/sse-raw-events.ts): which complete
 * event blocks of a chunk may go to the host as the seller's bytes. Raw only when the block
 * is in the form sse-encode.ts writes, has no id, provably respects every bound (tested at
 * exactly the limit) and cannot be the response; everything else is planned for the parser.
 * Consecutive raw blocks come as one segment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRawEvents, type RawEventLimits } from '../../src/response/sse-raw-events.js';

const LIMITS: RawEventLimits = { maxEventBytes: 4096, maxDepth: 8, maxNodes: 4096, answerable: true };
const progress = (n: number): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":100}}\n\n`;

/**
 * The plan as [block text, raw] pairs, plus the bytes left after the last block. The plan's
 * runs of raw blocks are one segment each: they are compared with the expected blocks
 * through {@link runs}.
 */
function plan(text: string | Buffer, limits: RawEventLimits = LIMITS, from = 0): { blocks: Array<[string, boolean]>; tail: string } {
  const chunk = typeof text === 'string' ? Buffer.from(text) : text;
  const p = planRawEvents(chunk, from, limits);
  assert.equal(p.ends.length, p.raw.length);
  const blocks: Array<[string, boolean]> = [];
  let at = from;
  for (let k = 0; k < p.ends.length; k++) {
    assert.ok(p.ends[k]! > at, 'segments are not empty');
    if (k > 0) assert.ok(!(p.raw[k] && p.raw[k - 1]), 'consecutive raw blocks are one segment');
    blocks.push([chunk.toString('utf8', at, p.ends[k]), p.raw[k]!]);
    at = p.ends[k]!;
  }
  return { blocks, tail: chunk.toString('utf8', at) };
}

/** Expected blocks as the plan gives them: consecutive raw blocks joined into one segment. */
function runs(blocks: Array<[string, boolean]>): Array<[string, boolean]> {
  const out: Array<[string, boolean]> = [];
  for (const [text, raw] of blocks) {
    const last = out[out.length - 1];
    if (raw && last !== undefined && last[1]) last[0] += text;
    else out.push([text, raw]);
  }
  return out;
}

test('canonical blocks without id are raw; the incomplete tail is not planned', () => {
  const multi = 'data: {"a":\ndata: 1}\n\n';
  const noType = 'data: {"x":1}\n\n';
  const emptyValue = 'data: \n\n';
  const r = plan(progress(1) + multi + noType + emptyValue + 'event: message\ndata: {"y"');
  assert.deepEqual(
    r.blocks,
    runs([
      [progress(1), true],
      [multi, true],
      [noType, true],
      [emptyValue, true],
    ]),
  );
  assert.equal(r.blocks.length, 1);
  assert.equal(r.tail, 'event: message\ndata: {"y"');
});

test('blocks the encoder would not write byte for byte, or that carry an id, are for the parser', () => {
  const slow = [
    ': keepalive\n\n', // a comment: written without the blank line
    'id: 7\ndata: {}\n\n', // an id: its resume token is minted
    'id\ndata: {}\n\n', // an empty id
    'data: {}\nid: 7\n\n',
    'idx: 1\ndata: {}\n\n', // an unknown field starting with i
    'retry: 10\ndata: {}\n\n',
    'data:{}\n\n', // no space after the colon: re-encoded with one
    'data:\n\n',
    'event:message\ndata: {}\n\n',
    'event: \ndata: {}\n\n', // an empty type: dropped by the parser
    'data: {}\nevent: message\n\n', // the type after the data: re-encoded first
    'event: a\nevent: b\ndata: {}\n\n',
    'event: message\n\n', // no data: dispatches nothing
    'data: {}\n: note\n\n', // a comment inside an event
    'foo: bar\ndata: {}\n\n',
    '\n', // a lone blank line
    '\ufeffdata: {}\n\n', // a BOM (only possible at the stream's start)
  ];
  for (const block of slow) {
    const r = plan(progress(1) + block + progress(2));
    assert.deepEqual(r.blocks, [[progress(1), true], [block, false], [progress(2), true]], JSON.stringify(block));
  }
});

test('the event bound and the node bound hold at exactly the limit', () => {
  const head = 'data: "';
  const block = (bytes: number): string => `${head}${'x'.repeat(bytes - head.length - 3)}"\n\n`;
  assert.equal(Buffer.byteLength(block(100)), 100);
  for (const limits of [
    { ...LIMITS, maxEventBytes: 100 },
    { ...LIMITS, maxNodes: 100 },
  ]) {
    assert.deepEqual(plan(block(100), limits).blocks, [[block(100), true]]);
    assert.deepEqual(plan(block(101), limits).blocks, [[block(101), false]]);
  }
});

test('the depth bound: at most max_json_depth brackets in the block, strings and every line included', () => {
  const block = (open: number): string => `event: message\ndata: ${'['.repeat(open)}\ndata: "{"${']'.repeat(open)}\n\n`;
  assert.deepEqual(plan(block(7)).blocks, [[block(7), true]]); // 7 + the `{` in the string = 8
  assert.deepEqual(plan(block(8)).blocks, [[block(8), false]]);
  const braces = 'data: {"a":{"b":{"c":{}}}}\n\n';
  assert.deepEqual(plan(braces, { ...LIMITS, maxDepth: 4 }).blocks, [[braces, true]]);
  assert.deepEqual(plan(braces, { ...LIMITS, maxDepth: 3 }).blocks, [[braces, false]]);
});

test('on a stream answering a request, anything that may be the response is for the parser', () => {
  // The response has an `id` key: `"id"` written plainly, or with an escape (a backslash).
  // In any ASCII case: a Go host reads `"ID"` as `id`, so `{"jsonrpc":"2.0","ID":1}` claims
  // request 1's answer (a new user's trial 8, F3 (residual)).
  const maybe = [
    'data: {"id":1,"result":{}}\n\n',
    'data: {"id":1,"error":{}}\n\n',
    'data: {"\\u0069d":1,"result":{}}\n\n',
    'data: {"x":"\\n","result":{}}\n\n',
    'data: {"id":7}\n\n',
    'event: message\ndata: {\ndata: "id": 1}\n\n',
    'data: {"jsonrpc":"2.0","ID":1}\n\n',
    'data: {"Id":7}\n\n',
    'data: {"iD":7}\n\n',
  ];
  for (const block of maybe) {
    const stream = progress(1) + block + progress(2);
    assert.deepEqual(plan(stream).blocks, [[progress(1), true], [block, false], [progress(2), true]], block);
    assert.deepEqual(plan(stream, { ...LIMITS, answerable: false }).blocks, runs([[progress(1), true], [block, true], [progress(2), true]]), block);
  }
  // Without an id key it cannot be the response, whatever else it says.
  const notResponse = ['data: {"result":{},"error":{}}\n\n', 'data: {"message":"no results"}\n\n', 'event: error\ndata: {}\n\n', 'data: {"XD":"D","xid":"d"}\n\n'];
  for (const block of notResponse) assert.deepEqual(plan(progress(1) + block).blocks, runs([[progress(1), true], [block, true]]), block);
  // A hint in the incomplete tail, or in an earlier block, does not taint the others.
  const r = plan(`data: {"id":1}\n\n${progress(1)}${progress(2)}data: {"id"`);
  assert.deepEqual(r.blocks, runs([['data: {"id":1}\n\n', false], [progress(1), true], [progress(2), true]]));
});

test('methodNamed: a block is raw only when its data provably names a method (its prefix, one `"method` key), or is no JSON object or array', () => {
  // A review: `{"jsonrpc":"2.0"}` and `{"jsonrpc":"2.0","method":""}` (no kind, or an empty
  // method) held none of the other hints and went out raw on every stream
  // (test/regressions/seller-message-without-kind-forwarded.test.ts).
  const limits = { ...LIMITS, answerable: false, methodNamed: true };
  const named = [
    'data: {"method":"notifications/progress","params":{"progress":1},"jsonrpc":"2.0"}\n\n',
    'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}\n\n',
    'event: x-custom\ndata: {"method":"x"}\n\n',
    'data: {"method":"x",\ndata: "params":{}}\n\n',
    'data: {"method":"x","params":{"message":"ok"}}\n\n',
    // No JSON object or array: text or a scalar, forwarded as such.
    'data: plain text\n\n',
    'data: "{\\"jsonrpc\\":\\"2.0\\"}"\n\n',
    'data: 42\n\n',
    'data: x\ndata: {"jsonrpc":"2.0"}\n\n',
  ];
  for (const block of named) assert.deepEqual(plan(progress(1) + block, limits).blocks, runs([[progress(1), true], [block, true]]), block);
  const unproved = [
    'data: {"jsonrpc":"2.0"}\n\n',
    'data: {"jsonrpc":"2.0","params":{}}\n\n',
    'data: {"jsonrpc":"2.0","method":""}\n\n',
    'data: {"method":""}\n\n',
    'data: {"jsonrpc":"2.0","method":null}\n\n',
    'data: {"jsonrpc":"2.0","params":{"method":"x"}}\n\n',
    'data: {"method":"x","method":""}\n\n',
    'data: {"method":"x","METHOD":""}\n\n',
    'data: {"method":"x","params":{"Method":1}}\n\n',
    'event: "method\ndata: {"method":"x"}\n\n',
    'data: {"jsonrpc": "2.0", "method": "x"}\n\n',
    'data: {"params":{},"method":"x"}\n\n',
    'data: {"method":"\n\n',
    'data: {"jsonrpc":"2.0","method":"\n\n',
    'data: {"method":"\ndata: x"}\n\n',
    'data:  {"method":"x"}\n\n',
    'data: \t{"method":"x"}\n\n',
    'data: [{"method":"x"}]\n\n',
    'data: \ndata: {"jsonrpc":"2.0"}\n\n',
    'data: \n\n',
  ];
  for (const block of unproved) {
    assert.deepEqual(plan(progress(1) + block + progress(2), limits).blocks, [[progress(1), true], [block, false], [progress(2), true]], block);
    assert.deepEqual(plan(progress(1) + block + progress(2), LIMITS).blocks.length, 1, `raw without the hint: ${block}`);
  }
});

test('UTF-8: valid multi-byte text stays raw; an invalid byte anywhere in the planned blocks makes them all parsed', () => {
  const accented = 'data: {"m":"café ✓ 𝄞"}\n\n';
  assert.deepEqual(plan(progress(1) + accented).blocks, runs([[progress(1), true], [accented, true]]));
  const invalid = Buffer.concat([Buffer.from(progress(1)), Buffer.from('data: {"m":"'), Buffer.from([0xff]), Buffer.from('"}\n\n')]);
  assert.deepEqual(
    plan(invalid).blocks.map(([, raw]) => raw),
    [false],
  );
  // Only the run that holds it: a block for the parser in between keeps the others raw.
  const split = Buffer.concat([invalid, Buffer.from(': c\n\n' + progress(2))]);
  assert.deepEqual(
    plan(split).blocks.map(([, raw]) => raw),
    [false, false, true],
  );
  // An invalid byte in the incomplete tail (a character cut at the chunk's end) does not count.
  const cut = Buffer.concat([Buffer.from(progress(1) + 'data: "'), Buffer.from('✓').subarray(0, 2)]);
  assert.deepEqual(plan(cut).blocks, [[progress(1), true]]);
});

test('planning starts at `from`', () => {
  const stream = 'x"}\n\n' + progress(1);
  assert.deepEqual(plan(stream, LIMITS, 5), { blocks: [[progress(1), true]], tail: '' });
});

test('`event: message` and other types: the same plan either way the event line is found', () => {
  const typed = (type: string): string => `event: ${type}\ndata: {"x":1}\n\n`;
  for (const type of ['message', 'messages', 'messag', 'm', 'message2', 'progress']) {
    const r = plan(progress(1) + typed(type) + progress(2) + 'event: message');
    assert.deepEqual(r.blocks, [[progress(1) + typed(type) + progress(2), true]], type);
    assert.equal(r.tail, 'event: message');
  }
  // `event: message` cut before its line break, or with nothing after the line break: incomplete.
  for (const tail of ['event: message', 'event: message\n', 'event: messag']) {
    assert.deepEqual(plan(progress(1) + tail), { blocks: [[progress(1), true]], tail }, JSON.stringify(tail));
  }
  // An event without data dispatches nothing: for the parser.
  assert.deepEqual(plan(progress(1) + 'event: message\n\n' + progress(2)).blocks, [
    [progress(1), true],
    ['event: message\n\n', false],
    [progress(2), true],
  ]);
});

test('response hints: each block holding one is for the parser, wherever the hints are and however many', () => {
  const quoteId = 'data: {"a":{"id":2}}\n\n';
  const slash = 'data: {"a":"\\\\"}\n\n';
  const both = 'data: {"id":1,"m":"\\"x\\""}\n\ndata: {"id":2}\n\n';
  const r = plan(slash + progress(1) + quoteId + quoteId + progress(2) + both + progress(3) + 'data: {"id"');
  assert.deepEqual(r.blocks, [
    [slash, false],
    [progress(1), true],
    [quoteId, false],
    [quoteId, false],
    [progress(2), true],
    ['data: {"id":1,"m":"\\"x\\""}\n\n', false],
    ['data: {"id":2}\n\n', false],
    [progress(3), true],
  ]);
  // Before `from`: not part of the plan, does not taint the first block.
  const head = 'data: {"id":9}\n\n';
  assert.deepEqual(plan(head + progress(1), LIMITS, Buffer.byteLength(head)).blocks, [[progress(1), true]]);
  // `_id"` keys (AdCP ids) and `"identifier` are not the `id` key: `"identifier"` holds `"id` (parsed), `"product_id"` does not.
  assert.deepEqual(plan('data: {"product_id":"p1"}\n\n').blocks, [['data: {"product_id":"p1"}\n\n', true]]);
  assert.deepEqual(plan('data: {"identifier":"p1"}\n\n').blocks, [['data: {"identifier":"p1"}\n\n', false]]);
});

test('the plan equals a block-by-block reference over random mixes of blocks', () => {
  const kinds = [
    progress(7),
    'data: {"x":[1,[2]]}\n\n',
    'event: update\ndata: {"a":\ndata: 1}\n\n',
    ': keepalive\n\n',
    'id: 5\ndata: {}\n\n',
    'data:{"y":2}\n\n',
    'data: {"id":3,"result":{}}\n\n',
    'data: {"ID":4}\n\n',
    'data: {"s":"\\\\"}\n\n',
    `data: ${'['.repeat(9)}${']'.repeat(9)}\n\n`,
    'data: "café ✓"\n\n',
    'event: message\n\n',
    'data: \n\n',
  ];
  /** The obvious per-block rules (module doc of sse-raw-events.ts), on the block's text. */
  const rawRef = (block: string, limits: RawEventLimits): boolean => {
    const canonical = /^(event: [^\n]+\n)?(data: [^\n]*\n)+\n$/.test(block);
    const brackets = (block.match(/[{[]/g) ?? []).length;
    const hint = limits.answerable && (/"id/i.test(block) || block.includes('\\'));
    return canonical && Buffer.byteLength(block) <= Math.min(limits.maxEventBytes, limits.maxNodes) && brackets <= limits.maxDepth && !hint;
  };
  let seed = 7;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const limits = { ...LIMITS, answerable: rand(2) === 0, maxDepth: 4 + rand(8) };
    const blocks = Array.from({ length: 1 + rand(12) }, () => kinds[rand(kinds.length)]!);
    const tail = ['', 'event: message\ndata: {"z"', 'data: {"id"', 'event: mess'][rand(4)]!;
    assert.deepEqual(plan(blocks.join('') + tail, limits).blocks, runs(blocks.map((b) => [b, rawRef(b, limits)])), `round ${round}: ${JSON.stringify(blocks)}`);
  }
});
