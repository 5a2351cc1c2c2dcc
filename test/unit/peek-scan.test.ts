/**
 * The request peek's two readings (src/request/peek.ts): the scan (the structure scan's member
 * table, the usual reading) gives exactly what the parse (`JSON.parse` of the whole body, the
 * reference) gives, for every body: each outcome and edge by hand, then seeded random
 * JSON-RPC bodies and byte mutations of them. Also that the scan reading is the one taken
 * where it can decide (else a regression to the parse would pass unnoticed), and the exact
 * refusals of the one rule for a message and a batch element (`params` a Structured value, a
 * host's response with exactly one of `result` and a well-formed `error`, no `initialize` in a
 * batch: test/regressions/params-not-structured-forwarded.test.ts,
 * host-response-result-and-error-forwarded.test.ts, batch-initialize-forwarded.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { MAX_TASK_ID_CHARS, NO_BODY, peekByParse, peekByScan, peekJsonRpc } from '../../src/request/peek.js';
import { JsonScanner, scanJson, scanTopMembers } from '../../src/mcp/json-scan.js';
import { rng } from '../helpers/json-fuzz.js';
import { MAX_MESSAGE_MEMBERS } from '../../src/request/message-members.js';

const BOUNDS = { maxDepth: 64, maxNodes: 100_000 };

/** peekJsonRpc's refusal of a body that is not well-formed UTF-8 (a hostile new-user trial 14, L2). */
const NOT_UTF8 = {
  ok: false,
  kind: 'parse_error',
  message: 'Parse error: the request body is not well-formed UTF-8, which JSON exchanged between systems must be (RFC 8259 §8.1); send it as UTF-8.',
  id: null,
  idText: undefined,
};

/**
 * The scan reading, when it decides, equals the parse reading; so does peekJsonRpc, which
 * refuses a body that is not well-formed UTF-8 before either reading. Returns whether the scan decided.
 */
function same(body: Buffer | string, bounds: { maxDepth: number; maxNodes: number } | undefined = BOUNDS, label?: string): boolean {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const reference = peekByParse(bytes, bounds);
  const byScan = peekByScan(bytes, bounds);
  const name = label ?? bytes.toString('latin1').slice(0, 200);
  if (byScan !== undefined) assert.deepEqual(byScan, reference, name);
  assert.deepEqual(peekJsonRpc(bytes, bounds), isUtf8(bytes) ? reference : NOT_UTF8, name);
  return byScan !== undefined;
}

