/**
 * The WebAssembly raw-event planner (src/response/sse-raw-plan.ts planRawEventsFast) gives
 * exactly the plan of the reference (src/response/sse-raw-events.ts planRawEvents, whose own
 * tests give the rules): same segment ends, same raw flags, for chunks cut at every byte,
 * planned from every event start, random mixes of blocks under random limits, chunks over
 * the planner's 64 KiB window (blocks across window edges at every offset), more segments
 * than the planner writes per call, and a block larger than a window.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRawEvents, type RawEventLimits } from '../../src/response/sse-raw-events.js';
import { planRawEventsFast } from '../../src/response/sse-raw-plan.js';

const LIMITS: RawEventLimits = { maxEventBytes: 4096, maxDepth: 8, maxNodes: 4096, answerable: true };
const progress = (n: number): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":100}}\n\n`;

/** Block kinds, raw and not (each rule of the reference's module doc), for the mixes. */
const KINDS = [
  progress(7),
  'data: {"x":[1,[2]]}\n\n',
  'event: update\ndata: {"a":\ndata: 1}\n\n',
  ': keepalive\n\n',
  'id: 5\ndata: {}\n\n',
  'id\ndata: {}\n\n',
  'data:{"y":2}\n\n',
  'data:\n\n',
  'data: \n\n',
  'event:message\ndata: {}\n\n',
  'event: \ndata: {}\n\n',
  'data: {}\nevent: message\n\n',
  'event: a\nevent: b\ndata: {}\n\n',
  'event: message\n\n',
  'event: x\n\n',
  'data: {}\n: note\n\n',
  'foo: bar\ndata: {}\n\n',
  'data: {"id":3,"result":{}}\n\n',
  'data: {"a":{"id":2}}\n\n',
  'data: {"product_id":"p1"}\n\n',
  'data: {"s":"\\\\"}\n\n',
  'data: {"jsonrpc":"2.0","ID":9,"Result":{}}\n\n',
  'data: {"RESULT":1,"eRRoR":2}\n\n',
  'data: {"m":"Erro","n":"\\u0041","r":"resul"}\n\n',
  'data: {"x":"quote \\"error"}\n\n',
  'data: {"a":"x","result"\n\n',
  'data: {"jsonrpc":"2.0","ID":1}\n\n',
  'data: {"Id":1,"xiD":2,"D":"d"}\n\n',
  'data: {"re\u017fult":{}}\n\n',
  'data: {"RE\u017fULt":1,"eRRO":2}\n\n',
  'data: {"re\u017fulx":1,"m":"re\u017fult","Re\u017f":0}\n\n',
  `data: ${'['.repeat(9)}${']'.repeat(9)}\n\n`,
  `data: {"d":${'{'.repeat(5)}${'}'.repeat(5)}}\n\n`,
  'data: "café ✓ 𝄞"\n\n',
  '\n',
  'event: messages\ndata: {"m":"ok"}\n\n',
  `data: "${'x'.repeat(120)}"\n\n`,
  // RawEventLimits.methodNamed: proved, and not (a review's kindless messages).
  'data: {"method":"notifications/progress","params":{"progress":1},"jsonrpc":"2.0"}\n\n',
  'event: x\ndata: {"method":"m"}\n\n',
  'data: {"jsonrpc":"2.0"}\n\n',
  'data: {"jsonrpc":"2.0","method":""}\n\n',
  'data: {"method":""}\n\n',
  'data: {"method":"x","METHOD":""}\n\n',
  'data: {"method":"x","params":{"mEthOd":1,"message":2}}\n\n',
  'event: "Method\ndata: {"method":"x"}\n\n',
  'data: {"jsonrpc": "2.0", "method": "x"}\n\n',
  'data: {"method":"\n\n',
  'data: {"jsonrpc":"2.0","method":"\n\n',
  'data: {"jsonrpc":"2.0","method":"x"\ndata: }\n\n',
  'data:  {"method":"x"}\n\n',
  'data: \t[1]\n\n',
  'data: \ndata: {}\n\n',
  'data: x"method\n\n',
];
const INVALID = Buffer.concat([Buffer.from('data: {"m":"'), Buffer.from([0xff]), Buffer.from('"}\n\n')]);
const TAILS = ['', 'event: message\ndata: {"z"', 'data: {"id"', 'event: mess', 'data: "é', '\n', 'event: message\n'];

