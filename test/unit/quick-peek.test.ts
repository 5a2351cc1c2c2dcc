/**
 * request/peek.ts quickPeek: whenever it answers, its answer is exactly what the usual path
 * gives (checkJsonBounds passes, then peekJsonRpc), for every request shape: escapes,
 * duplicate keys, batches, odd ids, bounds, invalid JSON. It must also answer the usual
 * requests (else the handler never saves the parse).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peekJsonRpc, quickPeek, type PeekResult } from '../../src/request/peek.js';
import { checkJsonBounds } from '../../src/mcp/json-bounds.js';

/** The usual path's answer, or 'bounds' when the bounds refuse the body first. */
function usual(body: Buffer, maxDepth: number, maxNodes: number): PeekResult | 'bounds' {
  return checkJsonBounds(body, { maxDepth, maxNodes }).ok ? peekJsonRpc(body) : 'bounds';
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.join() === kb.join() && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function check(text: string | Buffer, maxDepth = 64, maxNodes = 10_000): PeekResult | undefined {
  const body = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const quick = quickPeek(body, maxDepth, maxNodes);
  if (quick !== undefined) {
    const expected = usual(body, maxDepth, maxNodes);
    assert.ok(same(quick, expected), `${body.toString('latin1')}: quick ${JSON.stringify(quick)} usual ${JSON.stringify(expected)}`);
  }
  return quick;
}

const USUAL = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"CTV inventory"},"_meta":{"progressToken":"bench-1"}}}',
  '{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  ' \t\r\n{ "jsonrpc" : "2.0" , "id" : 7 , "method" : "initialize" , "params" : { } } \n',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}',
];

test('quickPeek answers the usual requests, as the usual path does', () => {
  for (const text of USUAL) assert.notEqual(check(text), undefined, text);
  const r = check(USUAL[0]!);
  assert.deepEqual(r, { ok: true, peek: { kind: 'request', id: 1, method: 'tools/call', toolName: 'get_products' } });
});

test('quickPeek = usual path on every shape it answers', () => {
  const ids = ['1', '-0', '0', '1.5e3', '1e400', '-1E-2', '"x"', '"\\u0041\\n"', '"é"', 'null', 'true', 'false', '{}', '[]', '{"a":1}', '[1]', '"\\ud800"'];
  const methods = ['"tools/call"', '"tools\\/call"', '"x"', '1', 'null', '{}', '[]', '"\\u0074ools/call"'];
  const params = ['{"name":"t"}', '{"name":"t","name":"u"}', '{"name":1}', '{"na\\u006de":"t"}', '{"x":{"name":"no"}}', '[]', '["t"]', 'null', '"t"', '{}', '{"name":"a\\"b"}', '{"name":"é\\u00e9"}'];
  const jsonrpcs = ['"2.0"', '"2.00"', '2.0', '"2\\u002e0"', 'null'];
  let answered = 0;
  for (const id of ids) for (const method of methods) for (const p of params) for (const jr of jsonrpcs) {
    const bodies = [
      `{"jsonrpc":${jr},"id":${id},"method":${method},"params":${p}}`,
      `{"params":${p},"method":${method},"id":${id},"jsonrpc":${jr}}`,
      `{"jsonrpc":${jr},"id":${id},"method":${method},"params":${p},"params":{"name":"last"},"id":2}`,
      `{"jsonrpc":${jr},"method":${method},"params":${p},"x":["name",{"name":"n"}]}`,
    ];
    for (const b of bodies) if (check(b) !== undefined) answered++;
  }
  assert.ok(answered > 1000, `answered ${answered}`);
});

test('quickPeek: keys, responses, batches, scalars, escapes', () => {
  const cases = [
    '{"jsonrpc":"2.0","id":1,"result":null}',
    '{"jsonrpc":"2.0","id":1,"result":1,"method":"m"}',
    '{"jsonrpc":"2.0","error":{}}',
    '{"jsonrpc":"2.0"}',
    '{}',
    '{"\\u0069d":1,"jsonrpc":"2.0","method":"m"}',
    '{"jsonrpc":"2.0","method":"m","params":{"n\\u0061me":"t"}}',
    '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","deep":{"name":"u"}}}',
    '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"},"params":[]}',
    '{"jsonrpc":"2.0","method":"tools/call","params":[],"params":{"a":1}}',
    '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"},"params":{}}',
    '{"__proto__":1,"jsonrpc":"2.0","method":"m","id":1}',
    '{"jsonrpc":"2.0","method":"m","id":1,"k":"\u0000"}',
    '[]',
    '[{"jsonrpc":"2.0","method":"m"}]',
    '"x"',
    '1',
    'null',
  ];
  for (const c of cases) check(c);
  // Escaped tracked keys and non-objects are left to the usual path.
  assert.equal(check('{"\\u0069d":1,"jsonrpc":"2.0","method":"m"}'), undefined);
  assert.equal(check('[{"jsonrpc":"2.0","method":"m"}]'), undefined);
  // An escaped key elsewhere is fine.
  assert.deepEqual(check('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"\\u0041":1}}}'), { ok: true, peek: { kind: 'request', id: 1, method: 'm', toolName: undefined } });
});