const HAND: string[] = [
  // requests, notifications, responses
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"CTV"}}}',
  '{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":7,"result":{}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}',
  '{"jsonrpc":"2.0","id":7}',
  '  \n\t{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" }\r\n',
  // batches and non-objects
  '[]',
  ' [ ] ',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
  '[1]',
  // batch elements (each judged as a single message; the first bad one is named)
  '[1,{"jsonrpc":"2.0","id":1,"method":"ping"}]',
  '[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"a":1}]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"} , {"jsonrpc":"2.0","id":{},"method":"ping"}]',
  '[{"jsonrpc":"2.0","id":7}]',
  '[{"jsonrpc":"2.0","id":true,"result":1}]',
  '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"r","error":{"code":1,"message":"m"}}]',
  '[null]',
  '["x"]',
  '[true]',
  '[false]',
  '[-1.5e3]',
  '[{}]',
  '[[]]',
  '[{"jsonrpc":"2.0","id":"a\\"],[{","method":"p"}, "\\\\", 5]',
  ' [ {"jsonrpc":"2.0","id":1,"method":"ping"} ,\n{"jsonrpc":"2.0","id":2,"method":"ping"} ] ',
  '[{"jsonrpc":"2.0","id":1e400,"method":"ping"}]',
  '[{"jsonrpc":"2\\u002e0","id":1,"method":"ping"}]',
  '[{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"ping"}]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}]',
  'null',
  '1',
  '"x"',
  'true',
  // not JSON
  '',
  '{',
  '{"jsonrpc":"2.0","id":1,"method":"ping"',
  '{"jsonrpc":"2.0","id":1,"method":"ping"}x',
  "{'jsonrpc':'2.0'}",
  '{"a":1,}',
  '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}',
  // jsonrpc
  '{"jsonrpc":"1.0","id":1,"method":"ping"}',
  '{"jsonrpc":2.0,"id":1,"method":"ping"}',
  '{"id":1,"method":"ping"}',
  '{"jsonrpc":"2\\u002e0","id":1,"method":"ping"}',
  '{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0 ","id":1,"method":"ping"}',
  // method
  '{"jsonrpc":"2.0","id":1,"method":1}',
  '{"jsonrpc":"2.0","id":1,"method":null,"result":1}',
  '{"jsonrpc":"2.0","id":1,"method":"a","method":"tools/call","params":{"name":"t"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools\\/call","params":{"name":"t"}}',
  '{"jsonrpc":"2.0","id":1,"method":"\\u0074ools/call","params":{"name":"t"}}',
  '{"jsonrpc":"2.0","id":1,"method":"méthode/ünïcode"}',
  '{"jsonrpc":"2.0","id":1,"method":"emoji/😀"}',
  '{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
  // a tasks/result's params.taskId (RpcPeek.taskId)
  '{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"t-1"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"task\\u0049d":"t-1","taskId":"t-2"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"\\ud800"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":7}}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":["t-1"]}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/\\u0072esult","params":{"taskId":"t-1"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-1"}}',
  // id
  '{"jsonrpc":"2.0","id":null,"method":"ping"}',
  '{"jsonrpc":"2.0","id":-0,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1.5e3,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
  '{"jsonrpc":"2.0","id":-1e400,"method":"ping"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
  '{"jsonrpc":"2.0","id":-12345678901234567890.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":0.1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":{},"method":"ping"}',
  '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
  '{"jsonrpc":"2.0","id":true,"method":"ping"}',
  '{"jsonrpc":"2.0","id":false,"method":"ping"}',
  '{"jsonrpc":"2.0","id":true,"result":1}',
  '{"jsonrpc":"1.0","id":true,"method":"ping"}',
  '{"jsonrpc":"2.0","id":"a\\"b\\\\c\\n","method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"id":"two","method":"ping"}',
  '{"jsonrpc":"2.0","id":{},"id":3,"method":"ping"}',
  '{"jsonrpc":"2.0","\\u0069d":9007199254740993,"method":"ping"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"id":9007199254740995,"method":"ping"}',
  // params and the tool name
  '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["name"]}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\\u0062"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\\u0061me":"hidden"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"inner"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"p"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"ignored"}}',
  '{"jsonrpc":"2.0","id":1,"params":{"name":"before"},"method":"tools/call"}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":[]}',
  // strings over 64 bytes (another search for escapes), with and without one
  `{"jsonrpc":"2.0","id":"${'L'.repeat(70)}\\u0000","method":"${'m'.repeat(80)}\\n"}`,
  `{"jsonrpc":"2.0","id":"${'L'.repeat(70)}","method":"tools/call","params":{"name":"${'n'.repeat(90)}\\"q"}}`,
  `{"jsonrpc":"2.0","id":"${'L'.repeat(70)}","method":"tools/call","params":{"name":"${'n'.repeat(90)}"}}`,
  // other keys, escapes in other keys
  '{"jsonrpc":"2.0","id":1,"method":"ping","x\\u0079z":1}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","names":"n","ids":2,"nam":3}',
  '{"res\\u0075lt":1,"jsonrpc":"2.0","id":1}',
  // params: absent, an object or an array (JSON-RPC 2.0 §4.2), for a request or a notification
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":5}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":true}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":false}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":null}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":-1e400}',
  '{"jsonrpc":"2.0","method":"notifications/x","params":5}',
  '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":5}',
  '{"jsonrpc":"2.0","id":"s","method":"ping","params":[1]}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"params":5}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":5,"params":[]}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","p\\u0061rams":5}',
  '{"jsonrpc":"2.0","id":{},"method":"ping","params":5}',
  '{"jsonrpc":"1.0","id":1,"method":"ping","params":5}',
  '{"jsonrpc":"2.0","id":1,"result":1,"params":5}',
  // a host's response: exactly one of result and error (§5), error an error object (§5.1)
  '{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":-1,"message":"no"}}',
  '{"jsonrpc":"2.0","id":7,"result":null,"error":null}',
  '{"jsonrpc":"2.0","id":7,"result":null}',
  '{"jsonrpc":"2.0","id":7,"error":"x"}',
  '{"jsonrpc":"2.0","id":7,"error":null}',
  '{"jsonrpc":"2.0","id":7,"error":5}',
  '{"jsonrpc":"2.0","id":7,"error":[]}',
  '{"jsonrpc":"2.0","id":7,"error":[{"code":1,"message":"m"}]}',
  '{"jsonrpc":"2.0","id":7,"error":{}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1}}',
  '{"jsonrpc":"2.0","id":7,"error":{"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1.0,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1e2,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1E-2,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":-0,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1e400,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":-1e400,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1e-400,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":12345678901234567890.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":4503599627370495.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":"1","message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":true,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":null,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":[1],"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":5}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":null}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":{}}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":""}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m","data":[1]}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m","code":"x"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":"x","message":"m","code":2}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m","message":false}}',
  '{"jsonrpc":"2.0","id":7,"error":{"c\\u006fde":1,"m\\u0065ssage":"m"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"a\\"b\\u0000"}}',
  '{"jsonrpc":"2.0","id":7,"error":{"__proto__":{"code":1,"message":"m"}}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"},"error":"x"}',
  '{"jsonrpc":"2.0","id":7,"error":"x","error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"\\u0065rror":"x"}',
  '{"jsonrpc":"2.0","id":7,"r\\u0065sult":1,"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":7,"method":"ping","result":1,"error":"x"}',
  '{"jsonrpc":"2.0","id":7,"method":null,"error":"x"}',
  '{"jsonrpc":"2.0","id":7,"method":5,"result":1,"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"1.0","id":7,"result":{}}',
  '{"jsonrpc":"2.0","id":true,"error":"x"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"error":"x"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"result":1,"error":1}',
  '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}',
  // initialize: alone a request like any other, never in a batch (MCP 2025-03-26, Lifecycle)
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}',
  '[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}]',
  '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":0,"method":"initialize"}]',
  '[{"jsonrpc":"2.0","method":"initialize"}]',
  '[{"jsonrpc":"2.0","id":0,"method":"initiali\\u007ae"}]',
  '[{"jsonrpc":"2.0","id":0,"method":"initialize","method":"ping"}]',
  '[{"jsonrpc":"2.0","id":0,"method":"ping","method":"initialize"}]',
  '[{"jsonrpc":"2.0","id":0,"method":"initialize","params":5}]',
  '[{"jsonrpc":"2.0","id":0,"method":"initialize"},1]',
  '[1,{"jsonrpc":"2.0","id":0,"method":"initialize"}]',
  '[{"jsonrpc":"2.0","id":0,"method":"Initialize"},{"jsonrpc":"2.0","id":1,"method":"initialize "}]',
  '[{"jsonrpc":"1.0","id":0,"method":"initialize"}]',
  // batch elements by the same rules
  '[{"jsonrpc":"2.0","id":0,"method":"notifications/initialized","params":"x"}]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping","params":[]},{"jsonrpc":"2.0","id":2,"method":"ping","params":null}]',
  '[{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}]',
  '[{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}},{"jsonrpc":"2.0","id":8,"error":{"code":1.5,"message":"m"}}]',
  '[{"jsonrpc":"2.0","id":7,"error":"x"},{"jsonrpc":"2.0","id":0,"method":"initialize"}]',
  // A member the gateway acts on written twice or as a case variant (Go's case folding): refused
  // (a hostile new-user trial 11, F1: test/regressions/host-repeated-member-names-bypass-tool-limit.test.ts)
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_report","name":"ping_tool","arguments":{}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"get_report","arguments":{}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping_tool","Name":"get_report","arguments":{}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"get_report"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","\\u006eame":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"\\u006eame":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\\u0041me":"b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"nam\\u0065":"a","NAM\\u0045":"b"}}',
  '{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}',
  '{"jsonrpc":"2.0","Id":2,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":9007199254740993,"id":9007199254740993,"method":"ping"}',
  '{"jsonrpc":"2.0","JSONRPC":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"Params":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"x"},"params":{"name":"y"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","\\u004eame":"y"}}',
  '{"jsonrpc":"2.0","id":7,"result":{},"Result":{}}',
  '{"jsonrpc":"2.0","id":7,"reſult":{}}',
  '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"},"ERROR":1}',
  '{"jsonrpc":"2.0","id":7,"id":8,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","method":"y","method":"z"}',
  '{"jsonrpc":"2.0","id":1,"Method":"x","method":"y","jsonrpc":"2.0","iD":3}',
  '{"jsonrpc":"2.0","id":{},"method":"ping","method":"x"}',
  '{"jsonrpc":"1.0","id":1,"method":"ping","METHOD":"x"}',
  '{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools/call" , "params" : { "name" : "a" , "name" : "b" } }',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"n":1},"Name":"b"},"x":[{"name":1}]}',
  // ... and what passes: other names, repeats inside arguments, a params.name not of a tools/call, look-alikes
  '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"a","name":"b","Name":"c"}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"name":"a","name":"b","Name":"c","id":1,"id":2,"method":"m"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"arguments":{"a":1},"_meta":{},"_meta":{}}}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2,"ids":3,"Ids":4,"names":5}',
  '{"jsonrpc":"2.0","id":"paid","method":"tools/call","params":{"name":"name\\"","arguments":{"s":"method\\":1,\\"id\\":2"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"q":"\\u0041"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","nameſ":1,"ıd":2}}',
  // batch elements: the first refused element named, whichever the rule
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","NAME":"b"}}]',
  '[{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}]',
  '[1,{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping","Method":"x"},{"jsonrpc":"2.0","id":0,"method":"initialize"}]',
  '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"name":"x"}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","params":{"name":1,"name":2}},{"jsonrpc":"2.0","id":3,"result":{},"result":{}}]',
];

