/**
 * The exact id comparison (test/regressions/response-id-compared-as-double.test.ts):
 * json-numbers.ts sameJsonNumber, mcp/written-ids.ts writtenIdRanges and json-value-at.ts
 * isRequestId, the byte fast path of which must not allocate or parse; a batch on the SSE
 * path (sse-message.ts batchResponses).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameJsonNumber } from '../../src/mcp/json-numbers.js';
import { writtenIdRanges } from '../../src/mcp/written-ids.js';
import { scanJson, type ByteRange } from '../../src/mcp/json-scan.js';
import { isRequestId } from '../../src/response/json-value-at.js';
import { rng } from '../helpers/json-fuzz.js';
import { runSseStage, TOOL_CALL } from './sse-stage-kit.js';

test('sameJsonNumber: the same mathematical value, whatever the notation; never as a double', () => {
  const equal = [
    ['1', '1.0'], ['1', '1e0'], ['1', '10E-1'], ['1', '0.1e1'], ['1', '1.000e+0'], ['0', '-0'], ['0', '0.0e99999999999999999999'],
    ['1e+21', '1000000000000000000000'], ['-1.5', '-15e-1'], ['12345678901234567890123', '1.2345678901234567890123e22'],
  ];
  const different = [
    ['9007199254740993', '9007199254740992'], ['12345678901234567890123', '1.2345678901234568e+22'], ['1', '-1'],
    ['1', '1.0000000000000000001'], ['0.1', '0.10000000000000001'], ['1e-99999999999999999999', '1e-99999999999999999998'], ['1', '"1"'],
  ];
  for (const [a, b] of equal) assert.equal(sameJsonNumber(a!, b!) && sameJsonNumber(b!, a!), true, `${a} = ${b}`);
  for (const [a, b] of different) assert.equal(sameJsonNumber(a!, b!) || sameJsonNumber(b!, a!), false, `${a} != ${b}`);
});

/** The text of each range of writtenIdRanges(text). */
const ids = (text: string): (string | undefined)[] => {
  const bytes = Buffer.from(text);
  return writtenIdRanges(bytes).map((r) => (r === undefined ? undefined : bytes.toString('utf8', r[0], r[1])));
};

test('writtenIdRanges: the id JSON.parse keeps, as written, for a message and each element of a batch', () => {
  assert.deepEqual(ids('{"jsonrpc":"2.0","id":9007199254740993,"result":{"id":1,"a":[{"id":2}]}}'), ['9007199254740993']);
  assert.deepEqual(ids('{"result":{"id":1}} '), [undefined]);
  assert.deepEqual(ids('{ "id" :\n-1.5e3 ,"x":"id"}'), ['-1.5e3']);
  assert.deepEqual(ids('{"\\u0069d":12}'), ['12']);
  assert.deepEqual(ids('{"i\\u0064":"a\\"b"}'), ['"a\\"b"']);
  assert.deepEqual(ids('{"id":1,"id":{"a":1}}'), [undefined]);
  assert.deepEqual(ids('{"id":{"id":1},"id":2}'), ['2']);
  assert.deepEqual(ids('{"id":null}'), [undefined]);
  assert.deepEqual(ids('[1,{"id":5},"x",[{"id":3}],{"a":{"id":9},"id":7} , {} ]'), [undefined, '5', undefined, undefined, '7', undefined]);
  assert.deepEqual(ids('[]'), []);
  assert.deepEqual(ids('42'), []);
});

test('writtenIdRanges = JSON.parse on random messages and batches', () => {
  const random = rng(20261205);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const ID_TEXTS = ['1', '-7', '9007199254740993', '1.5e3', '0.99999999999999999999', '"a"', '"i\\"d"', 'null', 'true', '{"id":1}', '[2]'];
  const KEYS = ['"id"', '"\\u0069d"', '"i\\u0064"', '"jsonrpc"', '"result"', '"idx"', '"d"'];
  const value = (depth: number): string => {
    const r = random();
    if (depth > 2 || r < 0.4) return pick(ID_TEXTS);
    if (r < 0.7) return `[${Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1)).join(',')}]`;
    return object(depth + 1);
  };
  const object = (depth: number): string =>
    `{${Array.from({ length: Math.floor(random() * 4) }, () => `${pick(KEYS)}${pick(['', ' '])}:${pick(['', '\n'])}${value(depth)}`).join(pick([',', ' , ']))}}`;
  for (let n = 0; n < 2000; n++) {
    const batch = random() < 0.3;
    const text = batch ? `[${Array.from({ length: 1 + Math.floor(random() * 3) }, () => (random() < 0.8 ? object(1) : value(1))).join(',')}]` : object(0);
    const parsed = JSON.parse(text) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const expected = messages.map((m) => {
      if (m === null || typeof m !== 'object' || Array.isArray(m) || !Object.hasOwn(m, 'id')) return undefined;
      const id = (m as { id: unknown }).id;
      return typeof id === 'number' || typeof id === 'string' ? id : undefined;
    });
    const found = ids(text).map((t) => (t === undefined ? undefined : (JSON.parse(t) as unknown)));
    assert.deepEqual(found, expected, text);
  }
});