function assertSame(chunk: Buffer, from: number, limits: RawEventLimits, what: string): void {
  const expected = planRawEvents(chunk, from, limits);
  const got = planRawEventsFast(chunk, from, limits);
  assert.deepEqual(got, expected, what);
}

let seed = 11;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const randomLimits = (): RawEventLimits => ({
  answerable: rand(2) === 0,
  responseKeys: rand(2) === 0,
  methodNamed: rand(2) === 0,
  maxDepth: 2 + rand(10),
  maxEventBytes: [4096, 60, 120, 150][rand(4)]!,
  maxNodes: [4096, 100, 140][rand(3)]!,
});
const randomStream = (blocks: number): Buffer =>
  Buffer.concat([
    ...Array.from({ length: blocks }, () => (rand(20) === 0 ? INVALID : Buffer.from(KINDS[rand(KINDS.length)]!))),
    Buffer.from(TAILS[rand(TAILS.length)]!),
  ]);

test('random mixes of blocks under random limits: the reference plan, from every event start', () => {
  for (let round = 0; round < 400; round++) {
    const limits = randomLimits();
    const chunk = randomStream(1 + rand(14));
    const reference = planRawEvents(chunk, 0, limits);
    assertSame(chunk, 0, limits, `round ${round}: ${JSON.stringify(chunk.toString('latin1'))}`);
    // Every later event start the reference found (a lone LF chunk start stops it there).
    for (const from of reference.ends) if (from < chunk.length) assertSame(chunk, from, limits, `round ${round} from ${from}`);
  }
});

test('a stream cut at every byte: each piece planned as a chunk of its own gives the reference plan', () => {
  const stream = Buffer.concat([Buffer.from(progress(1) + 'id: 4\ndata: {}\n\n' + 'data: "café"\n\n' + ': c\n\n' + '\n' + progress(2) + 'data: {"id":1}\n\n' + 'data: {"Result":1}\n\n' + 'data: "\\u"\n\n' + 'data: {"Re\u017fult":1}\n\n' + 'data: {"ID":2}\n\n' + 'data: {"jsonrpc":"2.0"}\n\n' + 'data: {"method":"x","Method":""}\n\n' + 'data: {"method":""}\n\n'), INVALID, Buffer.from(progress(3))]);
  for (const [answerable, responseKeys, methodNamed] of [[true, false, false], [false, false, false], [true, true, false], [false, true, false], [false, false, true], [true, true, true]] as const) {
    const limits = { ...LIMITS, answerable, responseKeys, methodNamed };
    for (let cut = 0; cut <= stream.length; cut++) {
      assertSame(stream.subarray(0, cut), 0, limits, `head ${cut}`);
      assertSame(stream.subarray(cut), 0, limits, `rest from ${cut}`);
    }
  }
});

test('chunks over one 64 KiB window: blocks across the window edge at every offset near it', () => {
  const event = progress(42); // ~130 bytes
  for (let pad = 0; pad < Buffer.byteLength(event) + 2; pad++) {
    // A first block whose size moves the window edge through the following blocks, byte by byte.
    const first = `data: "${'x'.repeat(65_300 + pad)}"\n\n`;
    const chunk = Buffer.from(first + event.repeat(8) + 'data: "é"\n\n' + event.repeat(4) + 'event: message\ndata: {');
    assertSame(chunk, 0, { ...LIMITS, maxEventBytes: 1 << 20, maxNodes: 1 << 20 }, `pad ${pad}`);
    assertSame(chunk, 0, LIMITS, `pad ${pad}, the first block over the bound`);
    assertSame(chunk, 0, { ...LIMITS, methodNamed: true, responseKeys: true }, `pad ${pad}, methodNamed`);
  }
  // Many windows of raw blocks (one raw run across them), and of blocks for the parser.
  assertSame(Buffer.from(event.repeat(2000)), 0, LIMITS, 'raw run over several windows');
  assertSame(Buffer.from('data: {"id":1}\n\n'.repeat(12_000)), 0, LIMITS, 'parser blocks over several windows');
});