test('every hand-written body: the scan reading equals the parse reading', () => {
  for (const body of HAND) {
    same(body);
    same(body, undefined);
    same(body, { maxDepth: 1, maxNodes: 5 });
  }
});

test('bodies at and over the bounds', () => {
  const deep = (n: number) => `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${'['.repeat(n)}${']'.repeat(n)}}}`;
  for (const n of [60, 61, 62, 63, 64, 100]) same(deep(n), BOUNDS, `depth ${n}`);
  const wide = (n: number) => `{"jsonrpc":"2.0","id":1,"method":"x","params":[${Array.from({ length: n }, () => '0').join(',')}]}`;
  for (const n of [10, 95, 96, 97, 200]) {
    same(wide(n), { maxDepth: 64, maxNodes: 100 }, `width ${n}`);
    same(wide(n), { maxDepth: 64, maxNodes: 100_000 }, `width ${n}`);
  }
  // Invalid and over a bound: the bound is reported (it is checked first).
  same('{"jsonrpc":"2.0",' + '['.repeat(100), BOUNDS);
  // Brackets inside strings count for the proof but not for the bound.
  same(`{"jsonrpc":"2.0","id":1,"method":"${'['.repeat(100)}"}`, BOUNDS);
});

test('more members than the scan records: the scan reading walks them, deciding as the parse does', () => {
  const many = (n: number, at: number) => {
    const members = Array.from({ length: n }, (_, k) => `"k${k}":${k}`);
    members.splice(at, 0, '"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}');
    return `{${members.join(',')}}`;
  };
  for (const n of [60, 61, 62, 63, 64, 65, 200]) for (const at of [0, n]) assert.ok(same(many(n, at)));
  const manyParams = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{${Array.from({ length: 100 }, (_, k) => `"a${k}":1`).join(',')},"name":"last"}}`;
  same(manyParams);
  assert.deepEqual(peekJsonRpc(Buffer.from(manyParams), BOUNDS), { ok: true, peek: { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'last', taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } });
  // A host's response whose error has more members than the scan records: walked too.
  const manyError = (code: string, message: string) =>
    `{"jsonrpc":"2.0","id":7,"error":{${Array.from({ length: 100 }, (_, k) => `"d${k}":${k}`).join(',')},"code":${code},"message":${message}}}`;
  for (const [code, message, ok] of [
    ['1', '"m"', true],
    ['1.5', '"m"', false],
    ['1', '5', false],
  ] as const) {
    const body = manyError(code, message);
    assert.ok(same(body));
    assert.equal(peekJsonRpc(Buffer.from(body), BOUNDS).ok, ok, body.slice(-40));
    // ...and as a large batch element, after a small one.
    same(`[{"jsonrpc":"2.0","method":"n"},${body}]`);
    same(`[${body},{"jsonrpc":"2.0","id":0,"method":"initialize"}]`);
  }
});

test(`an envelope object of more than ${MAX_MESSAGE_MEMBERS} members: refused by both readings, the scan's without JSON.parse`, () => {
  const fill = (n: number, key = (k: number) => `k${k}`) => Array.from({ length: n }, (_, k) => `"${key(k)}":0`).join(',');
  const refused = (body: string, message: string, id: string | number | null) => {
    assert.ok(same(body), 'decided by the scan');
    assert.deepEqual(peekJsonRpc(Buffer.from(body), BOUNDS), { ok: false, kind: 'invalid_request', message: `Invalid Request: ${message}.`, id, idText: undefined });
  };
  const most = MAX_MESSAGE_MEMBERS;
  // The message object: 3 members besides the fill.
  assert.equal(peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most - 3)}}`), BOUNDS).ok, true);
  assert.ok(same(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most - 3)}}`));
  refused(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most - 2)}}`, `the message has ${most + 1} members, more than the ${most} the gateway reads`, 1);
  // The id is read wherever it is written; written twice (here as a case variant), id null.
  refused(`{"jsonrpc":"2.0","method":"ping",${fill(most)},"id":"late"}`, `the message has ${most + 3} members, more than the ${most} the gateway reads`, 'late');
  refused(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most)},"ID":2}`, `the message has ${most + 4} members, more than the ${most} the gateway reads`, null);
  refused(`{"jsonrpc":"2.0","\\u0069d":3,"method":"ping",${fill(most)}}`, `the message has ${most + 3} members, more than the ${most} the gateway reads`, 3);
  // More than the bound of keys that may be names: refused, its id not read.
  refused(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most + 1, () => 'Id')}}`, `the message has ${most + 4} members, more than the ${most} the gateway reads`, null);
  refused(`{"id":1,"method":"ping",${fill(most + 1, () => 'jsonrpc')}}`, `the message has ${most + 3} members, more than the ${most} the gateway reads`, null);
  refused(`{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most + 1, (k) => `x${k}`.slice(0, 2))}}`, `the message has ${most + 4} members, more than the ${most} the gateway reads`, 1);
  // The params of a tools/call or a tasks/result, a response's error, a batch element.
  assert.equal(peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",${fill(most - 1)}}}`), BOUNDS).ok, true);
  refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",${fill(most)},"nAme":"x"}}`, `"params" has ${most + 2} members, more than the ${most} the gateway reads`, 1);
  refused(`{"jsonrpc":"2.0","id":"t","method":"tasks/result","params":{"taskId":"a",${fill(most)}}}`, `"params" has ${most + 1} members, more than the ${most} the gateway reads`, 't');
  refused(`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m",${fill(most)}}}`, `"error" has ${most + 2} members, more than the ${most} the gateway reads`, null);
  refused(
    `[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"method":"ping",${fill(most)}}]`,
    `batch element 1 is not a JSON-RPC message (the message has ${most + 3} members, more than the ${most} the gateway reads)`,
    null,
  );
  // Other methods' params, arguments and _meta are not read: not bounded here.
  for (const body of [
    `{"jsonrpc":"2.0","id":1,"method":"x/bulk","params":{${fill(most + 5)}}}`,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{${fill(most + 5)}},"_meta":{${fill(most + 5)}}}}`,
  ]) {
    assert.ok(same(body));
    assert.equal(peekJsonRpc(Buffer.from(body), BOUNDS).ok, true);
  }
});

// The readings still agree on such bodies; peekJsonRpc refuses them first (same()).
test('malformed UTF-8 in strings: the same U+FFFD as the parse', () => {
  const prefix = Buffer.from('{"jsonrpc":"2.0","id":"');
  const mid = Buffer.from('","method":"tools/call","params":{"name":"');
  const end = Buffer.from('"}}');
  for (const bad of [[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
    same(Buffer.concat([prefix, Buffer.from(bad), mid, Buffer.from('t'), end]));
    same(Buffer.concat([prefix, Buffer.from('i'), mid, Buffer.from(bad), end]));
  }
});

test('the scan reading decides every valid body within the bounds and its member table', () => {
  const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products"}}');
  const scan = scanTopMembers(body, BOUNDS);
  assert.ok(scan);
  assert.deepEqual(
    scan.members.map((m) => body.toString('latin1', m.key[0], m.key[1])),
    ['"jsonrpc"', '"id"', '"method"', '"params"'],
  );
  assert.deepEqual(peekByScan(body, BOUNDS), { ok: true, peek: { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'get_products', taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } });
  // Each hand-written body the parse accepts (escaped keys included): decided by the scan.
  for (const text of HAND) {
    const bytes = Buffer.from(text);
    const parsed = (() => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined;
      }
    })();
    if (parsed !== undefined) assert.notEqual(peekByScan(bytes, BOUNDS), undefined, text);
  }
  assert.deepEqual(peekByScan(Buffer.from('{"jsonrpc":"2.0","\\u0069d":"x","m\\u0065thod":"ping"}'), BOUNDS), {
    ok: true,
    peek: { kind: 'request', id: 'x', idText: undefined, method: 'ping', toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined },
  });
  // Not JSON: refused by the scan as the parse refuses it, without a parse (a re-read of trial 54's fix).
  assert.deepEqual(peekByScan(Buffer.from('{"jsonrpc":"2.0",'), BOUNDS), peekByParse(Buffer.from('{"jsonrpc":"2.0",'), BOUNDS));
  assert.deepEqual(peekByScan(Buffer.from('{"jsonrpc":"2.0",'), BOUNDS), { ok: false, kind: 'parse_error', message: 'Parse error: the request body is not valid JSON.', id: null, idText: undefined });
  // Over a bound: refused by the scan as the parse reading refuses it (the same path,
  // overBoundRefusal), the id read, no second decoding and check of the body by the parse
  // reading (a re-read after trial 54; before, left to it: undefined here).
  for (const [text, bounds, message] of [
    ['{"jsonrpc":"2.0","id":1,"method":"ping","p":[[[]]]}', { maxDepth: 2, maxNodes: 100 }, 'Invalid Request: the request body is over max_json_depth (2).'],
    ['{"jsonrpc":"2.0","id":"a","method":"ping","p":[1,2,3]}', { maxDepth: 64, maxNodes: 4 }, 'Invalid Request: the request body is over max_json_nodes (4).'],
    ['{"jsonrpc":"2.0","id":2,"method":"ping","p":[[[]]]', { maxDepth: 2, maxNodes: 100 }, 'Invalid Request: the request body is over max_json_depth (2).'],
  ] as const) {
    const body = Buffer.from(text);
    const id = text.includes('"a"') ? 'a' : Number(text.slice(text.indexOf('"id":') + 5, text.indexOf(',"method"')));
    const expected = { ok: false, kind: 'invalid_request', message, id: text.endsWith('}') ? id : null, idText: undefined };
    assert.deepEqual(peekByScan(body, bounds), expected, text);
    assert.deepEqual(peekByParse(body, bounds), expected, text);
  }
  // More members than the scan's table records: read by the walk (message-members.ts), decided.
  const wide = `{${Array.from({ length: 65 }, (_, k) => `"k${k}":${k}`).join(',')}}`;
  assert.notEqual(peekByScan(Buffer.from(wide), BOUNDS), undefined);
});

test('a response scan cut mid-body by a peek ends as if scanned alone', () => {
  // The peek's scan shares the WebAssembly core with the response scanners (json-scan.ts
  // releaseCore): a response whose chunks are being scanned must not see the peek.
  const response = Buffer.from(
    JSON.stringify({ jsonrpc: '2.0', id: 3, result: { structuredContent: { products: [{ id: 'p', deep: [[[[1, 'x', { a: null }]]]] }] }, content: [{ type: 'text', text: '{"a":1}' }] } }),
  );
  const request = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":"${'y'.repeat(600)}"}}}`);
  const limits = { maxDepth: 64, maxNodes: 100_000 };
  const alone = scanJson(response, limits);
  for (let cut = 1; cut < response.length; cut += 7) {
    const scanner = new JsonScanner(limits);
    scanner.feed(response.subarray(0, cut));
    assert.notEqual(peekByScan(request, BOUNDS), undefined);
    scanner.feed(response.subarray(cut));
    assert.deepEqual(scanner.end(), alone, `cut at ${cut}`);
  }
});

