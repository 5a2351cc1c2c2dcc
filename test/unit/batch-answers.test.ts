/**
 * response/batch-answers.ts: when a batch's SSE stream has every response it waits for
 * (test/regressions/sse-batch-answer-never-ends-cleanly.test.ts is the reported failure; this
 * is the rule itself): responses by exact id, arrays of them, duplicates, what is no response;
 * a response answering no request still awaited is `foreign`
 * (test/regressions/batch-answer-for-other-ids-forwarded.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchAnswers, idsOfAwaitedKeys } from '../../src/response/batch-answers.js';
import type { BatchRequestRef } from '../../src/exchange.js';
import type { LocalErrorForm } from '../../src/mcp/local-error.js';

const ref = (id: string | number | null, idText?: string, form: LocalErrorForm = 'rpc_error'): BatchRequestRef => ({ id, idText, form });
const ok = (id: string) => `{"jsonrpc":"2.0","id":${id},"result":{}}`;

test('done once each request has its response, by event or by array, in any order', () => {
  const a = new BatchAnswers([ref(1), ref('x'), ref(null)]);
  assert.equal(a.done, false);
  assert.equal(a.take(ok('"x"')), 'waiting');
  assert.equal(a.take(Buffer.from(`[${ok('null')},{"jsonrpc":"2.0","method":"notifications/progress"}]`)), 'waiting');
  assert.equal(a.take(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`), 'done');
  assert.equal(a.done, true);
});

test('a batch without requests is done at once, and any response answers none of it', () => {
  const a = new BatchAnswers([]);
  assert.equal(a.done, true);
  assert.equal(a.take('{"jsonrpc":"2.0","method":"notifications/progress"}'), 'done');
  assert.equal(a.take(ok('1')), 'foreign');
});

test('ids compare exactly: strings as strings, numbers by value as written; any other id is foreign', () => {
  const ids = [ref(2), ref(9007199254740992, '9007199254740993'), ref('1'), ref(0.5)];
  for (const miss of [ok('"2"'), ok('9007199254740992'), ok('1'), ok('null'), ok('0.50000000000000000001'), ok('true'), ok('{}')]) {
    assert.equal(new BatchAnswers(ids).take(miss), 'foreign', miss);
  }
  const a = new BatchAnswers(ids);
  assert.equal(a.take(`[${ok('2.0')},${ok('9007199254740993')}]`), 'waiting');
  // "\u0031" is the string "1" (escapes decoded): it answers; 5e-1 (an escaped id key) answers 0.5, the last one.
  assert.equal(a.take(ok('"\\u0031"')), 'waiting');
  assert.equal(a.take(`{"jsonrpc":"2.0","\\u0069d":5e-1,"result":{}}`), 'done');
});

test('one id twice waits for two responses; a third is a second answer: foreign', () => {
  const a = new BatchAnswers([ref(1), ref(1), ref(2)]);
  assert.equal(a.take(ok('1')), 'waiting');
  assert.equal(a.take(ok('2')), 'waiting');
  assert.equal(a.take(ok('1')), 'done');
  assert.equal(a.take(ok('1')), 'foreign');
  const b = new BatchAnswers([ref(1), ref(2)]);
  assert.equal(b.take(ok('2')), 'waiting');
  assert.equal(b.take(ok('2')), 'foreign');
  // In one array: the reported answer [r1, r2, r999, r1], and a duplicate after the batch is done.
  assert.equal(new BatchAnswers([ref(1), ref(2)]).take(`[${ok('1')},${ok('2')},${ok('999')},${ok('1')}]`), 'foreign');
  assert.equal(new BatchAnswers([ref(1), ref(2)]).take(`[${ok('1')},${ok('2')},${ok('1')}]`), 'foreign');
});

test('no response, nothing counted: not JSON, a request, a notification, a scalar', () => {
  const a = new BatchAnswers([ref(1)]);
  for (const data of [
    'not json',
    `${ok('1')}x`,
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error"}}',
    '',
  ]) assert.equal(a.take(data), 'waiting', data);
  assert.equal(a.done, false);
});

test('foreign, not a response to the batch: both result and error (whatever the id, or none), no id, an id of another type, a response nested in a result for another id', () => {
  for (const data of [
    // No id (JSON-RPC 2.0 §5: a response has one; a reviewer, 2026-12-03).
    '{"jsonrpc":"2.0","result":{}}',
    '{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}',
    `[${ok('1')},{"jsonrpc":"2.0","result":{}}]`,
    '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","id":[1],"result":{}}',
    `{"jsonrpc":"2.0","id":2,"result":${ok('1')}}`,
    `[{"jsonrpc":"2.0","method":"notifications/progress"},${ok('2')}]`,
    // An array element that is not an object is no message (a new user's trial, 2026-12-03).
    `[[${ok('1')}]]`,
    '[1,"x",null]',
    // A method beside the result, even with the awaited id: no response (a new user's trial, 2026-12-03).
    '{"jsonrpc":"2.0","id":1,"method":"x","result":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","error":{"code":1,"message":"m"}}',
  ]) assert.equal(new BatchAnswers([ref(1)]).take(data), 'foreign', data);
});

test('takeMessage: a parsed JSON body, its numbers read as written in its bytes', () => {
  const body = Buffer.from(`[${ok('9007199254740992')},${ok('2')}]`);
  assert.equal(new BatchAnswers([ref(2), ref(9007199254740992, '9007199254740993')]).takeMessage(JSON.parse(body.toString()), body), 'foreign');
  assert.equal(new BatchAnswers([ref(2), ref(9007199254740992, '9007199254740992')]).takeMessage(JSON.parse(body.toString()), body), 'done');
  assert.equal(new BatchAnswers([ref(2), ref(3)]).takeMessage(JSON.parse(ok('2')), ok('2')), 'waiting');
});

test('awaitedKeys and idsOfAwaitedKeys: a resumed stream waits for exactly what was left (sse-batch-resumed-stream-never-ends-cleanly)', () => {
  const a = new BatchAnswers([ref(2), ref(9007199254740992, '9007199254740993'), ref('a'), ref('a'), ref(null), ref(0.1, '0.10000000000000000001'), ref(-0)]);
  assert.equal(a.take(ok('"a"')), 'waiting');
  const keys = a.awaitedKeys();
  // One key per request left (an id awaited twice is listed twice), in the order first awaited.
  assert.equal(keys.length, 6);
  const ids = idsOfAwaitedKeys(keys);
  assert.ok(ids !== undefined);
  const resumed = new BatchAnswers(ids);
  assert.deepEqual(resumed.awaitedKeys(), keys);
  // The same rule as the first stream's: exact ids, one response each.
  for (const miss of [ok('9007199254740992'), ok('"2"'), ok('0.1')]) assert.equal(new BatchAnswers(ids).take(miss), 'foreign', miss);
  assert.equal(resumed.take(ok('2')), 'waiting');
  assert.equal(resumed.take(`[${ok('9007199254740993')},${ok('"a"')},${ok('null')},${ok('0.10000000000000000001')}]`), 'waiting');
  assert.equal(resumed.take(ok('0e5')), 'done');
  assert.deepEqual(resumed.awaitedKeys(), []);
  // Keys of no id the gateway makes: not ids (the resumed stream then knows none).
  for (const bad of [['x1'], ['n1.5'], ['n01e0'], ['n1e400'], ['z', '']]) assert.equal(idsOfAwaitedKeys(bad), undefined, JSON.stringify(bad));
  assert.deepEqual(idsOfAwaitedKeys([]), []);
});

test('awaitedKeys carry a number id as the host wrote it when its key does not give it back (a hostile new-user trial 13, L2)', () => {
  const written = ['1.0', '1E2', '-0', '0.1e1', '1e-400', '-1e-400', '1e+21', '1e21', '0.0000001', '1e-7', '9007199254740993', '12345678901234567891', '100', '7'];
  const refs = written.map((text) => ref(Number(text), text === JSON.stringify(Number(text)) ? undefined : text));
  const keys = new BatchAnswers(refs).awaitedKeys();
  // Only the texts the key's plain decimal does not give back are carried, after `~` (by key, in the order first awaited).
  assert.deepEqual(keys, [
    'n1e0~1.0', 'n1e0~0.1e1', 'n1e2~1E2', 'n1e2', 'n0~-0', 'n1e-400~1e-400', 'n-1e-400~-1e-400', 'n1e21~1e+21', 'n1e21~1e21', 'n1e-7', 'n1e-7~1e-7',
    'n9007199254740993e0', 'n12345678901234567891e0', 'n7e0',
  ]);
  // Given back as the peek keeps them: the text where JSON.stringify writes the value otherwise.
  const ids = idsOfAwaitedKeys(keys);
  assert.ok(ids !== undefined);
  assert.deepEqual(ids.map((r) => r.idText ?? JSON.stringify(r.id)).sort(), [...written].sort());
  assert.ok(ids.every((r) => r.idText !== JSON.stringify(r.id)));
  assert.deepEqual(new BatchAnswers(ids).awaitedKeys(), keys);
  // A text after `~` must be a JSON number of the key's value.
  for (const bad of [['n1e0~2'], ['n1e0~01'], ['n1e0~x'], ['n1e0~']]) assert.equal(idsOfAwaitedKeys(bad), undefined, JSON.stringify(bad));
});

test('unanswered: the requests the host still waits for, in the batch\'s order, those of data not delivered included (batch-local-error-answers-no-request)', () => {
  const big = ref(9007199254740992, '9007199254740993');
  const a = new BatchAnswers([ref(1), ref('a'), big, ref('a')]);
  assert.deepEqual(a.unanswered(), [ref(1), ref('a'), big, ref('a')]);
  // Taken, not yet delivered (its event may still fail its last checks): still awaited by the host.
  assert.equal(a.take(ok('"a"')), 'waiting');
  assert.deepEqual(a.unanswered(), [ref(1), ref('a'), big, ref('a')]);
  a.delivered();
  // One "a" left: listed once, where the batch first has it.
  assert.deepEqual(a.unanswered(), [ref(1), ref('a'), big]);
  // A refused event answers nothing, whatever it counted before the foreign response.
  assert.equal(a.take(`[${ok('1')},${ok('999')}]`), 'foreign');
  assert.deepEqual(a.unanswered(), [ref(1), ref('a'), big]);
  // The ids as the peek read them: the exact text of a number a double changes.
  assert.equal(a.unanswered()[2], big);
  // Every request answered and delivered: none left.
  const b = new BatchAnswers([ref(1), ref(2)]);
  assert.equal(b.take(`[${ok('2')},${ok('1')}]`), 'done');
  b.delivered();
  assert.deepEqual(b.unanswered(), []);
  assert.deepEqual(new BatchAnswers([]).unanswered(), []);
});

test('idsOfAwaitedKeys: a number\'s idText is its plain decimal text when a double changes it, else none (an error for it carries the id as hosts write it)', () => {
  assert.deepEqual(idsOfAwaitedKeys(['n9007199254740993e0', 'n1e0', 'n15e-1', 'n-123e-5', 'n1e21', 'n1e-400', '0']), undefined);
  assert.deepEqual(idsOfAwaitedKeys(['n9007199254740993e0', 'n1e0', 'n15e-1', 'n-123e-5', 'n1e21', 'n1e-400', 'n0']), [
    ref(9007199254740992, '9007199254740993'),
    ref(1),
    ref(1.5),
    ref(-0.00123),
    ref(1e21, '1000000000000000000000'),
    ref(0, `0.${'0'.repeat(399)}1`),
    ref(0),
  ]);
});

test('awaitedKeys carries each request\'s error form (R: a read-only tool\'s result, W: one that may have run, none: a JSON-RPC error), and a resumed stream gets it back (batch-error-loses-tool-warning)', () => {
  const read = ref(1, undefined, 'tool_result');
  const write = ref('b', undefined, 'tool_result_may_have_run');
  const ping = ref(3);
  const a = new BatchAnswers([read, write, ping]);
  assert.deepEqual(a.awaitedKeys(), ['Rn1e0', 'Wsb', 'n3e0']);
  const ids = idsOfAwaitedKeys(a.awaitedKeys());
  assert.deepEqual(ids, [read, write, ping]);
  assert.equal(a.take(ok('1')), 'waiting');
  assert.deepEqual(a.awaitedKeys(), ['Wsb', 'n3e0']);
  // One id twice with two forms: the first ones in the batch's order stay awaited, as unanswered() lists them.
  const twice = new BatchAnswers([ref(7, undefined, 'tool_result_may_have_run'), ref(7), ref(7, undefined, 'tool_result')]);
  assert.equal(twice.take(ok('7')), 'waiting');
  twice.delivered();
  assert.deepEqual(twice.awaitedKeys(), ['Wn7e0', 'n7e0']);
  assert.deepEqual(idsOfAwaitedKeys(twice.awaitedKeys()), twice.unanswered());
  // A token minted before forms were carried: every request a JSON-RPC error, as then.
  assert.deepEqual(idsOfAwaitedKeys(['n1e0', 'sb']), [ref(1), ref('b')]);
  // A letter before no key the gateway makes: no ids.
  for (const bad of [['R'], ['W'], ['RRn1e0'], ['Wx1'], ['Rn1.5']]) assert.equal(idsOfAwaitedKeys(bad), undefined, JSON.stringify(bad));
});

test("an event of many numeric-id responses given as a string is encoded to bytes twice (its ids' text, its repeated-names scan), not once per response (the complexity audit after trial 16: 51)", () => {
  const R = 50;
  const a = new BatchAnswers(Array.from({ length: R }, (_, i) => ref(i + 1)));
  const data = `[${Array.from({ length: R }, (_, i) => ok(String(i + 1))).join(',')}]`;
  const from = Buffer.from;
  let encodings = 0;
  Buffer.from = ((value: unknown, ...rest: unknown[]) => {
    if (value === data) encodings++;
    return (from as (...args: unknown[]) => Buffer)(value, ...rest);
  }) as typeof Buffer.from;
  try {
    assert.equal(a.take(data), 'done');
  } finally {
    Buffer.from = from;
  }
  assert.equal(encodings, 2);
});
