/**
 * The two per-event shortcuts of the SSE stage (src/response/sse-stage.ts), each of which
 * must never change an outcome:
 * - mayBeResponse: false only for data that cannot parse to a JSON-RPC response (then it is
 *   not parsed at all);
 * - withinJsonBounds: true only when checkJsonBounds would pass (then it is not run).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayBeResponse } from '../../src/response/sse-response-sniff.js';
import { withinJsonBounds } from '../../src/mcp/json-bounds.js';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';

test('mayBeResponse: progress notifications are not responses; every response is a candidate', () => {
  assert.equal(mayBeResponse('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":9}}'), false);
  assert.equal(mayBeResponse('{"jsonrpc":"2.0","id":1,"result":{}}'), true);
  assert.equal(mayBeResponse('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}'), true);
  assert.equal(mayBeResponse('{ "id" : 1 , "result" : {} }'), true);
  // Keys spelled with escapes parse to the same member: still candidates.
  assert.equal(mayBeResponse('{"jsonrpc":"2.0","id":1,"res\\u0075lt":{}}'), true);
  assert.equal(mayBeResponse('{"jsonrpc":"2.0","id":1,"\\u0065rror":{}}'), true);
  assert.equal(mayBeResponse('not json'), false);
});

test('mayBeResponse: false implies the parsed message has neither result nor error', () => {
  const samples = [
    '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"ok"}}',
    '{"a":[1,2,{"b":"resu"}],"rror":1}',
    '[{"jsonrpc":"2.0","method":"x"}]',
    '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}',
  ];
  for (const s of samples) {
    if (mayBeResponse(s)) continue;
    const m = JSON.parse(s) as Record<string, unknown>;
    assert.equal(Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'), false, s);
  }
});

test('withinJsonBounds: examples', () => {
  const limits = { maxDepth: 3, maxNodes: 20 };
  assert.equal(withinJsonBounds('{"a":[1,2]}', limits), true);
  assert.equal(withinJsonBounds('{"a":[{"b":1}]}', limits), true); // 3 brackets
  assert.equal(withinJsonBounds('{"a":[{"b":[1]}]}', limits), false); // 4 brackets: not proved
  assert.equal(withinJsonBounds('"[[[[[[["', limits), false); // brackets in strings count too
  assert.equal(withinJsonBounds('[1,2,3,4,5,6,7,8,9,10,11]', limits), false); // longer than maxNodes
});

test('withinJsonBounds true implies checkJsonBounds ok, on random JSON-like text', () => {
  const alphabet = ['{', '}', '[', ']', '"', ',', ':', '0', '1', '-', 't', 'f', 'n', 'a', ' ', '\\', 'x'];
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  let proved = 0;
  for (let i = 0; i < 20000; i++) {
    const len = rnd(24);
    let s = '';
    for (let j = 0; j < len; j++) s += alphabet[rnd(alphabet.length)];
    const limits = { maxDepth: rnd(5), maxNodes: rnd(30) };
    if (withinJsonBounds(s, limits)) {
      proved++;
      assert.equal(checkJsonBounds(s, limits).ok, true, `${JSON.stringify(s)} ${JSON.stringify(limits)}`);
    }
  }
  assert.ok(proved > 1000, `only ${proved} cases proved`);
});