test('more segments than one planner call writes, and a block larger than a window', () => {
  // Alternating raw and parser blocks: two segments per pair, ~9,000 in 40 KiB.
  assertSame(Buffer.from(('data: 1\n\n' + ': c\n\n').repeat(4600)), 0, LIMITS, 'alternating');
  assertSame(Buffer.from('\n'.repeat(9000)), 1, LIMITS, 'lone blank lines');
  // One block over 64 KiB, raw under a large bound: the reference plans the chunk.
  const big = `data: "${'y'.repeat(70_000)}"\n\n`;
  for (const limits of [LIMITS, { ...LIMITS, maxEventBytes: 1 << 20, maxNodes: 1 << 20 }]) {
    assertSame(Buffer.from(progress(1) + big + progress(2)), 0, limits, 'big block');
    assertSame(Buffer.from(big.slice(0, 68_000)), 0, limits, 'big incomplete block');
  }
});

test('invalid UTF-8 in a raw run joined across a window edge sends the whole run to the parser', () => {
  const event = progress(5);
  const head = Buffer.from(event.repeat(Math.ceil(65_536 / Buffer.byteLength(event)) - 1));
  const chunk = Buffer.concat([head, INVALID, Buffer.from(event.repeat(3))]);
  const plan = planRawEventsFast(chunk, 0, LIMITS);
  assert.deepEqual(plan.raw, [false]);
  // Noted as such a run (a stream without a total takes it one block at a time: sse-chunk-taker.ts takePlanned).
  assert.deepEqual(plan.invalidUtf8Runs, [0]);
  assertSame(chunk, 0, LIMITS, 'invalid after a window edge');
  assertSame(Buffer.concat([Buffer.from('data: "é"\n\n'), head, Buffer.from(event)]), 0, LIMITS, 'valid multi-byte text before a window edge');
});

test('a named event (any type but message) is planned as the same event unnamed: never raw when it may be a response or breaks a bound', () => {
  // A new user's trial 9, F1: the stage judged only unnamed and `message` events, so whatever
  // the planner left to the parser under another name went out unchecked. Both planners must
  // leave a named block to the parser on exactly the terms of its unnamed twin.
  const limits = { ...LIMITS, maxDepth: 4, maxNodes: 200, maxEventBytes: 4096 };
  const datas: ReadonlyArray<readonly [data: string, mayBeRaw: boolean]> = [
    ['{"jsonrpc":"2.0","id":999,"result":{"content":[]}}', false],
    ['{"jsonrpc":"2.0","result":{}}', false],
    ['{"jsonrpc":"2.0","ID":5,"Result":{}}', false],
    ['{"jsonrpc":"2.0","id":6,"error":{"code":1,"message":"m"}}', false],
    ['{"jsonrpc":"2.0","\\u0069d":7,"re\\u0073ult":{}}', false],
    [`${'['.repeat(5)}${']'.repeat(5)}`, false],
    [`[${Array(120).fill('0').join(',')}]`, false],
    ['{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}', true],
    ['plain text', true],
  ];
  for (const [data, mayBeRaw] of datas) {
    const unnamed = `data: ${data}\n\n`;
    for (const type of ['x-custom', ' message', 'progress', 'messages']) {
      const block = `event: ${type}\ndata: ${data}\n\n`;
      for (const [answerable, responseKeys] of [[true, true], [false, true]] as const) {
        const l = { ...limits, answerable, responseKeys };
        const twin = planRawEvents(Buffer.from(progress(1) + unnamed + progress(2)), 0, l);
        const chunk = Buffer.from(progress(1) + block + progress(2));
        const plan = planRawEventsFast(chunk, 0, l);
        assertSame(chunk, 0, l, `${type} ${data}`);
        const raw = plan.raw.length === 1 && plan.raw[0] === true;
        assert.equal(raw, twin.raw.length === 1 && twin.raw[0] === true, `${type} ${data}: as unnamed`);
        if (!mayBeRaw) assert.deepEqual(plan.raw, [true, false, true], `${type} ${data}: for the parser`);
      }
    }
  }
});