// ---------------------------------------------------------------------------------------
// Random JSON-RPC bodies and byte mutations of them

const KEYS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error', 'name', 'x', '\\u0069d', 'meth\\u006fd', 'na\\u006de', 'code', 'message'];
const STRINGS = ['2.0', '1.0', 'tools/call', 'tools/list', 'ping', '', 'get_products', 'a\\"b', '\\u0032.0', 'tools\\/call', 'é', '😀', 'initialize', 'initiali\\u007ae'];
/** Error codes: integers, integers written otherwise, fractions, too large, not numbers. */
const CODES = ['-32000', '1', '0', '-0', '1.5', '1.0', '1e2', '1E-2', '1e400', '-32600.5', '12345678901234567890', '4503599627370495.5', '"1"', 'null', 'true', '[]'];

function value(r: () => number, depth: number): string {
  const k = Math.floor(r() * 10);
  if (depth > 3 || k < 3) return `"${STRINGS[Math.floor(r() * STRINGS.length)]!}"`;
  if (k === 3) return ['0', '-1', '1.5', '9007199254740993', '1e400', '-0', '12e-3'][Math.floor(r() * 7)]!;
  if (k === 4) return ['true', 'false', 'null'][Math.floor(r() * 3)]!;
  if (k === 5) return `[${Array.from({ length: Math.floor(r() * 3) }, () => value(r, depth + 1)).join(',')}]`;
  return object(r, depth + 1);
}

