/**
 * response/batch-answers.ts: when a batch's SSE stream has every response it waits for
 * (test/regressions/sse-batch-answer-never-ends-cleanly.test.ts is the reported failure; this
 * is the rule itself): responses by exact id, arrays of them, duplicates, what is no response.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchAnswers, idsOfAwaitedKeys } from '../../src/response/batch-answers.js';
import type { RpcIdRef } from '../../src/exchange.js';

const ref = (id: string | number | null, idText?: string): RpcIdRef => ({ id, idText });
const ok = (id: string) => `{"jsonrpc":"2.0","id":${id},"result":{}}`;

test('done once each request has its response, by event or by array, in any order', () => {
  const a = new BatchAnswers([ref(1), ref('x'), ref(null)]);
  assert.equal(a.done, false);
  assert.equal(a.take(ok('"x"')), false);
  assert.equal(a.take(Buffer.from(`[${ok('null')},{"jsonrpc":"2.0","method":"notifications/progress"}]`)), false);
  assert.equal(a.take(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`), true);
  assert.equal(a.done, true);
});

test('a batch without requests is done at once', () => {
  assert.equal(new BatchAnswers([]).done, true);
});

test('ids compare exactly: strings as strings, numbers by value as written', () => {
  const a = new BatchAnswers([ref(2), ref(9007199254740992, '9007199254740993'), ref('1'), ref(0.5)]);
  for (const miss of [ok('"2"'), ok('9007199254740992'), ok('1'), ok('null'), ok('0.50000000000000000001'), ok('true'), ok('{}')]) assert.equal(a.take(miss), false, miss);
  assert.equal(a.take(`[${ok('2.0')},${ok('9007199254740993')}]`), false);
  // "\u0031" is the string "1" (escapes decoded): it answers; 5e-1 (an escaped id key) answers 0.5, the last one.
  assert.equal(a.take(ok('"\\u0031"')), false);
  assert.equal(a.take(`{"jsonrpc":"2.0","\\u0069d":5e-1,"result":{}}`), true);
});

test('one id twice waits for two responses; a repeated response counts once per request', () => {
  const a = new BatchAnswers([ref(1), ref(1), ref(2)]);
  assert.equal(a.take(ok('1')), false);
  assert.equal(a.take(ok('2')), false);
  assert.equal(a.take(ok('2')), false);
  assert.equal(a.take(`[${ok('1')},${ok('1')}]`), true);
});

test('no response: not JSON, a request, both result and error, no id, nested arrays', () => {
  const a = new BatchAnswers([ref(1)]);
  for (const data of [
    'not json',
    `${ok('1')}x`,
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","result":{}}',
    `[[${ok('1')}]]`,
    `{"jsonrpc":"2.0","id":2,"result":${ok('1')}}`,
    '',
  ]) assert.equal(a.take(data), false, data);
  assert.equal(a.done, false);
});

test('awaitedKeys and idsOfAwaitedKeys: a resumed stream waits for exactly what was left (sse-batch-resumed-stream-never-ends-cleanly)', () => {
  const a = new BatchAnswers([ref(2), ref(9007199254740992, '9007199254740993'), ref('a'), ref('a'), ref(null), ref(0.1, '0.10000000000000000001'), ref(-0)]);
  assert.equal(a.take(ok('"a"')), false);
  const keys = a.awaitedKeys();
  // One key per request left (an id awaited twice is listed twice), in the order first awaited.
  assert.equal(keys.length, 6);
  const ids = idsOfAwaitedKeys(keys);
  assert.ok(ids !== undefined);
  const resumed = new BatchAnswers(ids);
  assert.deepEqual(resumed.awaitedKeys(), keys);
  // The same rule as the first stream's: exact ids, one response each.
  for (const miss of [ok('9007199254740992'), ok('"2"'), ok('0.1'), ok('2')]) resumed.take(miss);
  assert.equal(resumed.done, false);
  assert.equal(resumed.take(`[${ok('9007199254740993')},${ok('"a"')},${ok('null')},${ok('0.10000000000000000001')}]`), false);
  assert.equal(resumed.take(ok('0e5')), true);
  assert.deepEqual(resumed.awaitedKeys(), []);
  // Keys of no id the gateway makes: not ids (the resumed stream then knows none).
  for (const bad of [['x1'], ['n1.5'], ['n01e0'], ['n1e400'], ['z', '']]) assert.equal(idsOfAwaitedKeys(bad), undefined, JSON.stringify(bad));
  assert.deepEqual(idsOfAwaitedKeys([]), []);
});