/** `{"id":<written>}` and its id range as the scan reports it. */
function idIn(written: string): { bytes: Buffer; range: ByteRange } {
  const bytes = Buffer.from(`{"id":${written}}`);
  const scan = scanJson(bytes, { maxDepth: 8, maxNodes: 100 });
  assert.ok(scan.ok && scan.members?.id, written);
  return { bytes, range: scan.members.id };
}

test('isRequestId: the same JSON-RPC id exactly', () => {
  const cases: Array<[written: string, id: string | number | null, idText: string | undefined, same: boolean]> = [
    ['7', 7, undefined, true],
    ['-7', -7, undefined, true],
    ['7.0', 7, undefined, true],
    ['7e0', 7, undefined, true],
    ['70e-1', 7, undefined, true],
    ['-0', 0, undefined, true],
    ['8', 7, undefined, false],
    ['"7"', 7, undefined, false],
    ['null', 7, undefined, false],
    ['7', '7', undefined, false],
    ['"7"', '7', undefined, true],
    ['"\\u0037"', '7', undefined, true],
    ['null', null, undefined, true],
    ['0.1', 0.1, undefined, true],
    ['0.10000000000000001', 0.1, undefined, false],
    ['1.5', 1.5, undefined, true],
    ['9007199254740992', 9007199254740992, undefined, true],
    ['9007199254740993', 9007199254740992, undefined, false],
    ['9007199254740993', 9007199254740992, '9007199254740993', true],
    ['9007199254740992', 9007199254740992, '9007199254740993', false],
    ['9.007199254740993e15', 9007199254740992, '9007199254740993', true],
    ['1.2345678901234568e+22', 1.2345678901234568e22, '12345678901234567890123', false],
    ['12345678901234567890123', 1.2345678901234568e22, '12345678901234567890123', true],
    ['1', 1, '0.99999999999999999999', false],
    ['0.99999999999999999999', 1, '0.99999999999999999999', true],
    ['1e21', 1e21, undefined, true],
  ];
  for (const [written, id, idText, same] of cases) {
    const { bytes, range } = idIn(written);
    assert.equal(isRequestId(bytes, range, { id, idText }), same, `${written} vs ${JSON.stringify(id)} (${idText ?? 'no text'})`);
  }
  assert.equal(isRequestId(Buffer.from('{}'), undefined, { id: 7, idText: undefined }), false);
});

test('isRequestId: a usual id is read from the bytes, without a parse or a string', () => {
  const parse = JSON.parse;
  const toString = Buffer.prototype.toString;
  const built = idIn('123456789012345');
  const small = idIn('42');
  const text = idIn('"req-7"');
  JSON.parse = () => {
    throw new Error('parsed');
  };
  Buffer.prototype.toString = () => {
    throw new Error('decoded');
  };
  try {
    assert.equal(isRequestId(built.bytes, built.range, { id: 123456789012345, idText: undefined }), true);
    assert.equal(isRequestId(small.bytes, small.range, { id: 42, idText: undefined }), true);
    assert.equal(isRequestId(small.bytes, small.range, { id: 43, idText: undefined }), false);
    assert.equal(isRequestId(text.bytes, text.range, { id: 'req-7', idText: undefined }), true);
  } finally {
    JSON.parse = parse;
    Buffer.prototype.toString = toString;
  }
});

test('SSE: a batch answers the request only when an element carries its id exactly', async () => {
  const rpc = { ...TOOL_CALL, id: 9007199254740992, idText: '9007199254740993' };
  const event = (data: string): string => `event: message\ndata: ${data}\n\n`;
  const answer = (id: string): string => `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"for ${id}"}]}}`;
  const note = '{"jsonrpc":"2.0","method":"notifications/message","params":{}}';
  const own = event(answer('9007199254740993'));
  // A batch holding a response for the id below (the same double, another id), alone or beside
  // the response: a response to another id, never forwarded; upstream_not_mcp for the id as
  // the host wrote it (test/regressions/sse-batch-shaped-response-for-another-id-forwarded.test.ts).
  for (const batch of [`[${answer('9007199254740992')}]`, `[${answer('9007199254740992')},{"jsonrpc":"2.0","\\u0069d":9007199254740993,"result":{}}]`]) {
    const r = await runSseStage([event(batch) + own], { rpc });
    assert.equal(r.exchange.reason, 'upstream_not_mcp', batch);
    assert.ok(r.body.startsWith('event: message\ndata: {"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"{\\"adcp_error\\"'), batch);
    assert.ok(!r.body.includes('for 9007199254740992'), batch);
  }
  // A batch holding the response (its id written exactly, escaped key included) answers it on
  // MCP 2025-03-26 ("These responses MAY be batched"): the stream ends there. (On 2025-06-18
  // and later an array is no answer: sse-array-holding-own-response-on-revision-without-batches.)
  const batch = event(`[${note},{"jsonrpc":"2.0","\\u0069d":9007199254740993,"result":{}}]`);
  const b = await runSseStage([batch + own], { rpc, protocolVersion: '2025-03-26' });
  assert.equal(b.body, batch);
  assert.equal(b.exchange.outcome, 'ok');
});