function object(r: () => number, depth: number): string {
  const n = Math.floor(r() * 6);
  const members: string[] = [];
  for (let i = 0; i < n; i++) members.push(`"${KEYS[Math.floor(r() * KEYS.length)]!}":${value(r, depth)}`);
  return `{${members.join(r() < 0.2 ? ' , ' : ',')}}`;
}

/** An `error` member's value: mostly an object with a `code` and a `message`, right or wrong. */
function errorValue(r: () => number): string {
  if (r() < 0.15) return value(r, 2);
  const members: string[] = [];
  if (r() < 0.85) members.push(`"${r() < 0.1 ? 'c\\u006fde' : 'code'}":${CODES[Math.floor(r() * CODES.length)]!}`);
  if (r() < 0.85) members.push(`"${r() < 0.1 ? 'm\\u0065ssage' : 'message'}":${r() < 0.8 ? `"${STRINGS[Math.floor(r() * STRINGS.length)]!}"` : value(r, 3)}`);
  if (r() < 0.3) members.push(`"data":${value(r, 2)}`);
  if (r() < 0.1) members.push(`"${r() < 0.5 ? 'code' : 'message'}":${r() < 0.5 ? CODES[Math.floor(r() * CODES.length)]! : value(r, 3)}`);
  for (let i = members.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [members[i], members[j]] = [members[j]!, members[i]!];
  }
  return `{${members.join(',')}}`;
}