test('quickPeek leaves invalid JSON and bounds to the usual path (their order matters)', () => {
  const invalid = [
    '', ' ', '{', '{"jsonrpc":"2.0",}', '{"a" 1}', '{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":-}', '{"a":1e}', '{"a":+1}', '{"a":tru}', '{"a":nul}',
    '{"a":"\\x"}', '{"a":"\\u12"}', '{"a":"\t"}', '{"a":1}x', '{"a":1}}', '{"a":[1,]}', '{"a":[1 2]}', '{"a":{"b"}}', '{"a":1,}', '\ufeff{"a":1}',
    '{"a":"x"', '{"a":[}', '{"a":]}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":1}\u00a0',
  ];
  for (const text of invalid) {
    assert.equal(quickPeek(Buffer.from(text, 'utf8'), 64, 10_000), undefined, text);
    assert.equal(peekJsonRpc(Buffer.from(text, 'utf8')).ok, false, text);
  }
  // Invalid UTF-8 inside a string is valid JSON text (decoded to U+FFFD); outside one it is not.
  check(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"'), Buffer.from([0xc3, 0xff, 0xe2, 0x82]), Buffer.from('","method":"m"}')]));
  assert.equal(quickPeek(Buffer.concat([Buffer.from('{"a":1'), Buffer.from([0xc3, 0xa9]), Buffer.from('}')]), 64, 100), undefined);
  // Bounds: over either one, the usual path reports it (or the parse error it finds first).
  const body = '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[[1,2]]]}}';
  assert.notEqual(check(body, 5, 10), undefined); // depth 5, 10 nodes
  assert.equal(check(body, 4, 10), undefined);
  assert.equal(check(body, 5, 9), undefined);
  assert.equal(quickPeek(Buffer.from('['.repeat(100)), 64, 1000), undefined);
  assert.equal(quickPeek(Buffer.from(`{"a":${'['.repeat(70)}${']'.repeat(70)}}`), Infinity, Infinity), undefined);
  check(`{"a":${'['.repeat(60)}${']'.repeat(60)},"jsonrpc":"2.0","method":"m"}`, Infinity, Infinity);
});

test('quickPeek: strings it has read before (same slot, other bytes, invalid UTF-8) read exactly', () => {
  const body = (method: Buffer): Buffer =>
    Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":3,"method":"'), method, Buffer.from('","params":{"name":"'), method, Buffer.from('"}}')]);
  const methods = [Buffer.from('tAAAAl'), Buffer.from('tBBBBl'), Buffer.from([0x74, 0xff, 0x41, 0x41, 0x41, 0x6c]), Buffer.from('tAAAAl'), Buffer.from([0x74, 0xc3, 0xa9, 0x41, 0x6c]), Buffer.from('t\u00e9Al'), Buffer.from('tBBBBl')];
  for (const m of methods) {
    const r = check(body(m));
    assert.ok(r?.ok, m.toString('latin1'));
    assert.equal(r.peek.method, JSON.parse(`"${m.toString('utf8')}"`));
    assert.equal(r.peek.toolName, undefined);
  }
  const call = check('{"jsonrpc":"2.0","id":-12,"method":"tools/call","params":{"name":"tools/call"}}');
  assert.deepEqual(call, { ok: true, peek: { kind: 'request', id: -12, method: 'tools/call', toolName: 'tools/call' } });
});

test('quickPeek on random mutations of usual requests = usual path', () => {
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const alphabet = Buffer.from('{}[]":,\\ 0123456789.-+eEtrufalsn\t\nabcdu\u00e9');
  for (let round = 0; round < 20_000; round++) {
    const base = Buffer.from(USUAL[rand(USUAL.length)]!, 'utf8');
    const edits = 1 + rand(3);
    let b = base;
    for (let e = 0; e < edits; e++) {
      const at = rand(b.length + 1);
      const op = rand(3);
      const byte = Buffer.from([alphabet[rand(alphabet.length)]!]);
      b = op === 0 ? Buffer.concat([b.subarray(0, at), byte, b.subarray(at)]) : op === 1 ? Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]) : Buffer.concat([b.subarray(0, at), byte, b.subarray(at + 1)]);
    }
    check(b, 1 + rand(6), 1 + rand(30));
    check(b);
  }
});
