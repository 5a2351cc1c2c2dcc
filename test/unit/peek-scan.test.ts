/**
 * The request peek's two readings (src/request/peek.ts): the scan (the structure scan's member
 * table, the usual reading) gives exactly what the parse (`JSON.parse` of the whole body, the
 * reference) gives, for every body: each outcome and edge by hand, then seeded random
 * JSON-RPC bodies and byte mutations of them. Also that the scan reading is the one taken
 * where it can decide (else a regression to the parse would pass unnoticed).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekByParse, peekByScan, peekJsonRpc } from '../../src/request/peek.js';
import { JsonScanner, scanJson, scanTopMembers } from '../../src/mcp/json-scan.js';
import { rng } from '../helpers/json-fuzz.js';

const BOUNDS = { maxDepth: 64, maxNodes: 100_000 };

/** The scan reading, when it decides, equals the parse reading; so does peekJsonRpc. Returns whether the scan decided. */
function same(body: Buffer | string, bounds: { maxDepth: number; maxNodes: number } | undefined = BOUNDS, label?: string): boolean {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const reference = peekByParse(bytes, bounds);
  const byScan = peekByScan(bytes, bounds);
  const name = label ?? bytes.toString('latin1').slice(0, 200);
  if (byScan !== undefined) assert.deepEqual(byScan, reference, name);
  assert.deepEqual(peekJsonRpc(bytes, bounds), reference, name);
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

test('more members than the scan records: the parse decides, the same way', () => {
  const many = (n: number, at: number) => {
    const members = Array.from({ length: n }, (_, k) => `"k${k}":${k}`);
    members.splice(at, 0, '"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}');
    return `{${members.join(',')}}`;
  };
  for (const n of [60, 61, 62, 63, 64, 65, 200]) for (const at of [0, n]) same(many(n, at));
  const manyParams = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{${Array.from({ length: 100 }, (_, k) => `"a${k}":1`).join(',')},"name":"last"}}`;
  same(manyParams);
  assert.deepEqual(peekJsonRpc(Buffer.from(manyParams), BOUNDS), { ok: true, peek: { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'last' } });
});

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
  assert.deepEqual(peekByScan(body, BOUNDS), { ok: true, peek: { kind: 'request', id: 1, idText: undefined, method: 'tools/call', toolName: 'get_products' } });
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
    peek: { kind: 'request', id: 'x', idText: undefined, method: 'ping', toolName: undefined },
  });
  // Left to the parse: not JSON, over a bound, more members than the scan records.
  assert.equal(peekByScan(Buffer.from('{"jsonrpc":"2.0",'), BOUNDS), undefined);
  assert.equal(peekByScan(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","p":[[[]]]}'), { maxDepth: 2, maxNodes: 100 }), undefined);
  const wide = `{${Array.from({ length: 65 }, (_, k) => `"k${k}":${k}`).join(',')}}`;
  assert.equal(peekByScan(Buffer.from(wide), BOUNDS), undefined);
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

const KEYS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error', 'name', 'x', '\\u0069d', 'meth\\u006fd', 'na\\u006de'];
const STRINGS = ['2.0', '1.0', 'tools/call', 'tools/list', 'ping', '', 'get_products', 'a\\"b', '\\u0032.0', 'tools\\/call', 'é', '😀'];

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

function message(r: () => number): string {
  const parts: string[] = [];
  if (r() < 0.9) parts.push(`"jsonrpc":${r() < 0.85 ? '"2.0"' : value(r, 2)}`);
  if (r() < 0.8) parts.push(`"id":${value(r, 3)}`);
  if (r() < 0.85) parts.push(`"method":${r() < 0.6 ? '"tools/call"' : value(r, 3)}`);
  if (r() < 0.8) parts.push(`"params":${r() < 0.7 ? `{"name":${value(r, 3)},"arguments":${object(r, 1)}}` : value(r, 1)}`);
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
  for (let i = 0; i < n; i++) {
    const body = message(r);
    if (same(body, BOUNDS, `#${i} ${body}`)) decided++;
    if (i % 10 === 0) same(body, { maxDepth: 3, maxNodes: 12 }, `#${i} tight ${body}`);
  }
  // Most of them without the parse (the rest have an escaped key somewhere at the top).
  assert.ok(decided > n / 2, `the scan decided ${decided} of ${n}`);
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
// Batches: every element judged by the rules for one message

test('a batch names its first element that is no JSON-RPC message, in both readings', () => {
  const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}';
  const refused = (message: string) => ({ ok: false, kind: 'invalid_request', message, id: null, idText: undefined });
  const pad = (n: number) => `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","arguments":{"a":"${'p'.repeat(n)}"}}}`;
  for (const [body, expected] of [
    [`[1,${call}]`, refused('Invalid Request: batch element 0 is not a JSON-RPC message (a number, not an object).')],
    [`[[${call}]]`, refused('Invalid Request: batch element 0 is not a JSON-RPC message (an array, not an object).')],
    [`[${call},{"a":1}]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message ("jsonrpc" must be "2.0").')],
    [`[${call},{"jsonrpc":"2.0","id":[],"method":"x"}]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message ("id" must be a string, a number or null).')],
    [`[${call},${call},{"jsonrpc":"2.0"}]`, refused('Invalid Request: batch element 2 is not a JSON-RPC message ("method" must be a string).')],
    [`[${call},null]`, refused('Invalid Request: batch element 1 is not a JSON-RPC message (null, not an object).')],
    // Over 1 KiB: the body and its large element read by the scan.
    [`[${pad(2000)}, ${pad(10)} ,"]"]`, refused('Invalid Request: batch element 2 is not a JSON-RPC message (a string, not an object).')],
    [`[${pad(2000)},{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","method":"n"}]`, { ok: true, peek: { kind: 'batch', id: null, idText: undefined, method: undefined, toolName: undefined, batchRequestIds: [{ id: 9, idText: undefined }] } }],
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
    const tail = padded ? [{ id: 'pad', idText: undefined }] : [];
    assert.deepEqual(ids(wrap('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]')), [{ id: 1, idText: undefined }, { id: 2, idText: undefined }, ...tail]);
    // Notifications and responses are no requests; id null is one; duplicates kept, in order.
    assert.deepEqual(ids(wrap(`[${note},${response},{"jsonrpc":"2.0","id":null,"method":"p"},{"jsonrpc":"2.0","id":"a","method":"p"},{"jsonrpc":"2.0","id":"a","method":"p"}]`)), [
      { id: null, idText: undefined },
      { id: 'a', idText: undefined },
      { id: 'a', idText: undefined },
      ...tail,
    ]);
    assert.deepEqual(ids(wrap(`[${note},${response}]`)), tail);
    // Numbers a double changes keep their text; 1.0 and 1e0 are the 1 JSON.stringify writes.
    assert.deepEqual(ids(wrap('[{"jsonrpc":"2.0","id":9007199254740993,"method":"p"},{"jsonrpc":"2.0","id":1.0,"method":"p"},{"jsonrpc":"2.0","\\u0069d":1e0,"method":"p"},{"jsonrpc":"2.0","id":0.10000000000000000001,"method":"p"}]')), [
      { id: 9007199254740992, idText: '9007199254740993' },
      { id: 1, idText: undefined },
      { id: 1, idText: undefined },
      { id: 0.1, idText: '0.10000000000000000001' },
      ...tail,
    ]);
  }
  // Large elements (scanned), their ids' texts read from their own bytes.
  assert.deepEqual(ids(`[${big('12345678901234567890123')},${note},${big('"x"')},${big('7')}]`), [
    { id: Number('12345678901234567890123'), idText: '12345678901234567890123' },
    { id: 'x', idText: undefined },
    { id: 7, idText: undefined },
  ]);
  // Single messages carry no such field.
  const single = peekJsonRpc(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}'), BOUNDS);
  assert.ok(single.ok && !('batchRequestIds' in single.peek));
});

test('random batches, small and large elements: the scan reading equals the parse reading', () => {
  const r = rng(0xba7c4);
  const others = ['1', '-0.5', 'null', 'true', 'false', '"x"', '"]"', '[]', '[{"jsonrpc":"2.0","id":1,"method":"p"}]', '{}'];
  const counts = { accepted: 0, refusedLater: 0, largeElements: 0 };
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
    else if (/batch element [1-9]/.test(result.message)) counts.refusedLater++;
  }
  assert.ok(counts.accepted > 50 && counts.refusedLater > 50 && counts.largeElements > 300, JSON.stringify(counts));
});