function message(r: () => number): string {
  const parts: string[] = [];
  if (r() < 0.9) parts.push(`"jsonrpc":${r() < 0.85 ? '"2.0"' : value(r, 2)}`);
  if (r() < 0.8) parts.push(`"id":${value(r, 3)}`);
  if (r() < 0.25) {
    // A host's response (a method now and then): a result, an error, both or neither.
    if (r() < 0.1) parts.push(`"method":${value(r, 3)}`);
    if (r() < 0.6) parts.push(`"result":${value(r, 2)}`);
    if (r() < 0.6) parts.push(`"error":${errorValue(r)}`);
  } else {
    const k = r();
    if (k < 0.85) parts.push(`"method":${k < 0.45 ? '"tools/call"' : k < 0.5 ? '"tasks/result"' : k < 0.6 ? '"initialize"' : value(r, 3)}`);
    // params: an object, an array or (value) any JSON value, scalars included.
    const p = r();
    if (p < 0.8) parts.push(`"params":${p < 0.5 ? `{"name":${value(r, 3)},"taskId":${value(r, 3)},"arguments":${object(r, 1)}}` : p < 0.6 ? `[${value(r, 2)}]` : value(r, 1)}`);
  }
  if (r() < 0.3) parts.push(`"${KEYS[Math.floor(r() * KEYS.length)]!}":${value(r, 1)}`);
  for (let i = parts.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  const body = `{${parts.join(',')}}`;
  return r() < 0.1 ? `[${body}]` : body;
}

test('random JSON-RPC bodies: the scan reading equals the parse reading', () => {
  const r = rng(0x5ca11);
  let decided = 0;
  const n = 4000;
  // Each outcome of the one rule is met (else the generator has drifted).
  const outcomes = { params: 0, both: 0, error: 0, response: 0, request: 0, initializeInBatch: 0 };
  for (let i = 0; i < n; i++) {
    const body = message(r);
    if (same(body, BOUNDS, `#${i} ${body}`)) decided++;
    if (i % 10 === 0) same(body, { maxDepth: 3, maxNodes: 12 }, `#${i} tight ${body}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    if (result.ok) {
      if (result.peek.kind !== 'batch') outcomes[result.peek.method === undefined ? 'response' : 'request']++;
    }
    else if (result.message.includes('"params"')) outcomes.params++;
    else if (result.message.includes('not both')) outcomes.both++;
    else if (result.message.includes('"error" must')) outcomes.error++;
    else if (result.message.includes('"initialize"')) outcomes.initializeInBatch++;
  }
  // Most of them without the parse (the rest have an escaped key somewhere at the top).
  assert.ok(decided > n / 2, `the scan decided ${decided} of ${n}`);
  assert.ok(Object.values(outcomes).every((c) => c >= 10), JSON.stringify(outcomes));
});

test('random byte mutations of those bodies: the same answer, invalid ones included', () => {
  const r = rng(0xb17e5);
  const bytesOf = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x20, 0x30, 0x65, 0x2d, 0x75, 0x00, 0xff, 0xc3];
  for (let i = 0; i < 4000; i++) {
    const body = Buffer.from(message(r));
    const mutated = Buffer.from(body);
    for (let m = 1 + Math.floor(r() * 3); m > 0; m--) {
      const at = Math.floor(r() * mutated.length);
      if (r() < 0.7) mutated[at] = bytesOf[Math.floor(r() * bytesOf.length)]!;
      else mutated[at] = Math.floor(r() * 256);
    }
    const cut = r() < 0.2 ? mutated.subarray(0, Math.floor(r() * mutated.length)) : mutated;
    same(cut, BOUNDS, `#${i} ${cut.toString('latin1')}`);
  }
});

// ---------------------------------------------------------------------------------------
// The one rule for a message: params, a host's response, initialize in a batch

/** Why an id outside the double range is refused (request/peek.ts ID_RANGE_PROBLEM). */
const ID_RANGE = '"id" is a number outside the range of a double, which reads it as infinite; use a smaller number or a string';

test('params, a host response and initialize: the exact refusals, single and in a batch, in both readings', () => {
  const refused = (message: string, id: string | number | null = null, idText?: string) => ({ ok: false, kind: 'invalid_request', message, id, idText });
  // The one accepted batch below: its requests are ids 1 and 2 (the response, id 7, is none).
  const batch = {
    ok: true,
    peek: {
      kind: 'batch',
      id: null,
      idText: undefined,
      method: undefined,
      toolName: undefined,
      taskId: undefined,
      batchRequestIds: [{ id: 1, idText: undefined, form: 'tool_result_may_have_run' }, { id: 2, idText: undefined, form: 'rpc_error' }],
      // One per request: the call's tool, the ping's none (the response takes no part).
      batchToolNames: ['t', undefined],
      // Three messages: the call, the response, the ping.
      batchMessages: 3,
    },
  };
  const PARAMS = 'Invalid Request: "params" must be an object or an array.';
  const BOTH = 'a response must carry "result" or "error", not both';
  const ERROR = '"error" must be an object with an integer "code" and a string "message"';
  const INIT = (i: number) => `Invalid Request: batch element ${i} is an "initialize" request, which must not be part of a JSON-RPC batch.`;
  const element = (i: number, problem: string) => `Invalid Request: batch element ${i} is not a JSON-RPC message (${problem}).`;
  /** Over 1 KiB: a member that makes the body (or the element) large, read by the scan. */
  const pad = `"pad":"${'p'.repeat(1100)}"`;
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}';
  for (const [body, expected] of [
    ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', refused(PARAMS, 5)],
    [`{"jsonrpc":"2.0","id":"a",${pad},"method":"ping","params":5}`, refused(PARAMS, 'a')],
    ['{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":null}', refused(PARAMS, 9007199254740992, '9007199254740993')],
    [`{"jsonrpc":"2.0","id":9007199254740993,${pad},"method":"ping","params":true}`, refused(PARAMS, 9007199254740992, '9007199254740993')],
    ['{"jsonrpc":"2.0","method":"notifications/initialized","params":5}', refused(PARAMS)],
    // The id is judged before params.
    ['{"jsonrpc":"2.0","id":[],"method":"ping","params":5}', refused('Invalid Request: "id" must be a string, a number or null.')],
    // A number outside the double range is a number: refused saying so (a hostile new-user trial 13, L2).
    ['{"jsonrpc":"2.0","id":1e400,"method":"ping"}', refused(`Invalid Request: ${ID_RANGE}.`)],
    [`{"jsonrpc":"2.0","id":-1e400,${pad},"method":"ping"}`, refused(`Invalid Request: ${ID_RANGE}.`)],
    // A host's response: refused with id null.
    ['{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}', refused(`Invalid Request: ${BOTH}.`)],
    [`{"jsonrpc":"2.0","id":7,${pad},"result":{},"error":{"code":1,"message":"m"}}`, refused(`Invalid Request: ${BOTH}.`)],
    ['{"jsonrpc":"2.0","id":7,"error":"x"}', refused(`Invalid Request: ${ERROR}.`)],
    [`{"jsonrpc":"2.0","id":7,${pad},"error":{"code":1.5,"message":"m"}}`, refused(`Invalid Request: ${ERROR}.`)],
    [`{"jsonrpc":"2.0","id":7,"error":{${pad},"c\u006fde":-32000,"message":5}}`, refused(`Invalid Request: ${ERROR}.`)],
    ['{"jsonrpc":"1.0","id":7,"result":{}}', refused('Invalid Request: "jsonrpc" must be "2.0".')],
    // Accepted: a Structured params, a well-formed response, initialize alone.
    ['{"jsonrpc":"2.0","id":5,"method":"ping","params":[]}', { ok: true, peek: { kind: 'request', id: 5, idText: undefined, method: 'ping', toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } }],
    [`{"jsonrpc":"2.0","id":7,${pad},"error":{"code":1e2,"message":"m","data":null}}`, { ok: true, peek: { kind: 'notification', id: 7, idText: undefined, method: undefined, toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } }],
    ['{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', { ok: true, peek: { kind: 'request', id: 0, idText: undefined, method: 'initialize', toolName: undefined, taskId: undefined, idWritten: undefined, cancelledRequestId: undefined } }],
    // Batches: the same rules for each element, and no initialize.
    [`[${call},{"jsonrpc":"2.0","method":"n","params":5}]`, refused(element(1, '"params" must be an object or an array'))],
    [`[{"jsonrpc":"2.0","method":"n",${pad},"params":"x"},${call}]`, refused(element(0, '"params" must be an object or an array'))],
    [`[${call},{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}]`, refused(element(1, BOTH))],
    [`[${call},${call},{"jsonrpc":"2.0","id":7,${pad},"error":"x"}]`, refused(element(2, ERROR))],
    [`[{"jsonrpc":"2.0","id":0,"method":"initialize"}]`, refused(INIT(0))],
    [`[${call},{"jsonrpc":"2.0","id":0,${pad},"method":"initialize","params":{}}]`, refused(INIT(1))],
    // The first refused element is named, whichever the rule.
    [`[{"jsonrpc":"2.0","id":0,"method":"initialize"},{"jsonrpc":"2.0","method":"n","params":5}]`, refused(INIT(0))],
    [`[{"jsonrpc":"2.0","method":"n","params":5},{"jsonrpc":"2.0","id":0,"method":"initialize"}]`, refused(element(0, '"params" must be an object or an array'))],
    [`[${call},{"jsonrpc":"2.0","id":7,${pad},"error":{"code":-32000,"message":"m"}},{"jsonrpc":"2.0","id":2,"method":"ping","params":[]}]`, batch],
  ] as const) {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    assert.deepEqual(peekJsonRpc(Buffer.from(body), BOUNDS), expected, body.slice(0, 120));
  }
});

// ---------------------------------------------------------------------------------------
// Batches: every element judged by the rules for one message

test('a tasks/result keeps its params.taskId, a string of at most MAX_TASK_ID_CHARS characters, in both readings (tasks-result-minted-error-drops-related-task)', () => {
  const taskIdOf = (body: string): string | undefined => {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    assert.ok(result.ok, body.slice(0, 80));
    return result.peek.taskId;
  };
  const call = (params: string, method = 'tasks/result') => `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`;
  const pad = `"_meta":{"pad":"${'p'.repeat(1200)}"}`;
  assert.equal(MAX_TASK_ID_CHARS, 1024);
  const cases: Array<[string, string | undefined]> = [
    [call('{"taskId":"t-1"}'), 't-1'],
    [call('{"task\\u0049d":"t-esc"}'), 't-esc'],
    [call('{"taskId":"t-1","taskId":"t-2"}'), 't-2'],
    [call('{"taskId":"a\\"b\\u00e9"}'), 'a"bé'],
    [call(`{"taskId":"${'k'.repeat(1024)}"}`), 'k'.repeat(1024)],
    [call(`{"taskId":"${'\\u00e9'.repeat(1024)}"}`), 'é'.repeat(1024)],
    [call(`{"taskId":"${'😀'.repeat(512)}"}`), '😀'.repeat(512)],
    [call(`{"taskId":"${'k'.repeat(1025)}"}`), undefined],
    [call(`{"taskId":"${'😀'.repeat(513)}"}`), undefined],
    [call('{"taskId":7}'), undefined],
    [call('{"taskId":null}'), undefined],
    [call('{"taskId":["t"]}'), undefined],
    [call('["t-1"]'), undefined],
    [call('{}'), undefined],
    // Another method: never read.
    [call('{"taskId":"t-1"}', 'tasks/get'), undefined],
    [call('{"taskId":"t-1","name":"x"}', 'tools/call'), undefined],
    // Over 1 KiB: the scan reads params.
    [call(`{${pad},"taskId":"t-big"}`), 't-big'],
    [call(`{"task\\u0049d":"t-big-esc",${pad}}`), 't-big-esc'],
    [call(`{${pad},"taskId":"${'k'.repeat(1025)}"}`), undefined],
  ];
  for (const [body, expected] of cases) assert.equal(taskIdOf(body), expected, body.slice(0, 100));
  // A notification too (the same facts), and the peek's shape is the same for every kind.
  const note = peekJsonRpc(Buffer.from('{"jsonrpc":"2.0","method":"tasks/result","params":{"taskId":"t-n"}}'), BOUNDS);
  assert.ok(note.ok);
  assert.equal(note.peek.taskId, 't-n');
  const keys = (body: string) => {
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    assert.ok(result.ok);
    return Object.keys(result.peek).slice(0, 6);
  };
  const shape = ['kind', 'id', 'idText', 'method', 'toolName', 'taskId'];
  for (const body of [call('{"taskId":"t"}'), '{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"result":{}}', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]']) assert.deepEqual(keys(body), shape, body);
  // A single message's and NO_BODY write idWritten and cancelledRequestId too (test/regressions/rpc-peek-shapes-differ.test.ts).
  assert.deepEqual(Object.keys(NO_BODY), [...shape, 'idWritten', 'cancelledRequestId']);
});

test('a batch names its first element that is no JSON-RPC message, in both readings', () => {
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}';
  const refused = (message: string) => ({ ok: false, kind: 'invalid_request', message, id: null, idText: undefined });
  const pad = (n: number) => `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"a":"${'p'.repeat(n)}"}}}`;
  for (const [body, expected] of [
    [`[1,${call}]`, refused('Invalid Request: batch element 0 is not a JSON-RPC message (a number, not an object).')],
    [`[[${call}]]`, refused('Invalid Request: batch element 0 is not a JSON-RPC message (an array, not an object).')],
    [`[${call},{"a":1}]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message ("jsonrpc" must be "2.0").')],
    [`[${call},{"jsonrpc":"2.0","id":[],"method":"x"}]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message ("id" must be a string, a number or null).')],
    [`[${call},{"jsonrpc":"2.0","id":1e400,"method":"x"}]`, refused(`Invalid Request: batch element 1 is not a JSON-RPC message (${ID_RANGE}).`)],
    [`[${call},${call},{"jsonrpc":"2.0"}]`, refused('Invalid Request: batch element 2 is not a JSON-RPC message ("method" must be a string).')],
    [`[${call},null]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message (null, not an object).')],
    // Over 1 KiB: the body and its large element read by the scan.
    [`[${pad(2000)}, ${pad(10)} ,"]"]`, refused('Invalid Request: batch element 2 is not a JSON-RPC message (a string, not an object).')],
    [`[${pad(2000)},{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","method":"n"}]`, { ok: true, peek: { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, taskId: undefined, batchRequestIds: [{ id: 9, idText: undefined, form: 'tool_result_may_have_run' }], batchToolNames: ['t'], batchMessages: 3 } }],
  ] as const) {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    assert.deepEqual(peekJsonRpc(Buffer.from(body), BOUNDS), expected, body.slice(0, 80));
  }
});

test('a batch keeps the ids of its requests, exactly, in both readings (sse-batch-answer-never-ends-cleanly)', () => {
  const ids = (body: string) => {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    assert.ok(result.ok && result.peek.kind === 'batch', body.slice(0, 80));
    return result.peek.batchRequestIds;
  };
  const big = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"t","arguments":{"a":"${'p'.repeat(1200)}"}}}`;
  const note = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
  const response = '{"jsonrpc":"2.0","id":5,"result":{}}';
  // Each batch as it is (parsed), then with a large request appended (the body over 1 KiB: scanned).
  for (const padded of [false, true]) {
    const wrap = (batch: string) => (padded ? `${batch.slice(0, -1)},${big('"pad"')}]` : batch);
    const tail = padded ? [{ id: 'pad', idText: undefined, form: 'tool_result_may_have_run' }] : [];
    assert.deepEqual(ids(wrap('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]')), [{ id: 1, idText: undefined, form: 'rpc_error' }, { id: 2, idText: undefined, form: 'rpc_error' }, ...tail]);
    // Notifications and responses are no requests; id 0 is one (id null is refused: trial 14, L1); duplicates kept, in order.
    assert.deepEqual(ids(wrap(`[${note},${response},{"jsonrpc":"2.0","id":0,"method":"p"},{"jsonrpc":"2.0","id":"a","method":"p"},{"jsonrpc":"2.0","id":"a","method":"p"}]`)), [
      { id: 0, idText: undefined, form: 'rpc_error' },
      { id: 'a', idText: undefined, form: 'rpc_error' },
      { id: 'a', idText: undefined, form: 'rpc_error' },
      ...tail,
    ]);
    assert.deepEqual(ids(wrap(`[${note},${response}]`)), tail);
    // Numbers JSON.stringify writes otherwise keep their text: a double changes some, others
    // are only spelled another way (1.0, 1e0, -0: a hostile new-user trial 13, L2); 1 and 0.5 are JSON.stringify's.
    assert.deepEqual(ids(wrap('[{"jsonrpc":"2.0","id":9007199254740993,"method":"p"},{"jsonrpc":"2.0","id":1.0,"method":"p"},{"jsonrpc":"2.0","\\u0069d":1e0,"method":"p"},{"jsonrpc":"2.0","id":0.10000000000000000001,"method":"p"},{"jsonrpc":"2.0","id":-0,"method":"p"},{"jsonrpc":"2.0","id":1,"method":"p"},{"jsonrpc":"2.0","id":0.5,"method":"p"}]')), [
      { id: 9007199254740992, idText: '9007199254740993', form: 'rpc_error' },
      { id: 1, idText: '1.0', form: 'rpc_error' },
      { id: 1, idText: '1e0', form: 'rpc_error' },
      { id: 0.1, idText: '0.10000000000000000001', form: 'rpc_error' },
      { id: -0, idText: '-0', form: 'rpc_error' },
      { id: 1, idText: undefined, form: 'rpc_error' },
      { id: 0.5, idText: undefined, form: 'rpc_error' },
      ...tail,
    ]);
  }
  // Large elements (scanned), their ids' texts read from their own bytes.
  assert.deepEqual(ids(`[${big('12345678901234567890123')},${note},${big('"x"')},${big('7')}]`), [
    { id: Number('12345678901234567890123'), idText: '12345678901234567890123', form: 'tool_result_may_have_run' },
    { id: 'x', idText: undefined, form: 'tool_result_may_have_run' },
    { id: 7, idText: undefined, form: 'tool_result_may_have_run' },
  ]);
  // Single messages carry no such field.
  const single = peekJsonRpc(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}'), BOUNDS);
  assert.ok(single.ok && !('batchRequestIds' in single.peek));
});

test('a batch keeps each request\'s tool name, in order, in both readings (batch-escapes-tool-limits, batch-notification-tightens-tool-limits)', () => {
  const tools = (body: string) => {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    assert.ok(result.ok && result.peek.kind === 'batch', body.slice(0, 80));
    return result.peek.batchToolNames;
  };
  const call = (name: string, extra = '') => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{${extra}"name":${name}}}`;
  const big = (name: string) => call(name, `"arguments":{"a":"${'p'.repeat(1200)}"},`);
  const note = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
  // One entry per request: a tools/call has its tool; another request, or a name that is no
  // string, none. A notification (a tools/call one included) or a response has no entry: the
  // seller does not answer it, so it takes no part in the batch's limits.
  assert.deepEqual(tools(`[${call('"a"')},${note},{"jsonrpc":"2.0","id":5,"result":{}},${call('7')},{"jsonrpc":"2.0","method":"tools/call","params":{"name":"b"}},${call('"a"')}]`), ['a', undefined, 'a']);
  // Large elements (scanned): the name read from the element's params, escapes decoded (a
  // name written twice is refused: host-repeated-member-names-bypass-tool-limit).
  assert.deepEqual(tools(`[${big('"x"')},${note},${big('"\\u0079"')},${call('"z"', '"title":"w",')}]`), ['x', 'y', 'z']);
  assert.deepEqual(tools(`[${note},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"name":"n"}}]`), [undefined]);
  assert.deepEqual(tools(`[${note},{"jsonrpc":"2.0","method":"tools/call","params":{"name":"b"}},{"jsonrpc":"2.0","id":5,"result":{}}]`), []);
  // Single messages carry no such field.
  const single = peekJsonRpc(Buffer.from(call('"a"')), BOUNDS);
  assert.ok(single.ok && !('batchToolNames' in single.peek));
});

test('a batch keeps beside each request id the form of its error, from its method and tool name, in both readings (batch-error-loses-tool-warning)', () => {
  const forms = (body: string) => {
    assert.ok(same(body), `the scan decides ${body.slice(0, 80)}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    assert.ok(result.ok && result.peek.kind === 'batch', body.slice(0, 80));
    return result.peek.batchRequestIds?.map((ref) => ref.form);
  };
  const call = (id: number, params: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`;
  const pad = `"arguments":{"a":"${'p'.repeat(1200)}"}`;
  const note = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"create_media_buy"}}';
  // A read-only tool (get_, list_, search_, preview_, check_): a tool result; any other tool,
  // one with no name or a name that is no string, or tasks/result: one that may have run; any
  // other method: a JSON-RPC error. A notification has none (no entry at all).
  const batch = `[${call(1, '{"name":"get_products"}')},${note},${call(2, '{"name":"create_media_buy"}')},{"jsonrpc":"2.0","id":3,"method":"ping"},${call(4, '{"name":7}')},${call(5, '[]')},{"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":"t"}},${call(7, '{"name":"check_\\u0073tatus"}')},{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"name":"get_x"}}]`;
  const expected = ['tool_result', 'tool_result_may_have_run', 'rpc_error', 'tool_result_may_have_run', 'tool_result_may_have_run', 'tool_result_may_have_run', 'tool_result', 'rpc_error'];
  assert.deepEqual(forms(batch), expected);
  // Large elements (scanned): the same forms, the name read from the element's bytes.
  assert.deepEqual(forms(`[${call(1, `{${pad},"name":"list_x"}`)},${call(2, `{${pad},"name":"update_x"}`)},${call(3, `{"title":"sync_x",${pad},"name":"search_\\u0078"}`)}]`), ['tool_result', 'tool_result_may_have_run', 'tool_result']);
});

test('random batches, small and large elements: the scan reading equals the parse reading', () => {
  const r = rng(0xba7c4);
  const others = ['1', '-0.5', 'null', 'true', 'false', '"x"', '"]"', '[]', '[{"jsonrpc":"2.0","id":1,"method":"p"}]', '{}'];
  const counts = { accepted: 0, refusedLater: 0, largeElements: 0, initialize: 0, params: 0, response: 0 };
  for (let i = 0; i < 1500; i++) {
    const elements: string[] = [];
    for (let n = 1 + Math.floor(r() * 5); n > 0; n--) {
      const k = r();
      if (k < 0.08) elements.push(others[Math.floor(r() * others.length)]!);
      else {
        let m = message(r).replace(/^\[(.*)\]$/s, '$1');
        if (m.length > 2 && r() < 0.25) {
          // Over PEEK_SCAN_MIN_BYTES: a large member first (the element is scanned), or many small ones (more than the scan records).
          m = r() < 0.7 ? `{"pad":"${'q'.repeat(1100)}",${m.slice(1)}` : `{${Array.from({ length: 70 }, (_, j) => `"k${j}":"${'w'.repeat(20)}"`).join(',')},${m.slice(1)}`;
          counts.largeElements++;
        }
        elements.push(m);
      }
    }
    const body = `[${elements.join(r() < 0.3 ? ' ,\n ' : ',')}]`;
    same(body, BOUNDS, `#${i} ${body.slice(0, 300)}`);
    const result = peekJsonRpc(Buffer.from(body), BOUNDS);
    if (result.ok) counts.accepted++;
    else {
      if (/batch element [1-9]/.test(result.message)) counts.refusedLater++;
      if (result.message.includes('"initialize"')) counts.initialize++;
      else if (result.message.includes('"params"')) counts.params++;
      else if (/not both|"error" must/.test(result.message)) counts.response++;
    }
  }
  assert.ok(counts.accepted > 50 && counts.refusedLater > 50 && counts.largeElements > 300, JSON.stringify(counts));
  assert.ok(counts.initialize > 20 && counts.params > 20 && counts.response > 20, JSON.stringify(counts));
});
